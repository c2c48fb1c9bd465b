"""The deterministic summary that stands in when no model summary can be had: what both
speakers stated, the actions taken and the facts named (files, parameters, node ids).

Pure and deterministic, like the digests.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .digests import DIGEST_PREFIX, digest_tool_result, one_line, parse_args
from .json_text import compact_json
from .ui_messages import NOT_RUN
from .wire_types import OpenAIMessage

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
            out.append(one_line(sentence, 160))
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
    messages: Sequence[OpenAIMessage], previous: str | None, max_chars: int = 4000
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
            requests.append(one_line(first, 120))
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
            add(facts, _arg_facts(parse_args(arguments)))
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


FACTS_HEADER = "Kept verbatim:"


def split_facts(summary: str) -> tuple[str, str]:
    """A model summary and the facts block kept beside it ("" when it has none)."""
    text, _, facts = summary.partition(f"\n\n{FACTS_HEADER}")
    return text, facts


def facts_block(
    messages: Sequence[OpenAIMessage], previous: str | None, max_chars: int = 1500
) -> str:
    """What the deterministic digest keeps verbatim — the user's stated sentences and the
    facts (file names, values, node ids) — of this stretch and of the previous summary's own
    block, the newest within `max_chars`: kept beside a model summary, which may paraphrase
    them away."""
    earlier = split_facts(previous)[1] if previous else ""
    sections = _sections_of(fallback_summary(messages, earlier or None, max_chars=100_000))
    stated = _newest(sections.get("Stated", []), max_chars // 2, 3)
    facts = _newest(sections.get("Facts", []), max_chars - sum(len(x) + 3 for x in stated), 2)
    lines = ["Stated:", *(f"- {line}" for line in stated)] if stated else []
    if facts:
        lines.append("Facts: " + "; ".join(facts))
    return f"{FACTS_HEADER}\n" + "\n".join(lines) if lines else ""


def _newest(items: list[str], room: int, joint: int) -> list[str]:
    """The newest items whose lengths (each with `joint` more) fit in `room`, in order."""
    kept: list[str] = []
    for item in reversed(items):
        room -= len(item) + joint
        if room < 0:
            break
        kept.append(item)
    return kept[::-1]
