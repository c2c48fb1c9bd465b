"""A text in passages of about PASSAGE_TOKENS, the units a search ranks and returns: a
project's documents (core/files/projects.py) and the conversation's messages
(core/store/conversation_index.py)."""

from __future__ import annotations

import re

from .packing import aiming, pack, within
from .tokens import TokenCounter

# A passage aims at PASSAGE_TOKENS and never passes MAX_PASSAGE_TOKENS: short enough that BM25
# ranks the paragraph that answers (a long passage dilutes its terms) and that a few fit a
# small window's retrieval share (10% of a 4K budget is ~300 tokens), long enough to keep a
# paragraph with its context.
PASSAGE_TOKENS = 120
MAX_PASSAGE_TOKENS = 200
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def split_passages(text: str, count: TokenCounter) -> list[tuple[str, int]]:
    """Passages of about PASSAGE_TOKENS (never more than MAX_PASSAGE_TOKENS), cut at paragraph
    boundaries; a paragraph too long on its own is cut at sentences, a sentence at words, a
    word (or a run without spaces: CJK text, base64) at characters. Each with its token
    count."""
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if paragraph:
            pieces.extend(_fitted(paragraph, count))
    # each piece is within MAX_PASSAGE_TOKENS; a passage is counted whole
    closes = aiming(PASSAGE_TOKENS, MAX_PASSAGE_TOKENS)
    return pack(((p, count.text(p)) for p in pieces), "\n\n", closes, count.text)


def _fitted(paragraph: str, count: TokenCounter) -> list[str]:
    if count.text(paragraph) <= MAX_PASSAGE_TOKENS:
        return [paragraph]
    # (a line's first unit is not counted: only what it grows to is compared)
    units = ((unit, 0) for unit in _units(paragraph, count))
    return [line for line, _ in pack(units, " ", within(PASSAGE_TOKENS), count.text)]


def _units(paragraph: str, count: TokenCounter) -> list[str]:
    units: list[str] = []
    for sentence in _SENTENCE.split(paragraph):
        if count.text(sentence) <= PASSAGE_TOKENS:
            units.append(sentence)
            continue
        words = sentence.split()
        step = 60
        for i in range(0, len(words), step):
            units.extend(_within(" ".join(words[i : i + step]), count))
    return units


def _within(run: str, count: TokenCounter) -> list[str]:
    """`run` in pieces of at most PASSAGE_TOKENS: halved at a space while it has one, a single
    word cut at characters."""
    if count.text(run) <= PASSAGE_TOKENS:
        return [run]
    words = run.split(" ")
    if len(words) == 1:
        return _cut(run, count)
    half = len(words) // 2
    return _within(" ".join(words[:half]), count) + _within(" ".join(words[half:]), count)


def _cut(word: str, count: TokenCounter) -> list[str]:
    """A word too long for a passage (a 500 KB one-word document was one passage of 270,000
    tokens) in pieces of at most PASSAGE_TOKENS, each as many characters as its density
    allows: the whole word's density first, a piece over the limit shortened in proportion."""
    width = max(1, len(word) * PASSAGE_TOKENS // count.text(word))
    pieces: list[str] = []
    start = 0
    while start < len(word):
        piece = word[start : start + width]
        while (tokens := count.text(piece)) > PASSAGE_TOKENS:
            width = min(len(piece) - 1, len(piece) * PASSAGE_TOKENS // tokens)
            piece = piece[:width]
        pieces.append(piece)
        start += len(piece)
    return pieces
