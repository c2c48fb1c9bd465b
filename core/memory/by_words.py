"""Looking back by words: BM25 over one thread's passages with that thread's own statistics.

FTS5's `bm25()` weighs a word by how rare it is in the whole index, every thread of the store
together: a speaker's name or a project's word, said in every other message of one thread but
in no other thread, counted as rare and ranked the thread's small talk first (a public
long-conversation benchmark, 10 conversations in one store: recall@5 0.507 alone, 0.438
together). Here a word's weight is its rarity in the thread searched (the number of its
passages that hold it, of all its passages), and a passage's length is compared with the
thread's average, so a thread ranks the same whatever else the store holds. With FTS5, a word
weighs as FTS5 weighs it (`text_search.scores`); without, as core/store/text_search.py always did.

With FTS5 (porter stemming): one match per query word, in one statement, gives the thread's
passages that hold it (and how often, roughly: `_with_fts5`).
Without FTS5: the passages holding a word (`LIKE`), counted here by whole words (no stemming;
core/store/text_search.py). Lengths are in characters, for both a passage and the average.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Sequence

from ..store import Store, text_search, thread_term

Matched = tuple[int, str, float, float]  # (passage id, message id, score, message created_at)


async def ranked(store: Store, thread_id: str, terms: Sequence[str]) -> list[Matched]:
    """Every passage of the thread that holds a term, best first (ties: the earlier)."""
    if not terms:
        return []
    total, average = await _statistics(store, thread_id)
    if store.full_text:
        found = await _with_fts5(store, thread_id, terms)
    else:
        found = await _without_fts5(store, thread_id, terms)
    rows = list(found.values())
    frequencies, lengths = [r[3] for r in rows], [r[2] for r in rows]
    scores = text_search.scores(frequencies, lengths, total, average, fts5=store.full_text)
    out = [(r[0], r[1], score, r[4]) for r, score in zip(rows, scores, strict=True) if score > 0]
    out.sort(key=lambda m: (-m[2], m[0]))
    return out


_AVERAGES: OrderedDict[tuple[str, str, int, int], float] = OrderedDict()  # the latest ones
KEPT = 64  # threads whose average passage length is kept


async def _statistics(store: Store, thread_id: str) -> tuple[int, float]:
    """The thread's number of passages and their average length, the average kept while its
    passages stay the same (their number and the newest: a new message, a regenerated or a
    deleted one changes them; computing it took 1.5 ms of a search on a 2,000-message thread)."""
    row = await store.fetchone(
        "SELECT COUNT(*), MAX(id) FROM message_passages WHERE thread_id = ?", (thread_id,)
    )
    if row is None or not row[0]:
        return 0, 1.0
    key = (str(store.path), thread_id, row[0], row[1])
    average = _AVERAGES.get(key)
    if average is None:
        found = await store.fetchone(
            "SELECT AVG(LENGTH(text)) FROM message_passages WHERE thread_id = ?", (thread_id,)
        )
        average = float(found[0]) if found and found[0] else 1.0
        _AVERAGES[key] = average
        if len(_AVERAGES) > KEPT:
            _AVERAGES.popitem(last=False)
    else:
        _AVERAGES.move_to_end(key)
    return row[0], average


# (passage id, message id, length, {term: occurrences}, created_at) by passage id
_Found = dict[int, tuple[int, str, int, dict[str, float], float]]


async def _with_fts5(store: Store, thread_id: str, terms: Sequence[str]) -> _Found:
    # (how often: the term's own spelling counted in the text (as the query writes it: lower
    # case), at least once: FTS5 matched it or a word of its stem. Counting FTS5's own tokens
    # with `highlight()` took 7 of the 13 ms a search took on a 2,000-message thread.)
    one = (
        "SELECT {i}, p.id, p.message_id, LENGTH(p.text), m.created_at, "
        "(LENGTH(p.text) - LENGTH(REPLACE(p.text, ?, ''))) / ? FROM message_index "
        "JOIN message_passages p ON p.id = message_index.rowid JOIN messages m ON "
        "m.thread_id = p.thread_id AND m.id = p.message_id WHERE message_index MATCH ?"
    )
    sql = " UNION ALL ".join(one.format(i=i) for i in range(len(terms)))
    mark = thread_term(thread_id)
    params = [(t, len(t), f'thread : "{mark}" AND "{t}"') for t in terms]
    rows = await store.fetchall(sql, tuple(v for p in params for v in p))
    found: _Found = {}
    for i, pid, mid, length, created_at, count in rows:
        entry = found.setdefault(pid, (pid, mid, length, {}, created_at))
        entry[3][terms[i]] = float(max(count, 1))
    return found


async def _without_fts5(store: Store, thread_id: str, terms: Sequence[str]) -> _Found:
    match = " OR ".join(["p.text LIKE ? ESCAPE '\\'"] * len(terms))
    rows = await store.fetchall(
        "SELECT p.id, p.message_id, p.text, m.created_at FROM message_passages p JOIN messages "
        "m ON m.thread_id = p.thread_id AND m.id = p.message_id WHERE p.thread_id = ? "
        f"AND ({match})",
        (thread_id, *map(text_search.like_pattern, terms)),
    )
    found: _Found = {}
    for pid, mid, text, created_at in rows:
        counts = Counter(text_search.words(text))
        frequency = {t: float(counts[t]) for t in terms if counts[t]}
        found[pid] = (pid, mid, len(text), frequency, created_at)
    return found
