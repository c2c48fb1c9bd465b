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
    """The BM25 score of each (title, text) for `terms` (higher is better; 0: no term), with
    the statistics of `documents` themselves."""
    fields = [(Counter(words(title)), Counter(words(text))) for title, text in documents]
    if not fields:
        return []
    lengths = [sum(title.values()) * TITLE_WEIGHT + sum(text.values()) for title, text in fields]
    frequencies = [
        {
            t: TITLE_WEIGHT * title[t] + text[t]
            for t in dict.fromkeys(terms)
            if t in title or t in text
        }
        for title, text in fields
    ]
    return scores(frequencies, lengths, len(fields), sum(lengths) / len(fields))


def scores(
    frequencies: Sequence[dict[str, float]],
    lengths: Sequence[float],
    total: int,
    average: float,
    fts5: bool = False,
) -> list[float]:
    """BM25 for documents given as their terms' frequencies and their lengths, within a
    collection of `total` documents of `average` length (in the lengths' unit) that holds at
    least these: the statistics are the collection's, whatever part of it was matched. `fts5`:
    FTS5's weight of a word, log((N - n + 0.5) / (n + 0.5)), almost none for a word in more than
    half of the documents; else log(1 + that), always some."""
    having = Counter(t for frequency in frequencies for t in frequency)
    total = max(total, len(frequencies))
    average = average or 1.0
    idf = {t: _idf(total, n, fts5) for t, n in having.items()}
    out = []
    for frequency, length in zip(frequencies, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        out.append(sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in frequency.items() if f))
    return out


def _idf(total: int, having: int, fts5: bool) -> float:
    ratio = (total - having + 0.5) / (having + 0.5)
    return max(math.log(ratio), 1e-6) if fts5 else math.log(ratio + 1)
