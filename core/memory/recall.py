"""Looking back: a thread's whole history, what the context engine summarized or dropped
included, searched by words, meaning and time (`search`) and read as a stretch (`read`), from
the conversation index (core/store/conversation_index.py). The `searchConversation` tool
(core/memory/recall_tool.py) and the engine's per-turn recall use these.

By words: BM25 over the thread's passages with the thread's own statistics (core/memory/
by_words.py: FTS5 with porter stemming, or plain matching where SQLite has no FTS5), the
query's words less common ones (`STOPWORDS`: "what did we say about" names nothing). By
meaning, where embeddings are available (core/store/embeddings.py): the cosine of the query's
vector and each passage's, so a paraphrase that shares no word with the answer can still be
found. The two rankings, each less the messages the caller already has (`exclude_ids`) and
within an optional time range, are fused by reciprocal rank, the one by meaning weighing
SEMANTIC_WEIGHT of the one by words; one hit per message (its best passage), best first.

SEMANTIC_WEIGHT, measured on real conversations: LoCoMo (snap-research/locomo, CC BY-NC 4.0,
held out: never in the repository), its 10 conversations as 10 threads of one store and its 1,540
questions asked as written, recall@5 of the tool's result: words alone 0.747, fused at 0.01
0.747, at 0.1 0.723, at 0.25 0.672, at 0.5 0.665 (at equal weight it had lost 0.507 -> 0.371:
greetings, near in meaning to any question naming the speakers, ranked first). Every weight
that lets meaning reorder the word matches loses there. On the generated conversations of
bench/recall_conversation.py, topic queries, 0.5 gained (0.671 -> 0.758 @5) and 0.01 nothing;
the real conversations win. At 0.01 meaning fills in where too few messages hold the query's
words (a paraphrase sharing no word with its answer: 16/30 found, as at 0.5, against 0/30 by
words, bench/recall_paraphrase.py) and otherwise changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..store import Store, embeddings, ensure_indexed, text_search, vectors_of
from ..tokens import estimate_tokens
from . import by_words

QUERY_TERMS = 32  # the most words of a query that are searched for
AROUND = 24  # messages on each side of the one a stretch is read around, at most
FUSED = 20  # the best messages of each ranking that are fused (at least `limit`)
RRF_K = 60  # reciprocal rank fusion's constant (its authors'; a rank counts 1 / (RRF_K + rank))
SEMANTIC_WEIGHT = 0.01  # the ranking by meaning's share in the fusion (the module docstring)
_COMMON = """a about above after again all also am an and any are as at be been before being below
between both but by can could did do does doing done down during each earlier either else ever
few for from further had has have having he her here hers him his how i if in into is it its
itself just let me more most my myself no nor not now of off on once only or other our ours out
over own please recently said same say says she should so some such tell than that the their
theirs them then there these they this those through to today told too under until up us very
via was we were what when where which while who whom why will with would yesterday yet you your
yours"""
STOPWORDS = frozenset(_COMMON.split())  # what a question about the past is made of, not its topic
Scored = tuple[int, str, float]  # (passage id, message id, score)
Ranked = list[Scored]  # best first


@dataclass(frozen=True)
class Hit:
    """A message that matches a search, by its best passage."""

    message_id: str
    position: int
    role: str
    created_at: float  # epoch seconds
    text: str  # the passage
    # Higher is better. By words only: BM25. Fused: the sum over the two rankings of
    # 1 / (RRF_K + the message's rank there), from 2 / 61 (first in both) down: it compares
    # the hits of one search, not those of two.
    score: float


@dataclass(frozen=True)
class Said:
    """One message of a stretch, as indexed (its text and its tool calls' digests)."""

    message_id: str
    position: int
    role: str
    created_at: float
    text: str


@dataclass(frozen=True)
class Stretch:
    messages: tuple[Said, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(f"{m.role}: {m.text}" for m in self.messages)


def query_terms(text: str) -> list[str]:
    """The words searched for: distinct, in order, common ones left out, at most
    QUERY_TERMS."""
    words = dict.fromkeys(text_search.words(text))
    kept = [w for w in words if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS]
    return kept[:QUERY_TERMS]


async def search(
    store: Store,
    thread_id: str,
    query: str,
    *,
    before: float | None = None,
    after: float | None = None,
    prefer: tuple[float, float] | None = None,
    exclude_ids: Collection[str] = (),
    limit: int = 5,
) -> list[Hit]:
    """The thread's messages that best match `query`, created in [after, before) when given,
    less `exclude_ids`, best first: at most `limit`, one hit per message. `prefer`, a time
    range [start, end): the best matches in it first, the rest topped up from the others. By
    words, and by meaning too where embeddings are available and SEMANTIC_WEIGHT is not 0; a
    query of common words only names nothing (no hits)."""
    await ensure_indexed(store, thread_id)
    terms = query_terms(query)
    if not terms or limit < 1:
        return []
    span = (after if after is not None else float("-inf"), before or float("inf"))
    lexical = await by_words.ranked(store, thread_id, terms)
    model = await embeddings.embedder() if SEMANTIC_WEIGHT > 0 else None
    excluded = set(exclude_ids)

    async def best(within: tuple[float, float], n: int) -> Ranked:
        by_terms = [(p, m, s) for p, m, s, at in lexical if within[0] <= at < within[1]]
        if model is None:
            return per_message(by_terms, excluded, n)
        depth = max(n, FUSED)
        nearest = await by_meaning(store, model, thread_id, query, within)
        return fuse(per_message(by_terms, excluded, depth), per_message(nearest, excluded, depth))[
            :n
        ]

    if prefer is None:
        return await _hits(store, await best(span, limit))
    # (a match of the period holds a query word: by meaning, every message is near in some
    # degree, and that period's nearest would always fill the result)
    worded = {mid for _, mid, _, _ in lexical}
    within = (max(span[0], prefer[0]), min(span[1], prefer[1]))
    preferred = [r for r in await best(within, limit) if r[1] in worded]
    chosen = {mid for _, mid, _ in preferred}
    others = [r for r in await best(span, limit + len(chosen)) if r[1] not in chosen]
    return await _hits(store, [*preferred, *others][:limit])


def per_message(ranked: Iterable[Scored], excluded: set[str], limit: int) -> Ranked:
    """The best passage of each message not `excluded`, best first, at most `limit`."""
    best: dict[str, Scored] = {}
    for passage, mid, score in ranked:
        if mid not in excluded and mid not in best:
            best[mid] = (passage, mid, score)
            if len(best) == limit:
                break
    return list(best.values())


def fuse(lexical: Ranked, semantic: Ranked, weight: float | None = None) -> Ranked:
    """Weighted reciprocal rank fusion of a ranking by words and one by meaning: a message
    scores 1 / (RRF_K + its rank by words) + `weight` (SEMANTIC_WEIGHT) / (RRF_K + its rank by
    meaning), rank 1 the first; its passage is the one of the ranking where it stands highest
    (the lexical one's on a tie, as is the order of equal scores)."""
    weight = SEMANTIC_WEIGHT if weight is None else weight
    scores: dict[str, float] = {}
    passages: dict[str, tuple[int, int]] = {}  # message id -> (its best rank, that passage)
    for ranking, share in ((lexical, 1.0), (semantic, weight)):
        for rank, (passage, mid, _) in enumerate(ranking, 1):
            scores[mid] = scores.get(mid, 0.0) + share / (RRF_K + rank)
            if mid not in passages or rank < passages[mid][0]:
                passages[mid] = (rank, passage)
    order = sorted(scores, key=lambda mid: -scores[mid])
    return [(passages[mid][1], mid, scores[mid]) for mid in order]


async def by_meaning(
    store: Store,
    model: embeddings.Embedder,
    thread_id: str,
    query: str,
    span: tuple[float, float],
) -> Iterator[Scored]:
    """Every passage of the thread in the span, the nearest to `query` in meaning first (its
    cosine the score): the semantic side of `search` (bench/recall_paraphrase.py measures it
    alone too). Passages without a vector yet get one now, stored (`vectors_of`)."""
    rows = await store.fetchall(
        "SELECT p.id, m.id, v.vector, CASE WHEN v.vector IS NULL THEN p.text END "
        "FROM message_passages p JOIN messages m ON m.thread_id = p.thread_id "
        "AND m.id = p.message_id LEFT JOIN passage_vectors v ON v.passage_id = p.id "
        "WHERE p.thread_id = ? AND m.created_at >= ? AND m.created_at < ?",
        (thread_id, *span),
    )
    stored: list[bytes | None] = [r[2] for r in rows]
    missing = [i for i, vector in enumerate(stored) if vector is None]
    computed: dict[int, bytes] = {}
    if missing:
        made = await vectors_of(store, model, [(rows[i][0], rows[i][3]) for i in missing])
        computed = dict(zip(missing, made, strict=True))
    vectors = [computed[i] if vector is None else vector for i, vector in enumerate(stored)]
    nearest = await asyncio.to_thread(model.ranked, query, vectors)
    return ((rows[i][0], rows[i][1], score) for i, score in nearest)


async def _hits(store: Store, chosen: Ranked) -> list[Hit]:
    if not chosen:
        return []
    rows = await store.fetchall(
        "SELECT p.id, m.id, m.position, m.role, m.created_at, p.text FROM message_passages p "
        "JOIN messages m ON m.thread_id = p.thread_id AND m.id = p.message_id "
        f"WHERE p.id IN ({','.join('?' * len(chosen))})",
        tuple(passage for passage, _, _ in chosen),
    )
    by_id = {r[0]: r for r in rows}
    return [
        Hit(r[1], r[2], r[3], r[4], r[5], score)
        for passage, _, score in chosen
        if (r := by_id.get(passage)) is not None
    ]


async def said(
    store: Store, thread_id: str, first: int, last: int, roles: Sequence[str] = ()
) -> list[Said]:
    """The thread's messages at positions first..last (with words: a message of step markers
    only has none), in order; only those of `roles` when given."""
    await ensure_indexed(store, thread_id)
    rows = await store.fetchall(
        "SELECT m.id, m.position, m.role, m.created_at, p.text FROM messages m "
        "JOIN message_passages p ON p.thread_id = m.thread_id AND p.message_id = m.id "
        "WHERE m.thread_id = ? AND m.position BETWEEN ? AND ? ORDER BY m.position, m.seq, p.part",
        (thread_id, first, last),
    )
    return _joined(r for r in rows if not roles or r[2] in roles)


async def at_positions(store: Store, thread_id: str, positions: Collection[int]) -> list[Said]:
    """The thread's messages at `positions` (those with words), in order."""
    if not positions:
        return []
    await ensure_indexed(store, thread_id)
    rows = await store.fetchall(
        "SELECT m.id, m.position, m.role, m.created_at, p.text FROM messages m "
        "JOIN message_passages p ON p.thread_id = m.thread_id AND p.message_id = m.id "
        f"WHERE m.thread_id = ? AND m.position IN ({','.join('?' * len(positions))}) "
        "ORDER BY m.position, m.seq, p.part",
        (thread_id, *positions),
    )
    return _joined(rows)


def _joined(rows: Iterable[Sequence[Any]]) -> list[Said]:
    """Said messages from (id, position, role, created_at, passage text) rows in order, the
    passages of a message joined."""
    out: list[Said] = []
    for mid, position, role, created_at, text in rows:
        if out and out[-1].message_id == mid:
            out[-1] = Said(mid, position, role, created_at, f"{out[-1].text}\n{text}")
        else:
            out.append(Said(mid, position, role, created_at, text))
    return out


async def read(
    store: Store,
    thread_id: str,
    *,
    around: str | None = None,
    positions: tuple[int, int] | None = None,
    max_tokens: int = 600,
) -> Stretch | None:
    """A stretch of the thread within about `max_tokens` (estimated): the messages `around`
    one (by id: it first, then its neighbours, the nearest first, earlier ones before later
    ones at the same distance), or those at `positions` (first, last) from the first on. A
    message longer than what is left is cut. None: no such message."""
    if around is not None:
        row = await store.fetchone(
            "SELECT position FROM messages WHERE thread_id = ? AND id = ?", (thread_id, around)
        )
        if row is None:
            return None
        center = row[0]
        found = await said(store, thread_id, center - AROUND, center + AROUND)
        order = sorted(found, key=lambda m: (m.message_id != around, abs(m.position - center)))
    else:
        first, last = positions if positions is not None else (0, -1)
        order = await said(store, thread_id, first, last)
    kept: list[Said] = []
    left = max_tokens
    for message in order:
        tokens = estimate_tokens(message.text)
        if tokens > left:
            if kept and left < 40:
                break
            message = _cut(message, left)
            tokens = left
        kept.append(message)
        left -= tokens
        if left <= 0:
            break
    kept.sort(key=lambda m: m.position)
    return Stretch(tuple(kept))


def _cut(message: Said, tokens: int) -> Said:
    """The message's text within about `tokens` (cut at a word, marked)."""
    text = message.text
    chars = max(1, len(text) * tokens // max(estimate_tokens(text), 1))
    head = text[:chars].rsplit(" ", 1)[0] if " " in text[:chars] else text[:chars]
    return Said(message.message_id, message.position, message.role, message.created_at,
                head.rstrip() + " …")  # fmt: skip
