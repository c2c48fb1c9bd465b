"""Hold back streamed text that may be a tool call written as text, until it is decided
(issue 40).

Text is shown as it streams, except from where a call could begin: a call's marker
(`<tool_call>`, `[TOOL_CALLS]`, … in `call_text.TAGS`, or the start of one), or a line that
opens like an unmarked call (`{`, `[`, a code fence, `name(`). Held text is shown as soon as it
cannot be a call any more (a fence in another language, JSON followed by more words, a line of
prose); what is still held when the step ends is read by `call_text.find_calls`: its calls
become tool calls, the rest is shown as text. So text that turns out to be a call is never
shown, and prose waits at most for the end of the line or block it is in.

A hold longer than `HOLD_NOTE_SECONDS` (a long call written slowly) is announced with a status
line, so the user never waits in silence; `longest` is what the benchmark reports.
"""

from __future__ import annotations

import difflib
import re
import time
from collections import deque
from collections.abc import Callable

from .call_repair import Schema, normalized
from .call_text import CALL_KEYS, TAGS, Found, find_calls, first_marker

RECHECK_FREE = 256  # held text up to this long is looked at again with every piece
HOLD_NOTE_SECONDS = 8.0  # a hold this long shows "Writing a tool call…" (within the 15 s rule)
_CALL_LANGS = ("json", "tool_call", "tool_code", "", "python", "javascript", "js")
_LONGEST_TAG = max(len(t) for t in TAGS)
_TAG_STARTS = frozenset(t[0] for t in TAGS)
_FIRST_KEY = re.compile(r"""\[?\s*\{\s*["']?([\w$-]*)(["']?\s*:)?""")
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_BRACKETED = re.compile(r"\[([\w.\-]*)\]?\s*(?:\n|$)")


def _partial_tag(text: str) -> int:
    """Length of the longest suffix of `text` that begins a marker."""
    window = text[-_LONGEST_TAG + 1 :]
    for i, ch in enumerate(window):
        if ch in _TAG_STARTS and any(t.startswith(window[i:]) for t in TAGS):
            return len(window) - i
    return 0


def _balanced_end(text: str, open_: str, close: str) -> int | None:
    """Where the bracketed value that opens `text` ends (quotes of either kind respected), or
    None while it is still open."""
    depth, quote, escaped = 0, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in open_:
            depth += 1
        elif ch in close:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _line_could_be_call(line_on: str, names: frozenset[str]) -> bool:
    """Whether the text from a line's start on may still be (the beginning of) an unmarked
    call that ends the text. `names`: the offered tools' names, normalized (a line that begins
    with a word is held only while the word may be one of them)."""
    head = line_on.lstrip(" \t")
    if not head:
        return True  # (nothing on the line yet)
    if head.startswith("```") or "```".startswith(head):
        return _fence_could_be_call(head, names)
    bracketed = _BRACKETED.match(head)  # LM Studio's `[name]` line, then JSON
    if bracketed and _may_name(bracketed.group(1), names):
        return True
    if head[0] in "{[":
        if not _json_opens_like_call(head):
            return False
        end = _balanced_end(head, "{[", "}]")
        return end is None or not head[end:].strip()
    ident = _IDENT.match(head)
    if ident is None or not _may_name(ident.group(), names):
        return False
    rest = head[ident.end() :]
    if not rest:
        return True  # a word so far: maybe a tool's name
    if not rest.startswith("("):
        return False
    end = _balanced_end(rest, "({[", ")}]")
    return end is None or not rest[end:].strip()


def _may_name(word: str, names: frozenset[str]) -> bool:
    """Whether a word at a line's start may be (the start of) a call's name: an offered
    tool's, written any way `call_repair.resolve_name` reads, or `print(default_api.…`."""
    typed = normalized(re.sub(r"^(print\(?|default_api\.?|functions\.?)+", "", word))
    return not typed or any(n.startswith(typed) for n in names) or resolve_hint(typed, names)


def resolve_hint(typed: str, names: frozenset[str]) -> bool:
    """A whole word close to one name (`call_repair`'s close match), once it is long enough."""
    return len(typed) >= 5 and bool(difflib.get_close_matches(typed, names, n=1, cutoff=0.85))


def _json_opens_like_call(head: str) -> bool:
    """Whether JSON that begins `head` may still be a call (`call_text.call_of`): an object,
    or a list of objects, whose first key is one a call has (a workflow's `{"3": …` is not)."""
    match = _FIRST_KEY.match(head)
    if match is None:  # ("[" or "{" and blanks so far, or a list of something else)
        return not head.lstrip("[ \t\n")
    key, done = match.group(1), match.group(2) is not None
    return key in CALL_KEYS if done else any(k.startswith(key) for k in CALL_KEYS)


def _fence_could_be_call(head: str, names: frozenset[str]) -> bool:
    if "\n" not in head:
        typed = head[3:].strip().lower()
        return any(lang.startswith(typed) for lang in _CALL_LANGS)
    lang = head[3 : head.index("\n")].strip().lower()
    if lang not in _CALL_LANGS:
        return False
    body = head[head.index("\n") + 1 :]
    close = body.find("```")
    if close >= 0 and body[close + 3 :].strip():
        return False
    opening = body.lstrip()
    if not opening or opening[0] in "{[":
        return _json_opens_like_call(opening)
    ident = _IDENT.match(opening)
    return ident is not None and _may_name(ident.group(), names)


class CallHold:
    """One step's text, shown as it streams except what may be a call."""

    def __init__(self, tools: dict[str, Schema], clock: Callable[[], float] = time.monotonic):
        self.tools = tools
        self.names = frozenset(normalized(t) for t in tools)
        self.text = ""  # the step's text so far
        self.shown = 0  # how much of it is shown
        self.clock = clock
        self._arrived: deque[tuple[int, float]] = deque()  # (where a piece began, when)
        self.longest = 0.0  # the longest any text was held, in seconds
        self.noted = False  # the long hold was announced
        self._recheck_at = 0  # (held text this long is looked at again: `feed`)

    def feed(self, text: str) -> str:
        """The text to show now, of all fed so far. A long held text is looked at again only
        once it has grown by a quarter (each look reads it all: a 20 KB workflow in a JSON
        block would take seconds), so prose after a long block shows a little later."""
        self._arrived.append((len(self.text), self.clock()))
        self.text += text
        if not self.tools:
            return self._show(len(self.text))
        held = len(self.text) - self.shown
        if held > RECHECK_FREE and held < self._recheck_at:
            return ""
        start = self._hold_from()
        if start < len(self.text):  # (the blank before a held call is held with it)
            start = self.shown + len(self.text[self.shown : start].rstrip())
        shown = self._show(start)
        self._recheck_at = (len(self.text) - self.shown) * 5 // 4
        return shown

    def _hold_from(self) -> int:
        """Where the held text begins (len(text): nothing held)."""
        text, start = self.text, self.shown
        mark = first_marker(text, start)  # (a marker in code is quoted, not a call)
        tagged = mark[0] if mark else len(text) - _partial_tag(text[start:])
        first = text.rfind("\n", 0, start) + 1  # the line the unshown text starts in
        lines = [first, *(start + m.end() for m in re.finditer("\n", text[start:tagged]))]
        for line in lines:
            if line < start and text[line:start].strip():
                continue  # (part of this line is shown: a call would have begun with it)
            if _line_could_be_call(text[line:tagged], self.names):
                return max(line, start)
        return tagged

    def _show(self, upto: int) -> str:
        """Show the text up to `upto`; how long its oldest character waited is measured."""
        if upto <= self.shown:
            return ""
        out = self.text[self.shown : upto]
        if out.strip():
            self.longest = max(self.longest, self.held_for())
        self.shown = upto
        while len(self._arrived) > 1 and self._arrived[1][0] <= self.shown:
            self._arrived.popleft()
        return out

    def held_for(self) -> float:
        """How long the oldest text held now has waited (0: nothing held)."""
        if not self._arrived or not self.text[self.shown :].strip():
            return 0.0
        return self.clock() - self._arrived[0][1]  # (the piece the first held character is in)

    def overdue(self) -> bool:
        """A hold has lasted HOLD_NOTE_SECONDS and was not announced yet (then it is)."""
        if self.noted or self.held_for() < HOLD_NOTE_SECONDS:
            return False
        self.noted = True
        return True

    def finish(self, recover: bool = True) -> tuple[str, Found | None, str]:
        """At the step's end: (text to show before the calls, the calls found, text to show
        after them); no calls found (or none to look for): all of it is text."""
        held = self.text[self.shown :]
        if held.strip():
            self.longest = max(self.longest, self.held_for())
        self.shown = len(self.text)
        context = self.text[: len(self.text) - len(held)]
        found = find_calls(held, self.tools, context) if self.tools and recover else None
        if found is None:
            return held, None, ""
        before, after = found.before.rstrip(), found.after.strip()
        return before, found, after
