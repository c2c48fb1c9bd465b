"""Whether a model's summary can be trusted. A summary goes into every later request, so a bad
one does lasting harm: one that hit its token limit (cut mid-thought), repeats itself, echoes
the conversation back, contains chat-template tokens, or lacks the sections asked for is
rejected, and the deterministic digest stands in (measured on a real local server: a tiny model
returned repeated template tokens, every call cut at its limit)."""

from __future__ import annotations

import re
from collections import Counter

SECTIONS = (
    "## Goals",
    "## Workflow",
    "## Decisions",
    "## Preferences",
    "## Open requests",
)
TEMPLATE_TOKENS = re.compile(
    r"<\|[A-Za-z_]+\|>|<(?:start|end)_of_turn>|\[/?INST\]|</?s>|<bos>|<eos>|<\|im_(?:start|end)\|>"
)
_WORD = re.compile(r"\w+")
ECHO_SHINGLE = 8  # words: a run this long found in the input counts as copied
ECHO_SHARE = 0.6  # of the summary's runs copied from the input: an echo, not a summary


def problem(text: str, finish_reason: str | None, source: str) -> str | None:
    """Why `text` is not a usable summary of `source`, or None when it is."""
    if finish_reason == "length":
        return "it hit its token limit"
    if not text.strip():
        return "it is empty"
    if TEMPLATE_TOKENS.search(text):
        return "it contains chat template tokens"
    if _repeats(text):
        return "it repeats itself"
    found = sum(1 for heading in SECTIONS if heading.lower() in text.lower())
    if found < 3:
        return f"it lacks the requested sections ({found} of {len(SECTIONS)})"
    if _echo_share(text, source) > ECHO_SHARE:
        return "it copies the conversation instead of summarizing it"
    return None


def _repeats(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) > 12]
    if lines and Counter(lines).most_common(1)[0][1] >= 3:
        return True
    words = _WORD.findall(text.lower())
    return len(words) >= 60 and len(set(words)) / len(words) < 0.25


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + ECHO_SHINGLE]) for i in range(len(words) - ECHO_SHINGLE + 1)}


def _echo_share(text: str, source: str) -> float:
    mine = _shingles(text)
    return len(mine & _shingles(source)) / len(mine) if mine else 0.0
