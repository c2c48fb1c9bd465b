"""The deterministic summary that stands in when no model summary can be had, and the facts
block kept beside a model summary (which may paraphrase them away).

Both are a digest of lines in conversation order: what each speaker said ("user: …",
"assistant: …", verbatim where short) and what the tools did ("tool: …", the one-line tool
digest). Every line is ranked by what it names, dates or counts (the user's explicit
instructions first); lines a newer line repeats and chatter come last. The digest that stands
in for a summary keeps only the lines that earn their tokens (`earning`: the instructions and
what names something rare; the rest is counted as left out), so the newest messages get the
room. Over the token budget the weakest lines go first: a line that names something first
shrinks to what it names ("user (facts): …"), then goes; ties go oldest first.

Pure and deterministic, like the digests.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..base import NOT_RUN, OpenAIMessage
from ..tools import DIGEST_PREFIX, digest_tool_result, one_line
from .line_facts import distinctive, facts_of, norm

Count = Callable[[str], int]
"""Tokens of a text: the chat's counter (`TokenCounter.text`), so a digest sized here is the
size the context engine measures."""

LINE_CHARS = 200  # a sentence longer than this is cut (one_line)
PER_MESSAGE = 3  # a long message (a paste, an explanation) offers its strongest sentences only
FACTS_TITLE = "Kept verbatim"
FACTS_HEADER = f"{FACTS_TITLE}:"
EARLIER_HEADER = "Earlier:"
DIGEST_TITLE = "Digest (oldest first)"

_INSTRUCTION = re.compile(  # the user's explicit instructions (said by the user only)
    r"\b(?:always|never|from now on|going forward|remember|prefer|must|make sure|don'?t|do not"
    r"|keep(?! \w+ing\b)|avoid|stick (?:with|to)|every time|call (?:it|them|this|that)"
    r"|name (?:it|them)|rename"
    r"|(?:is|are) (?:called|named))\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Never a fact: chat-template tokens a small model echoes, and our own reminder block (the date,
# the user's reminders: resent with the turn it belongs to) when a model repeats it.
_TEMPLATE_TOKEN = re.compile(
    r"<\|[a-z_]+\|>|</?s>|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>", re.IGNORECASE
)
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|$)", re.DOTALL)
_REMINDER_LINE = re.compile(r"^\W*current date and time:", re.IGNORECASE)
# A fragment of pasted JSON or code ('"id": 1,', '},'): mostly punctuation, few words.
_WORD_RUN = re.compile(r"[^\W\d_]{2,}")
_RECALL_SUFFIX = re.compile(r" \(recall: [^)]*\)$")


# --- the lines ----------------------------------------------------------------------------------

KEEP, SHORT, GONE = 2, 1, 0  # a line's form: whole, shrunk to what it names, left out


@dataclass
class Line:
    """One line of the digest. `tier` ranks it: 0 a newer line repeats it, 1 it names nothing
    (chatter), 2 it names something, 3 the user's explicit instruction; `value` orders lines of
    a tier (how many things it names, at most 2); `order` is its place in the conversation;
    `short` is the line shrunk to what it names ("" when it cannot shrink)."""

    speaker: str  # "user", "assistant" or "tool"
    text: str
    order: int = 0
    facts: tuple[str, ...] = ()
    tier: int = 1
    value: int = 0
    short: str = ""
    form: int = KEEP

    def render(self) -> str:
        if self.form == SHORT:
            return f"- {self.speaker} (facts): {self.short}"
        return f"- {self.speaker}: {self.text}"


def _line(speaker: str, text: str) -> Line:
    """A line and what it is worth: what it could answer later. The user's instruction first;
    then a line that names, dates or counts something, or states something in plain words (an
    event, a plan, a preference: a statement of PROSE_WORDS content words or more); a question
    or small talk last. A tool line is judged without its tool's name and recall id, and never
    shrinks (the recall id is what it is for); an instruction shrinks to its cue and what it
    names ("never: X LoRA", not "X LoRA", which would say the opposite)."""
    gist = _RECALL_SUFFIX.sub("", text).partition(" ")[2] if speaker == "tool" else text
    facts = facts_of(gist)
    cue = _INSTRUCTION.search(text) if speaker == "user" else None
    short = "; ".join(facts) if facts and speaker != "tool" else ""
    short = f"{cue[0].lower()}: {short}" if cue and short else short
    content = len(_content_words(gist))
    asked = gist.rstrip().endswith("?")
    states = speaker != "tool" and not asked and content >= PROSE_WORDS
    tier = 3 if cue else 2 if (facts and not asked) or states else 1
    value = min(len(facts) + content // PROSE_WORDS, 2)
    fits = len(short) < len(text) - 8 and not asked  # (what a question names is no fact)
    return Line(speaker, text, 0, facts, tier, value, short if fits else "")


PROSE_WORDS = 4  # content words that make a plain sentence a statement worth keeping
_STOP_WORDS = (
    "the a an and or but so if then than that this these those there here it its it's is are "
    "was were be been being am do does did done have has had having i me my mine we us our you "
    "your he him his she her they them their what which who whom whose when where why how all "
    "any some no not yes just very really quite too also only even still again ever about above "
    "after before from into onto over under with without for of on in at by to up down out off "
    "can could would should will shall may might must let lets let's ok okay sure thanks thank "
    "great good nice cool fine well oh ah hi hello hey yeah right got get gets going go goes "
    "one thing things something anything way lot bit much many more most other same such "
    "i'm i've i'd i'll you're you've we're that's don't doesn't didn't can't won't isn't"
)
_STOP = frozenset(_STOP_WORDS.split())


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z']+", text.lower()) if w not in _STOP}


def _parsed(speaker: str, text: str, facts_only: bool) -> Line:
    """A line of a previous digest, as it was: a "(facts)" line keeps the facts it listed
    (an instruction's with its cue)."""
    if not facts_only:
        return _line(speaker, text)
    facts = tuple(f.strip() for f in text.split(";"))
    tier = 3 if speaker == "user" and _INSTRUCTION.match(text) else 2
    return Line(speaker, text, 0, facts, tier, min(len(facts), 2), text, SHORT)


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return content if isinstance(content, str) else ""


def _clean(text: str) -> str:
    """The text without chat-template tokens and our reminder blocks."""
    return _TEMPLATE_TOKEN.sub(" ", _REMINDER.sub(" ", text))


def _worth_a_line(sentence: str) -> bool:
    """Not our reminder repeated, not a fragment of JSON or code (its syntax, and words make
    less than half of what it shows)."""
    if _REMINDER_LINE.match(sentence):
        return False
    if _JSON_LINE.match(sentence):
        return False
    if not _CODE.search(sentence):
        return True
    words = _WORD_RUN.findall(sentence)
    visible = sum(1 for ch in sentence if not ch.isspace())
    return sum(map(len, words)) * 2 >= visible


_CODE = re.compile(r'[{}\[\]]|":|=|;$')
_JSON_LINE = re.compile(r'\s*(?:[{}\[\],]|"[^"]*"\s*:)')  # a line of JSON: a key, a bracket


def _said(speaker: str, text: str) -> list[Line]:
    """A message's sentences as lines; a long message keeps its PER_MESSAGE strongest (the
    earlier of equals), in their order, so that a paste cannot crowd out what was said."""
    pieces = (one_line(s, LINE_CHARS) for s in _SENTENCE.split(_clean(text)) if s.strip())
    lines = [_line(speaker, s) for s in pieces if _worth_a_line(s)]
    strongest = sorted(lines, key=lambda line: (-line.tier, -line.value))[:PER_MESSAGE]
    return [line for line in lines if any(line is s for s in strongest)]


def _tool_lines(message: OpenAIMessage, results: dict[Any, str]) -> list[Line]:
    """A line per tool call of an assistant message: the tool digest of its call and result."""
    calls = message.get("tool_calls")
    out = []
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") or {}
        name, arguments = str(function.get("name", "")), function.get("arguments") or "{}"
        call_id = str(call.get("id", ""))
        digest = digest_tool_result(name, arguments, results.get(call_id, NOT_RUN), call_id)
        out.append(_line("tool", digest.removeprefix(DIGEST_PREFIX)))
    return out


def _lines_of(messages: Sequence[OpenAIMessage]) -> list[Line]:
    """The lines of a stretch of conversation (OpenAI messages), in order."""
    results = {
        m.get("tool_call_id"): _text_of(m.get("content"))
        for m in messages
        if m.get("role") == "tool"
    }
    lines: list[Line] = []
    for message in messages:
        role = message.get("role")
        if role == "user" or role == "assistant":
            lines += _said(role, _text_of(message.get("content")))
        if role == "assistant":
            lines += _tool_lines(message, results)
    return lines


_PARSED = re.compile(r"^- (user|assistant|tool)( \(facts\))?: (.+)$")
_OMITTED = re.compile(r"\((\d+) weaker lines? left out\)")


@dataclass
class Previous:
    """A previous summary, taken apart: a model's text (kept as the "Earlier" block), the
    lines of a digest (they are ranked again with the new ones) and how many it left out."""

    earlier: str = ""
    lines: list[Line] = field(default_factory=list)
    omitted: int = 0


def parse_previous(summary: str | None) -> Previous:
    """A previous summary: a digest (this module's) gives back its Earlier block and lines; a
    model summary is the Earlier block, and the facts block beside it gives lines. Anything
    else (a digest of an older format) is kept whole as the Earlier block."""
    if not summary or not summary.strip():
        return Previous()
    text, facts = split_facts(summary)
    if facts:
        return Previous(text.strip(), _parse_lines(facts.splitlines()))
    head, sep, body = f"\n{summary}".partition(f"\n{DIGEST_TITLE}")
    if not sep:
        return Previous(summary.strip())
    header, _, rest = body.partition("\n")
    omitted = _OMITTED.search(header)
    earlier = head.strip().removeprefix(EARLIER_HEADER).strip()
    return Previous(earlier, _parse_lines(rest.splitlines()), int(omitted[1]) if omitted else 0)


def _parse_lines(texts: Iterable[str]) -> list[Line]:
    parsed = (_PARSED.match(text) for text in texts)
    return [_parsed(m[1], m[3], facts_only=bool(m[2])) for m in parsed if m]


def _without_repeats(lines: list[Line]) -> list[Line]:
    """One line for the same words said again by the same speaker: the newest, with how often
    it was said ("(said 3 times)"); and tier 0 for a line whose every fact a newer line names
    (unless it is an instruction)."""
    said: dict[tuple[str, str], Line] = {}
    times: dict[int, int] = {}
    named: set[str] = set()
    kept: list[Line] = []
    for line in reversed(lines):
        key, facts = (line.speaker, norm(_REPEATS.sub("", line.text))), line.facts
        newer = said.get(key)
        if newer is not None:
            times[id(newer)] = times.get(id(newer), 1) + _times(line.text)
            continue
        if facts and line.tier < 3 and all(norm(f) in named for f in facts):
            line.tier = 0
        said[key] = line
        named.update(norm(f) for f in facts)
        kept.append(line)
    for line in kept:
        if id(line) in times:
            total = times[id(line)] + _times(line.text) - 1
            line.text = f"{_REPEATS.sub('', line.text)} (said {total} times)"
    return kept[::-1]


_REPEATS = re.compile(r" \(said (\d+) times\)$")


def _times(text: str) -> int:
    """How often a line says it was said (a digest's "(said 3 times)"; else once)."""
    found = _REPEATS.search(text)
    return int(found[1]) if found else 1


# --- fitting the budget -------------------------------------------------------------------------


def _shrink(line: Line) -> None:
    """One step down: whole to shrunk (when it can and a newer line does not repeat it), else
    gone."""
    line.form = SHORT if line.form == KEEP and line.short and line.tier > 0 else GONE


def _steps(lines: list[Line]) -> Iterable[Line]:
    """The lines to shrink or drop, one step at a time, the weakest first (by tier, a tool line
    before a statement, which cannot be recalled, then by value, then the older first): every
    line but the instructions shrinks or goes, then the instructions shrink, then the shrunk
    lines go, then the rest."""
    order = sorted(lines, key=lambda x: (x.tier, x.speaker != "tool", x.value, x.order))
    yield from (line for line in order if line.form == KEEP and line.tier < 3)
    yield from (line for line in order if line.form == KEEP and line.short)
    yield from (line for line in order if line.form == SHORT)
    yield from (line for line in order if line.form == KEEP)


def _heading(title: str, left_out: int | None) -> str:
    """The title, with how many lines were left out (unless `left_out` is None)."""
    return f"{title} ({left_out} weaker lines left out):" if left_out else f"{title}:"


def _render(heading: str, lines: list[Line]) -> str:
    """The heading and the lines still there, in conversation order ("" when none is and
    the heading says nothing was left out)."""
    kept = [line.render() for line in lines if line.form != GONE]
    return "\n".join([heading, *kept]) if kept or "left out" in heading else ""


def _fit_lines(title: str, lines: list[Line], room: int, count: Count, left_out: int | None) -> str:
    """The lines rendered in `room` tokens, the weakest shrunk or gone first. Each step is
    judged by the heading's count plus the sum of the lines' (cheap: a line's tokens do not
    change with its neighbours, but for a few at the joints); the rendered text is counted
    once that fits, and the steps go on while it does not."""
    sizes = {id(line): count(line.render() + "\n") for line in lines}
    body = sum(sizes.values())
    for line in _steps(lines):
        heading = _heading(title, left_out)
        if count(heading) + body <= room and count(out := _render(heading, lines)) <= room:
            return out
        _shrink(line)
        left_out = None if left_out is None else left_out + (line.form == GONE)
        size = count(line.render() + "\n") if line.form == SHORT else 0
        body += size - sizes[id(line)]
        sizes[id(line)] = size
    return _render(_heading(title, left_out), lines)


def _fit(title: str, lines: list[Line], max_tokens: int, count: Count, previous: Previous) -> str:
    """The digest: the previous summary's Earlier block, then the lines under `title`, in at
    most `max_tokens` (by `count`). The Earlier block keeps at least half the budget (or all it
    needs) and gets what the lines leave."""
    earlier = previous.earlier
    room = max_tokens - min(count(earlier), max_tokens // 2) if earlier else max_tokens
    out = _fit_lines(title, lines, room, count, previous.omitted)
    if earlier:
        rest = max_tokens - count(out) - count(EARLIER_HEADER) - 2
        earlier = f"{EARLIER_HEADER}\n{_shorten(earlier, rest, count)}"
        out = f"{earlier}\n{out}" if out else earlier
    return _cut(out, max_tokens, count)


def _shorten(text: str, max_tokens: int, count: Count) -> str:
    """`text` in `max_tokens`: its lines from the middle out go first (a model summary begins
    with the goals and ends with the open requests), a "…" where they were."""
    lines = text.splitlines()
    kept = lines
    for keep in range(len(lines) - 1, 0, -1):  # fewer and fewer lines
        if count("\n".join(kept)) <= max_tokens:
            break
        head = (keep + 1) // 2
        kept = [*lines[:head], "…", *lines[len(lines) - (keep - head) :]]
    return _cut("\n".join(kept), max_tokens, count)


def _cut(text: str, max_tokens: int, count: Count) -> str:
    """`text`, its end cut (with "…") until it takes at most `max_tokens`."""
    if count(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)  # the longest start of the text that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if count(text[:mid] + "…") <= max_tokens else (lo, mid - 1)
    return text[:lo] + "…" if lo else ""


# --- the two summaries --------------------------------------------------------------------------


def _ranked(messages: Sequence[OpenAIMessage], previous: str | None) -> tuple[Previous, list[Line]]:
    """The previous summary taken apart, and its lines with this stretch's, in conversation
    order, ranked."""
    before = parse_previous(previous)
    lines = [replace(line, order=k) for k, line in enumerate(before.lines + _lines_of(messages))]
    return before, _without_repeats(lines)


def fallback_summary(
    messages: Sequence[OpenAIMessage], previous: str | None, max_tokens: int, count: Count
) -> str:
    """A deterministic digest of a stretch of conversation (OpenAI messages) on top of the
    previous summary, in at most `max_tokens`: the previous digest's lines are ranked again
    with the new ones; a previous model summary opens it as the Earlier block. Only the lines
    that earn their tokens (`earning`): the digest is as short as they are, and the room it
    leaves goes to the newest messages."""
    before, lines = _ranked(messages, previous)
    kept = earning(lines)
    before.omitted += len(lines) - len(kept)
    return _fit(DIGEST_TITLE, kept, max_tokens, count, before)


# --- the lines that earn their tokens -----------------------------------------------------------
# Measured on natural conversation (bench/memory_prose.py, bench/lib/prose_*): an everyday
# statement kept as a digest line holds less of what later questions need than the same tokens
# of the newest messages (a question asks about what was said recently more often than not, and
# without a model the digest cannot tell which sentence a paraphrased question will need). What
# the newest messages cannot stand in for: the user's explicit instructions, and the rare names,
# numbers and files a line names (a seed, a preset, a file: asked for by description, any age).


def earning(lines: list[Line]) -> list[Line]:
    """The lines worth a place in the digest, in their order: no question; the user's
    instructions, and lines that name, count or file something rare in the stretch
    (`distinctive`)."""
    rare = distinctive((line.text, line.facts) for line in lines)
    return [
        line
        for line in lines
        if not _REPEATS.sub("", line.text).rstrip().endswith("?")
        and (line.tier == 3 or (line.tier == 2 and any(norm(f) in rare for f in line.facts)))
    ]


def split_facts(summary: str) -> tuple[str, str]:
    """A model summary and the facts block kept beside it ("" when it has none)."""
    text, _, facts = summary.partition(f"\n\n{FACTS_HEADER}")
    return text, facts


def facts_block(
    messages: Sequence[OpenAIMessage], previous: str | None, max_tokens: int, count: Count
) -> str:
    """The lines kept verbatim beside a model summary, which may paraphrase them away: of this
    stretch and of the previous summary (its facts block, or its lines if it was a digest),
    ranked as in the digest, without chatter and repeats, in at most `max_tokens`. None is
    left out for being in the model's summary: the next summary may drop it."""
    lines = [line for line in _ranked(messages, previous)[1] if line.tier > 1]
    return _fit_lines(FACTS_TITLE, lines, max_tokens, count, None)
