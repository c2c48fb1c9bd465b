"""Deterministic compaction: one-line tool digests, structure-aware cuts, fallback summaries.

Everything here is pure: the same input gives byte-identical output, because providers cache
the request prefix and a digest that changed between requests would break that cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from .json_text import compact_json
from .tool_registry import get_tool
from .tool_spec import ToolSpec
from .ui_messages import AWAITING, DENIED, INPUT_INCOMPLETE, NOT_RUN, tool_result_text

DIGEST_PREFIX = "[digest] "
_RECALL = " (recall: "
_RECALL_CUT = len(_RECALL) - 1  # " (recall:" | " <id>)"
LINE_MAX = 200
RECALL_HINT = "call recallToolResult for the full text"

_NOT_RUN = {NOT_RUN: "not run", INPUT_INCOMPLETE: "not run", AWAITING: "not run", DENIED: "denied"}
_QUOTED_ARGS = frozenset({"query", "name", "title"})
_ARG_PREFIX = {"nodeId": "node ", "nodeIds": "nodes "}
_BARE = re.compile(r"[\w.\-/:]+")
_CHANGE_KEYS = ("created", "updated", "added", "removed", "deleted")
_LIST_KEYS = ("nodes", "links", "groups", "results", "models", "skills", "inputs", "outputs")
_NAMED_LISTS = frozenset({"results", "models", "skills"})
_NAME_FIELDS = ("type", "slug", "name", "filename", "id", "title")
_FILE_LISTS = frozenset({"images", "files", "gifs", "videos", "audio"})
_FILE_KEYS = frozenset({"filename", "file"})


_INVALID: Any = object()


def _loads(text: str, default: Any = None) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return default


def _one_line(text: str, limit: int) -> str:
    if (  # already one line (the common case): printable text has no whitespace but " "
        len(text) <= limit
        and text.isprintable()
        and "  " not in text
        and text[:1] != " "
        and text[-1:] != " "
    ):
        return text
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def _show(value: Any, quote: bool = False) -> str:
    """A short, single-line rendering of an argument or result value."""
    if type(value) is int:  # ids and counts: the most common value, and the cheapest
        text = str(value)
        return text if len(text) <= 40 else _one_line(text, 40)
    if isinstance(value, str):
        return _show_text(value, quote)
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ",".join(_show(v) for v in value[:6]) + (",…" if len(value) > 6 else "")
    return _one_line(compact_json(value), 40)


@lru_cache(maxsize=4096)
def _show_text(value: str, quote: bool) -> str:
    """(node types, slot names, queries: a digest shows the same few again and again)"""
    text = _one_line(value, 40)
    return compact_json(text) if quote or not _BARE.fullmatch(text) else text


def _parse_args(arguments: str | dict[str, Any]) -> dict[str, Any]:
    value = arguments if isinstance(arguments, dict) else _loads(arguments)
    return value if isinstance(value, dict) else {}


def _key_args(name: str, args: dict[str, Any], spec: ToolSpec | None) -> str:
    if spec is None:  # unknown tool: its first two scalar arguments
        scalars = [(k, v) for k, v in args.items() if not isinstance(v, (dict, list))][:2]
        return " ".join(f"{k}={_show(v)}" for k, v in scalars)
    keys = spec.digest_args
    if spec.digest_format is not None and all(k in args for k in keys):
        return spec.digest_format.format(*(_show(args[k]) for k in keys))
    return " ".join(
        [_ARG_PREFIX.get(k, "") + _show(args[k], k in _QUOTED_ARGS) for k in keys if k in args]
    )


def _error_of(result: dict[str, Any]) -> str | None:
    err = result.get("error") or result.get("errorText")
    if not err and result.get("ok") is not False and result.get("success") is not False:
        return None
    if isinstance(err, dict):
        err = err.get("message") or compact_json(err)
    if not isinstance(err, str):
        err = result.get("message") or "failed"
    return _one_line(str(err), 100)


def _item_name(item: Any) -> str | None:
    if isinstance(item, dict):
        for field in _NAME_FIELDS:  # the first of these that holds a string or a number
            value = item.get(field)
            if isinstance(value, (str, int)):
                item = value
                break
        else:
            return None
    return _one_line(str(item), 40) if isinstance(item, (str, int)) else None


def _count(key: str, items: list[Any]) -> str:
    text = f"{len(items)} {key if len(items) != 1 else key[:-1]}"
    names = [n for n in map(_item_name, items[:3]) if n] if key in _NAMED_LISTS else []
    if names:
        text += ": " + ", ".join(names) + (", …" if len(items) > len(names) else "")
    return text


def _files(value: dict[str, Any] | list[Any], found: dict[str, None], depth: int = 0) -> None:
    """File names in a result (`filename` fields, `images` lists), in order of appearance.
    Only containers are descended into (a workflow result holds thousands of scalars)."""
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        if isinstance(item, str):
            if item and key in _FILE_KEYS:
                found[item] = None
        elif isinstance(item, list):
            if key in _FILE_LISTS:
                found.update((i, None) for i in item if isinstance(i, str) and i)
            if depth < 6 and any(isinstance(i, (dict, list)) for i in item):
                _files(item, found, depth + 1)
        elif isinstance(item, dict) and depth < 6:
            _files(item, found, depth + 1)


# What a result key says in a digest (keys repeat from result to result: classified once).
_OTHER, _NODE_IDS, _NODE_ID, _ID, _OTHER_ID = range(5)
_CHANGE, _LIST = 10, 20  # + the key's place in _CHANGE_KEYS / _LIST_KEYS: the order shown
_KEY_KINDS: dict[Any, int] = {}


def _key_kind(key: Any) -> int:
    kind = _KEY_KINDS.get(key)
    if kind is None:
        if key in _CHANGE_KEYS:
            kind = _CHANGE + _CHANGE_KEYS.index(key)
        elif key in _LIST_KEYS:
            kind = _LIST + _LIST_KEYS.index(key)
        else:
            kind = {"nodeIds": _NODE_IDS, "nodeId": _NODE_ID, "id": _ID}.get(key, _OTHER)
            if not kind and isinstance(key, str) and key.endswith("Id") and len(key) > 2:
                kind = _OTHER_ID
        if len(_KEY_KINDS) < 4096:
            _KEY_KINDS[key] = kind
    return kind


def _dict_outcome(
    name: str, result: dict[str, Any], spec: ToolSpec | None, raw: str = ""
) -> list[str]:
    """Ids first (in the result's order), then changes, then list counts (in their lists'
    order), then file names; else the message, or "ok"."""
    err = _error_of(result)
    if err is not None:
        return [f"error: {err}"]
    parts: list[str] = []
    changes: list[tuple[int, str, Any]] = []
    lists: list[tuple[int, str, list[Any]]] = []
    kinds = _KEY_KINDS
    for key, value in result.items():  # one pass: most keys say nothing, known by one lookup
        kind = kinds.get(key)
        if kind is None:
            kind = _key_kind(key)
        if not kind:
            continue
        if kind >= _LIST:
            if isinstance(value, list):
                lists.append((kind, key, value))
        elif kind >= _CHANGE:
            changes.append((kind, key, value))
        elif kind == _NODE_IDS:
            if isinstance(value, list):
                parts.append(f"nodes {_show(value)}")
        elif value is None or isinstance(value, (dict, list, bool)):
            continue
        elif kind == _NODE_ID:
            parts.append(f"node {_show(value)}")
        elif kind == _ID:
            parts.append(f"{'node' if 'Node' in name else 'id'} {_show(value)}")
        else:
            parts.append(f"{key[:-2]} {_show(value)}")
    for _, key, value in sorted(changes) if len(changes) > 1 else changes:
        if isinstance(value, list):
            parts.append(f"{key} {len(value)}")
        elif value not in (None, False, "", {}):
            parts.append(f"{key} {_item_name(value) or _show(value)}")
    for _, key, items in sorted(lists) if len(lists) > 1 else lists:
        parts.append(_count(key, items))
    files: dict[str, None] = {}
    if (spec is None or spec.digest_files) and (
        not raw or any(f'"{key}"' in raw for key in (*_FILE_KEYS, *_FILE_LISTS))
    ):
        _files(result, files)  # a walk of the whole result: only when a file key may be in it
    if files:
        shown = ", ".join(_one_line(f, 60) for f in list(files)[:3])
        parts.append(f"files: {shown}" + (f", +{len(files) - 3} more" if len(files) > 3 else ""))
    if parts:
        return parts
    message = result.get("message")
    if isinstance(message, str) and message.strip():
        parts.append(_one_line(message, 80))
    elif result.get("ok") is True or result.get("success") is True:
        parts.append("ok")
    return parts


def _outcome(name: str, result: str, spec: ToolSpec | None) -> str:
    text = result.strip()
    if text.startswith("Error:"):
        return "error: " + _one_line(text[len("Error:") :].strip().split("\n", 1)[0], 100)
    if text in _NOT_RUN:
        return _NOT_RUN[text]
    return _value_outcome(name, _loads(text), lambda: len(result), spec, text)


def _value_outcome(
    name: str, value: Any, size: Callable[[], int], spec: ToolSpec | None, raw: str = ""
) -> str:
    parts = _dict_outcome(name, value, spec, raw) if isinstance(value, dict) else []
    if isinstance(value, list):
        parts = [_count("items", value)]
    return ", ".join(parts) if parts else f"ok ({size():,} chars)"


def _line(
    name: str, arguments: str | dict[str, Any], outcome: str, call_id: str, spec: ToolSpec | None
) -> str:
    key = _key_args(name, _parse_args(arguments), spec)
    head = f"{name} {key}" if key else name
    suffix = f"{_RECALL}{call_id})" if call_id else ""
    room = max(LINE_MAX - len(DIGEST_PREFIX) - len(suffix), 40)
    return DIGEST_PREFIX + _one_line(f"{head} -> {outcome}", room) + suffix


def digest_pieces(line: str) -> list[str]:
    """A digest line in pieces whose token counts add up to the line's: "[digest]", " " +
    tool and arguments, " -> " + outcome, " (recall:", " " + id + ")". Every cut falls before
    a space that follows a non-space: no pre-token of these tokenizers holds a non-space and
    then a space (each is a letter, number or punctuation run with at most one leading
    character, or whitespace alone), so each cut is one the pre-tokenizer always makes, and
    BPE never merges across those. The pieces can be counted apart, and all but the last,
    which repeat from call to call, once. Any other text: itself."""
    head = DIGEST_PREFIX.rstrip()
    end = line.rfind(_RECALL)
    if not line.startswith(DIGEST_PREFIX) or end <= len(DIGEST_PREFIX) or line[-1] != ")":
        return [line]
    body = line[len(DIGEST_PREFIX) : end]
    if body[:1].isspace() or body[-1:].isspace():
        return [line]
    recall = line[end : end + _RECALL_CUT]
    arrow = body.rfind(" -> ")
    if arrow > 0 and not body[arrow - 1].isspace():
        return [head, " " + body[:arrow], body[arrow:], recall, line[end + _RECALL_CUT :]]
    return [head, " " + body, recall, line[end + _RECALL_CUT :]]


def digest_tool_result(
    name: str, arguments: str | dict[str, Any], result: str, call_id: str
) -> str:
    """One deterministic line for a tool call: tool, key arguments, outcome, recall id."""
    spec = get_tool(name)
    return _line(name, arguments, _outcome(name, result, spec), call_id, spec)


def digest_tool_part(
    name: str, arguments: str | dict[str, Any], part: dict[str, Any], call_id: str
) -> str:
    """`digest_tool_result` of a UI tool part's result, read from its output object: the same
    line, without rendering (and re-parsing) the whole result as JSON."""
    output = part.get("output")
    if part.get("state") != "output-available" or isinstance(output, str):
        return digest_tool_result(name, arguments, tool_result_text(part), call_id)
    size = lambda: len(tool_result_text(part))  # noqa: E731 (only when nothing else is said)
    spec = get_tool(name)
    return _line(name, arguments, _value_outcome(name, output, size, spec), call_id, spec)


# --- cut_json ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Limits:
    items: int  # array items (and keys of id -> object maps) kept; strings keep 16 * items
    depth: int  # containers at this depth or deeper become "{…}" / "[…]"
    all_keys: bool  # limit the keys of every nested object, not only of maps
    top_keys: bool  # limit the top-level object's keys too


def _shrink(value: Any, lim: _Limits, depth: int) -> tuple[Any, bool]:
    """`value` within `lim`, and whether anything was cut."""
    if isinstance(value, str):
        chars = 16 * lim.items
        if len(value) <= chars:
            return value, False
        return value[:chars] + f"…[+{len(value) - chars} chars]", True
    if not isinstance(value, (list, dict)) or not value:
        return value, False
    if depth >= lim.depth:
        return ("[…]" if isinstance(value, list) else "{…}"), True
    if isinstance(value, list):
        rest = value[lim.items :] if len(value) - lim.items <= 8 else None
        keep = len(value) if rest is not None and len(compact_json(rest)) <= 24 else lim.items
        pairs = [_shrink(item, lim, depth + 1) for item in value[:keep]]
        out = [item for item, _ in pairs]
        if len(value) > keep:  # (a marker that saves nothing is not worth it)
            out.append(f"… {len(value) - keep} more items")
        return out, len(value) > keep or any(cut for _, cut in pairs)
    is_map = all(isinstance(v, dict) for v in value.values())  # e.g. an API-format workflow
    limited = is_map or (lim.top_keys if depth == 0 else lim.all_keys)
    keys = list(value)[: lim.items] if limited else list(value)
    obj: dict[str, Any] = {}
    cut = len(keys) < len(value)
    for key in keys:
        obj[key], item_cut = _shrink(value[key], lim, depth + 1)
        cut = cut or item_cut
    if len(keys) < len(value):
        obj["…"] = f"{len(value) - len(keys)} more keys"
    return obj, cut


def _largest(value: Any, depth: int = 0) -> int:
    """The largest array, object or string (in 16-char steps) in `value`: the search bound."""
    if isinstance(value, str):
        return len(value) // 16 + 1
    if not isinstance(value, (list, dict)) or depth > 64:
        return 1
    items = value.values() if isinstance(value, dict) else value
    return max([len(value), *(_largest(v, depth + 1) for v in items)])


def _render(value: Any, lim: _Limits, original: int, hint: str) -> str:
    shrunk, cut = _shrink(value, lim, 0)
    if not cut:
        return compact_json(shrunk)
    wrap = "items" if isinstance(value, list) else "value"
    obj = shrunk if isinstance(shrunk, dict) else {wrap: shrunk}

    def dump(size: str) -> str:
        note = f"result cut from {original:,} to {size} chars; {hint}"
        return compact_json({**obj, "_truncated": note})

    base = len(dump(""))  # the note states the final size, its own digits included
    size = next(n for n in range(base + 1, base + 20) if len(f"{n:,}") == n - base)
    return dump(f"{size:,}")


def _fit(value: Any, stage: _Limits, original: int, hint: str, max_chars: int) -> str | None:
    """The render with the most items per array that fits (a render grows with them)."""
    best, low, high = None, 1, _largest(value)
    while low <= high:
        k = (low + high) // 2
        out = _render(value, replace(stage, items=k), original, hint)
        if len(out) <= max_chars:
            best, low = out, k + 1
        else:
            high = k - 1
    return best


def _cut_text(text: str, max_chars: int) -> str:
    room = max_chars - len(f"\n…[cut {len(text):,} chars]…\n")
    if room <= 1:
        return text[:max_chars]
    head_n = room * 2 // 3
    tail_n = room - head_n
    head, tail = text[:head_n], text[len(text) - tail_n :]
    if (newline := head.rfind("\n")) >= head_n // 2:
        head = head[:newline]
    if 0 <= (newline := tail.find("\n")) < tail_n // 2:
        tail = tail[newline + 1 :]
    return f"{head}\n…[cut {len(text) - len(head) - len(tail):,} chars]…\n{tail}"


def cut_json(text: str, max_chars: int, *, hint: str = RECALL_HINT) -> str:
    """`text` in at most `max_chars` characters; JSON stays valid JSON (for max_chars >= 2).

    JSON keeps its top-level keys, and object keys as long as possible; long arrays keep their
    first items and a `"… N more items"` marker, id -> object maps their first keys and
    `"…": "N more keys"`, long strings their start and `…[+N chars]`, deep structures become
    `"{…}"`/`"[…]"`; a `_truncated` note says so. Other text keeps its head and tail.
    """
    if len(text) <= max_chars:
        return text
    value = _loads(text, _INVALID)
    if value is _INVALID:
        return _cut_text(text, max_chars)
    if len(compact := compact_json(value)) <= max_chars:
        return compact  # only the whitespace was too much
    stages = [_Limits(1, 64, False, False), _Limits(1, 64, True, False)]
    stages += [_Limits(1, depth, True, False) for depth in (8, 4, 3, 2, 1)]
    for stage in [*stages, _Limits(1, 1, True, True)]:
        if (found := _fit(value, stage, len(text), hint, max_chars)) is not None:
            return found
    short = compact_json({"_truncated": f"result of {len(text):,} chars cut; {hint}"})
    return next((s for s in (short, '{"_truncated":true}', "{}") if len(s) <= max_chars), "")


# --- fallback_summary ----------------------------------------------------------------------

_Fact = Callable[[re.Match[str]], str]
_PARAMS = (
    r"(?:noise_)?seed|steps|cfg|width|height|denoise|batch[ _]size|strength(?:_model|_clip)?"
    r"|guidance|shift|fps|frames"
)
_FILE_RE = re.compile(
    r"(?<![\w./\\-])[\w./\\-]*\w\.(?:safetensors|ckpt|pth?|bin|gguf|sft|onnx|png|jpe?g|webp"
    r"|gif|json|ya?ml|txt|mp4|webm|wav|mp3|flac|latent)\b",
    re.IGNORECASE,
)
_FACT_PATTERNS: tuple[tuple[re.Pattern[str], _Fact], ...] = (
    (_FILE_RE, lambda m: m.group(0)),
    (
        re.compile(
            rf"\b({_PARAMS})\b\"?\s*(?:(?:[:=]|\b(?:is|of|to|at)\b)\s*)?"
            r"(-?\d+(?:\.\d+)?)(?![\d.]*\w)",
            re.IGNORECASE,
        ),
        lambda m: f"{m.group(1).lower().replace(' ', '_')} {m.group(2)}",
    ),
    (
        re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(px|steps|seconds|ms|GB|MB|fps|frames|%)(?!\w)"),
        lambda m: f"{m.group(1)} {m.group(2)}",
    ),
    (
        re.compile(r"(?<![\w.])(\d{2,5})\s?[x×]\s?(\d{2,5})(?![\w.])"),
        lambda m: f"{m.group(1)}x{m.group(2)}",
    ),
    (
        re.compile(r"\bnodes?\s+(?:id\s+)?#?(\d+)\b|(?<![\w&#])#(\d+)\b", re.IGNORECASE),
        lambda m: f"node {m.group(1) or m.group(2)}",
    ),
    (
        re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”"),
        lambda m: compact_json(m.group(1) or m.group(2)),
    ),
)


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return content if isinstance(content, str) else ""


def _text_facts(text: str) -> list[str]:
    found = [
        (m.start(), kind, fmt(m))
        for kind, (regex, fmt) in enumerate(_FACT_PATTERNS)
        for m in regex.finditer(text)
    ]
    return [fact for _, _, fact in sorted(found)]


def _arg_facts(value: Any, depth: int = 0) -> list[str]:
    facts: list[str] = []
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        if isinstance(item, (dict, list)) and depth < 4:
            facts.extend(_arg_facts(item, depth + 1))
        elif isinstance(item, str) and _FILE_RE.fullmatch(item):
            facts.append(item)
        elif isinstance(item, (int, float)) and re.fullmatch(_PARAMS, str(key), re.IGNORECASE):
            facts.append(f"{key} {compact_json(item)}")
    return facts


@dataclass
class _Section:
    title: str
    entries: list[str]  # oldest first
    lead: str  # between the title and the first entry
    sep: str  # between entries
    omitted: int = 0

    def render(self) -> str:
        more = f" ({self.omitted} older omitted)" if self.omitted else ""
        return f"{self.title}{more}:{self.lead}" + self.sep.join(self.entries)

    def keep_newest(self, max_chars: int) -> None:
        """Drop the oldest entries that could never fit (bounds the trimming loop)."""
        total, keep = 0, 0
        for entry in reversed(self.entries):
            total += len(entry) + len(self.sep)
            if keep and total > max_chars:
                break
            keep += 1
        self.omitted += len(self.entries) - keep
        self.entries = self.entries[len(self.entries) - keep :]

    def drop_expendable(self, tiers: list[int], max_chars: int) -> None:
        """Over `max_chars` (it could never fit whole), the trimming loop's first choices in
        one pass: lines that say nothing new, then lines without a value, oldest first, until
        it fits. The last line stays."""
        total = sum(len(entry) + len(self.sep) for entry in self.entries)
        drop: set[int] = set()
        for tier in (0, 1):
            for i, entry in enumerate(self.entries[:-1]):
                if total <= max_chars:
                    break
                if tiers[i] == tier:
                    drop.add(i)
                    total -= len(entry) + len(self.sep)
        self.omitted += len(drop)
        self.entries = [entry for i, entry in enumerate(self.entries) if i not in drop]


_STATED_CUE = re.compile(
    r"\b(always|never|from now on|prefer|favou?rite|go-to|remember|keep|should|must|"
    r"call(ed)?|name[ds]?|rename|my|mine|we|our|use|set|deadline|due)\b",
    re.IGNORECASE,
)
# a value: a number, a quotation mark, a file extension, an identifier (kl_optimal, out/tests)
_VALUE = r"\d|[\"“”]|\.\w{2,5}\b|[^\W_][_/][^\W_]"
_SPECIFIC = re.compile(rf"{_VALUE}|'")
_INFORMATIVE = re.compile(_VALUE)
_NARRATIVE = ("Earlier", "User requests")  # shrunk least telling line first
_HEADER = re.compile(r"^(Earlier|User requests|Actions|Facts|Stated)( \(\d+ older omitted\))?:")


def _stated(text: str) -> list[str]:
    """The user's sentences that state something durable: a preference, a name, a value."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if len(sentence) > 12 and (_STATED_CUE.search(sentence) and _SPECIFIC.search(sentence)):
            out.append(_one_line(sentence, 160))
    return out


def _sections_of(previous: str) -> dict[str, list[str]]:
    """A previous digest, split back into its sections ({} for a model-written summary)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in previous.splitlines():
        header = _HEADER.match(line)
        if header:
            current = sections.setdefault(header.group(1), [])
            rest = line[header.end() :].strip()
            if header.group(1) == "Facts" and rest:
                current.extend(f.strip() for f in rest.split(";") if f.strip())
            elif rest:
                current.append(rest)
        elif current is not None and line.strip():
            current.append(line.strip().removeprefix("- "))
    return sections


def _tiers(lines: list[str], newer: set[str]) -> list[int]:
    """What each narrative line (oldest first) adds: 0 nothing, a newer line or one of `newer`
    says it again; 1 no value (number, quotation, file name, identifier); 2 a value."""
    seen, tiers = set(newer), []
    for line in reversed(lines):
        gist = line.removeprefix("asked: ")
        tiers.append(0 if gist in seen else 2 if _INFORMATIVE.search(gist) else 1)
        seen.add(gist)
    return tiers[::-1]


def _expendable(sections: list[_Section], stated: dict[str, None]) -> tuple[_Section, int] | None:
    """The narrative line to drop first: the oldest that says nothing new, else the oldest
    without a value; None when every line holds one. A section's last line is never chosen."""
    lines = [(s, i) for s in sections if s.title in _NARRATIVE for i in range(len(s.entries))]
    tiers = _tiers([s.entries[i] for s, i in lines], set(stated))
    found = [
        (tier, k)
        for k, (tier, (section, _)) in enumerate(zip(tiers, lines, strict=True))
        if tier < 2 and len(section.entries) > 1
    ]
    return lines[min(found)[1]] if found else None


def fallback_summary(
    messages: list[dict[str, Any]], previous: str | None, max_chars: int = 4000
) -> str:
    """A deterministic digest of a stretch of conversation (OpenAI messages): what the user
    stated (sentences with a preference, a name or a value, verbatim), the user's requests, a
    digest line per tool call, facts (file names, settings, node ids, quoted strings) and the
    previous summary. Stated sentences and facts carry forward from summary to summary; over
    `max_chars` the oldest actions go first; then, of the earlier summary and the requests,
    the lines a newer line or a stated sentence repeats, then those without a value (number,
    quotation, file name, identifier), oldest first; then the rest of the earlier summary,
    then requests, then facts, and stated sentences last."""
    results = {
        m.get("tool_call_id"): _text_of(m.get("content"))
        for m in messages
        if m.get("role") == "tool"
    }
    old = _sections_of(previous or "")
    requests: list[str] = []
    actions: list[str] = []
    stated: dict[str, None] = dict.fromkeys(old.get("Stated", []))
    facts: dict[str, None] = dict.fromkeys(old.get("Facts", []) or _text_facts(previous or ""))

    def add(target: dict[str, None], found: list[str]) -> None:
        for item in found:
            target.pop(item, None)  # seen again: counts as new
            target[item] = None

    for message in messages:
        role, text = message.get("role"), _text_of(message.get("content"))
        first = next((line for line in text.splitlines() if line.strip()), "")
        if role == "user" and first:
            requests.append(_one_line(first, 120))
            add(stated, _stated(text))
        if role in ("user", "assistant"):
            add(facts, _text_facts(text))
        calls = message.get("tool_calls") if role == "assistant" else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") or {}
            name, arguments = str(function.get("name", "")), function.get("arguments") or "{}"
            call_id = str(call.get("id", ""))
            line = digest_tool_result(name, arguments, results.get(call_id, NOT_RUN), call_id)
            actions.append(line[len(DIGEST_PREFIX) :])
            add(facts, _arg_facts(_parse_args(arguments)))
    if old:
        earlier = old.get("Earlier", []) + [f"asked: {r}" for r in old.get("User requests", [])]
    else:
        earlier = [line for line in (previous or "").strip().splitlines() if line.strip()]
    sections = [
        _Section("Earlier", earlier, "\n", "\n"),
        _Section("User requests", requests, "\n- ", "\n- "),
        _Section("Actions", actions, "\n- ", "\n- "),
        _Section("Facts", list(facts), " ", "; "),
        _Section("Stated", list(stated), "\n- ", "\n- "),
    ]
    sections = [s for s in sections if s.entries]
    for section in sections:
        if section.title in _NARRATIVE:  # the requests are newer than the earlier summary
            newer = set(stated) | (set(requests) if section.title == "Earlier" else set())
            section.drop_expendable(_tiers(section.entries, newer), max_chars)
        section.keep_newest(max_chars)
    out = "\n".join(s.render() for s in sections)
    order = {"Actions": 0, "Earlier": 1, "User requests": 2, "Facts": 3, "Stated": 4}
    while len(out) > max_chars:
        shrinkable = [s for s in sections if len(s.entries) > 1 or len(s.entries[0]) > 61]
        if not shrinkable:
            return out[: max_chars - 1] + "…"
        section = min(shrinkable, key=lambda s: order[s.title])
        if section.title != "Actions" and (victim := _expendable(sections, stated)):
            section, index = victim  # a repeated or value-less line of the narrative first
            del section.entries[index]
            section.omitted += 1
        elif len(section.entries) > 1:
            section.entries.pop(0)
            section.omitted += 1
        elif len(entry := section.entries[0]) > 61:  # each pass makes it strictly shorter
            keep = max(len(entry) - (len(out) - max_chars) - 1, 60)
            section.entries[0] = (
                "…" + entry[-keep:] if section.title == "Earlier" else entry[:keep] + "…"
            )
        else:
            return out[: max_chars - 1] + "…"
        out = "\n".join(s.render() for s in sections)
    return out
