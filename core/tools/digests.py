"""One-line digests of tool results: the tool, its key arguments, the outcome, and the id that
brings the full result back (`recallToolResult`).

Pure: the same input gives byte-identical output, because providers cache the request prefix
and a digest that changed between requests would break that cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..base import (
    AWAITING,
    DENIED,
    INPUT_INCOMPLETE,
    NOT_RUN,
    UIPart,
    compact_json,
    tool_result_text,
)
from .documents import DOCUMENTS, documents_of
from .tool_registry import get_tool
from .tool_spec import ToolSpec

DIGEST_PREFIX = "[digest] "
_RECALL = " (recall: "
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


INVALID: Any = object()


def loads_or(text: str, default: Any = None) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return default


def one_line(text: str, limit: int) -> str:
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
        return text if len(text) <= 40 else one_line(text, 40)
    if isinstance(value, str):
        return _show_text(value, quote)
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ",".join(_show(v) for v in value[:6]) + (",…" if len(value) > 6 else "")
    return one_line(compact_json(value), 40)


@lru_cache(maxsize=4096)
def _show_text(value: str, quote: bool) -> str:
    """(node types, slot names, queries: a digest shows the same few again and again)"""
    text = one_line(value, 40)
    return compact_json(text) if quote or not _BARE.fullmatch(text) else text


def parse_args(arguments: str | dict[str, Any]) -> dict[str, Any]:
    value = arguments if isinstance(arguments, dict) else loads_or(arguments)
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
    return one_line(str(err), 100)


def _item_name(item: Any) -> str | None:
    if isinstance(item, dict):
        for field in _NAME_FIELDS:  # the first of these that holds a string or a number
            value = item.get(field)
            if isinstance(value, (str, int)):
                item = value
                break
        else:
            return None
    return one_line(str(item), 40) if isinstance(item, (str, int)) else None


def _count(key: str, items: list[Any]) -> str:
    text = f"{len(items)} {key if len(items) != 1 else key[:-1]}"
    names = [n for n in map(_item_name, items[:3]) if n] if key in _NAMED_LISTS else []
    if names:
        text += ": " + ", ".join(names) + (", …" if len(items) > len(names) else "")
    return text


def _documents(docs: list[dict[str, Any]]) -> str:
    shown = [f"[{d['citation_id']}] {_show(d['title'], True)}" for d in docs[:4]]
    more = f", +{len(docs) - 4} more" if len(docs) > 4 else ""
    return f"documents {', '.join(shown)}{more}" if docs else "0 documents"


LOOKED = "looked"  # a run's result: a line per output file (files/output_checks.OutputLook.line)
_LOOK = re.compile(
    r"(?P<name>.+? \[(?:output|temp)\]|[^:]+): (?P<shape>[A-Z0-9]+(?: \d+×\d+)?)(?P<rest>.*)"
)


def _looked(lines: list[str], result: dict[str, Any]) -> list[str]:
    """ "run 5d2c1f0e in 41.3 s: 2 PNG 1024×1024; ComfyUI_00001_.png all black (…)" """
    shapes: dict[str, int] = {}
    wrong: list[str] = []
    for line in lines:
        found = _LOOK.fullmatch(line)
        if found is None:
            wrong.append(line)
            continue
        shapes[found["shape"]] = shapes.get(found["shape"], 0) + 1
        told = found["rest"].removeprefix(",").strip()
        if told and not told.startswith(("looks fine", "1 frame")):
            name = found["name"].rsplit(" [", 1)[0].rsplit("/", 1)[-1]
            wrong.append(f"{name} {told}")
    prompt = result.get("promptId")
    seconds = result.get("seconds")
    head = "run" + (f" {str(prompt)[:8]}" if prompt else "")
    head += f" in {seconds} s" if isinstance(seconds, (int, float)) else ""
    made = ", ".join(f"{n} {shape}" for shape, n in shapes.items()) or "no file looked at"
    return [f"{head}: {made}", *wrong[:2]] + ([f"+{len(wrong) - 2} more"] if len(wrong) > 2 else [])


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
    if DOCUMENTS in result:  # their citation ids and titles: a cited [n] keeps its meaning
        parts.append(_documents(documents_of(result)))
    looked = result.get(LOOKED)
    if isinstance(looked, list):  # a run's outputs as looked at: what they are, what is wrong
        return _looked([line for line in looked if isinstance(line, str)], result)
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
        shown = ", ".join(one_line(f, 60) for f in list(files)[:3])
        parts.append(f"files: {shown}" + (f", +{len(files) - 3} more" if len(files) > 3 else ""))
    if parts:
        return parts
    message = result.get("message")
    if isinstance(message, str) and message.strip():
        parts.append(one_line(message, 80))
    elif result.get("ok") is True or result.get("success") is True:
        parts.append("ok")
    return parts


def _outcome(name: str, result: str, spec: ToolSpec | None) -> str:
    text = result.strip()
    if text.startswith("Error:"):
        return "error: " + one_line(text[len("Error:") :].strip().split("\n", 1)[0], 100)
    if text in _NOT_RUN:
        return _NOT_RUN[text]
    if text.startswith(DENIED):  # (with the user's words: recalled whole)
        return "denied"
    return _value_outcome(name, loads_or(text), lambda: len(result), spec, text)


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
    key = _key_args(name, parse_args(arguments), spec)
    head = f"{name} {key}" if key else name
    suffix = f"{_RECALL}{call_id})" if call_id else ""
    room = max(LINE_MAX - len(DIGEST_PREFIX) - len(suffix), 40)
    return DIGEST_PREFIX + one_line(f"{head} -> {outcome}", room) + suffix


def digest_tool_result(
    name: str, arguments: str | dict[str, Any], result: str, call_id: str
) -> str:
    """One deterministic line for a tool call: tool, key arguments, outcome, recall id."""
    spec = get_tool(name)
    return _line(name, arguments, _outcome(name, result, spec), call_id, spec)


def digest_tool_part(name: str, arguments: str | dict[str, Any], part: UIPart, call_id: str) -> str:
    """`digest_tool_result` of a UI tool part's result, read from its output object: the same
    line, without rendering (and re-parsing) the whole result as JSON."""
    output = part.get("output")
    if part.get("state") != "output-available" or isinstance(output, str):
        return digest_tool_result(name, arguments, tool_result_text(part), call_id)
    size = lambda: len(tool_result_text(part))  # noqa: E731 (only when nothing else is said)
    spec = get_tool(name)
    return _line(name, arguments, _value_outcome(name, output, size, spec), call_id, spec)
