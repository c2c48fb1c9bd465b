"""Ranking passages by the words of a query without SQLite's FTS5, for a Python whose SQLite
was built without it: BM25 (the ranking FTS5 uses) computed here over the passages that a plain
SQL match (`LIKE`) found, the title weighing twice its text as in the FTS5 query. No stemming,
so "samplers" does not find "sampler": a fallback, slower and a little less precise."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"\w+", re.UNICODE)
K1, B = 1.2, 0.75  # FTS5's BM25 constants
TITLE_WEIGHT = 2.0


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def like_pattern(term: str) -> str:
    """A LIKE pattern that finds `term` anywhere (with `ESCAPE '\\'`)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def bm25(terms: Sequence[str], documents: Sequence[tuple[str, str]]) -> list[float]:
    """The BM25 score of each (title, text) for `terms` (higher is better; 0: no term)."""
    fields = [(Counter(words(title)), Counter(words(text))) for title, text in documents]
    n = len(fields)
    if not n:
        return []
    lengths = [sum(title.values()) * TITLE_WEIGHT + sum(text.values()) for title, text in fields]
    average = sum(lengths) / n or 1.0
    scores = [0.0] * n
    for term in dict.fromkeys(terms):
        having = sum(1 for title, text in fields if term in title or term in text)
        if not having:
            continue
        idf = math.log((n - having + 0.5) / (having + 0.5) + 1)
        for i, (title, text) in enumerate(fields):
            frequency = TITLE_WEIGHT * title[term] + text[term]
            if frequency:
                norm = K1 * (1 - B + B * lengths[i] / average)
                scores[i] += idf * frequency * (K1 + 1) / (frequency + norm)
    return scores
