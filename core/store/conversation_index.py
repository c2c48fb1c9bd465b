"""The conversation index: every stored message's words stay searchable after the context
engine has summarized or dropped it (docs/DESIGN.md §4, looking back; `core/memory/recall.py`
searches it).

What is indexed of a message is what was said: its text parts, and a one-line digest per tool
call (core/tools/digests.py: the tool, its key arguments, the outcome, the recall id), never a raw
tool output (a workflow graph would drown every word said about it). That text is split into
passages of about PASSAGE_TOKENS to MAX_PASSAGE_TOKENS at sentence ends, short enough that BM25
ranks the sentence that answers and a few fit a result. Passages live in `message_passages`,
deleted with their message (a foreign key), and are indexed by SQLite's FTS5 (`message_index`,
porter stemming; its `thread` column holds one term per thread, `thread_term`, so a search
reads only that thread's postings), or matched by core/store/text_search.py where SQLite has no FTS5
(as the project passages: `Store.full_text` says which, for both).

`index_message` runs inside the transaction that writes the message (core/store/threads.py), so the
index never lags behind the store; a regenerated answer replaces its passages, and the FTS5
rows of deleted messages are swept in the same transaction (`sweep`, `unindex_thread`). The
threads stored before the index existed are indexed on their first search (`ensure_indexed`).

Where embeddings are available (core/store/embeddings.py), each passage also has a vector, in
`passage_vectors` (deleted with its passage: a foreign key). Vectors are not made where messages
are written (that path stays as it was) but at a thread's first search by meaning, for the
passages that have none, in one batch (`vectors_of`: 0.2 s for a 2,000-message thread's 2,500
passages), and stored for the next searches.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
from collections.abc import Iterator

from ..base import UIMessage, UIPart, fingerprint, tool_name_of
from ..tokens import TokenCounter, aiming, estimate_tokens, pack, split_passages
from ..tools import DIGEST_PREFIX, digest_tool_part
from .embeddings import Embedder
from .store import DiskFull, Store

PASSAGE_TOKENS = 60  # a passage is closed once it has this many and the next sentence would
MAX_PASSAGE_TOKENS = 120  # pass this (a single longer sentence is cut: `split_passages`)
# What is indexed of one message: a longer one is a pasted document (project documents are
# for those), whose words would take more room in the index than the whole conversation (a
# 6 MB paste made 25,000 passages) and time at each of its writes.
MAX_INDEXED_CHARS = 32_000
# Its results are other messages again: indexed, its digests would match every later search.
NOT_INDEXED_TOOLS = frozenset({"searchConversation"})

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
# (passage sizes are estimated: exact counts would go through the counter's caches, and a
# size only needs to be about right; a sentence too long is cut by the projects' splitter)
_ESTIMATE = TokenCounter(use_tiktoken=False)


def thread_term(thread_id: str) -> str:
    """The FTS5 term that marks a thread's passages (one token whatever the id holds)."""
    return "t" + fingerprint(thread_id)[:16]


def _units(message: UIMessage) -> Iterator[str]:
    """The message as indexed, in the order of its parts: the sentences of its texts, a
    digest line per tool call."""
    for part in message.get("parts") or ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            yield from (s for s in _SENTENCE_END.split(part["text"]) if s.strip())
            continue
        name = tool_name_of(part)
        if name is None or name in NOT_INDEXED_TOOLS or not isinstance(part.get("toolCallId"), str):
            continue
        line = digest_tool_part(name, _arguments(part), part, part["toolCallId"])
        yield line.removeprefix(DIGEST_PREFIX)


def _arguments(part: UIPart) -> dict[str, object]:
    value = part.get("input")
    return value if isinstance(value, dict) else {}


def passages_of(message: UIMessage) -> list[str]:
    """The message's passages: its sentences grouped while a group has fewer than
    PASSAGE_TOKENS and stays within MAX_PASSAGE_TOKENS (estimated), up to MAX_INDEXED_CHARS."""
    closes = aiming(PASSAGE_TOKENS, MAX_PASSAGE_TOKENS)
    return [text for text, _ in pack(_sized_pieces(message), " ", closes)]


def _sized_pieces(message: UIMessage) -> Iterator[tuple[str, int]]:
    """The message's units, white space folded, each within MAX_PASSAGE_TOKENS (a longer
    sentence cut), with their estimated tokens, until MAX_INDEXED_CHARS."""
    chars = 0
    for unit in _units(message):
        unit = " ".join(unit.split())[: max(MAX_INDEXED_CHARS - chars, 0)]
        chars += len(unit) + 1
        if not unit:
            break
        tokens = estimate_tokens(unit)
        if tokens <= MAX_PASSAGE_TOKENS:
            yield unit, tokens
            continue
        pieces = [text for text, _ in split_passages(unit, _ESTIMATE)]  # too long: cut
        if len(pieces) == 1:
            yield pieces[0], tokens
        else:
            yield from ((piece, estimate_tokens(piece)) for piece in pieces)


def index_message(
    db: sqlite3.Connection, thread_id: str, mid: str, message: UIMessage, fts: bool
) -> None:
    """Index the message `mid`, just written in this transaction as `message`, in place of
    what was indexed of it before (written without reading: this is on every message's
    write)."""
    if fts:
        db.execute(
            "DELETE FROM message_index WHERE rowid IN (SELECT id FROM message_passages "
            "WHERE thread_id = ? AND message_id = ?)",
            (thread_id, mid),
        )
    db.execute(
        "DELETE FROM message_passages WHERE thread_id = ? AND message_id = ?", (thread_id, mid)
    )
    term = thread_term(thread_id)
    for part, text in enumerate(passages_of(message)):
        cursor = db.execute(
            "INSERT INTO message_passages (thread_id, message_id, part, text) VALUES (?,?,?,?)",
            (thread_id, mid, part, text),
        )
        if fts:
            db.execute(
                "INSERT INTO message_index (rowid, thread, text) VALUES (?,?,?)",
                (cursor.lastrowid, term, text),
            )


def sweep(db: sqlite3.Connection, thread_id: str) -> None:
    """Remove the FTS5 rows of the thread's passages that went with their messages (a cut: a
    regenerate or an edit deletes what follows)."""
    db.execute(
        "DELETE FROM message_index WHERE rowid IN (SELECT rowid FROM message_index WHERE "
        "message_index MATCH ?) AND rowid NOT IN (SELECT id FROM message_passages WHERE "
        "thread_id = ?)",
        (f'thread : "{thread_term(thread_id)}"', thread_id),
    )


def unindex_thread(db: sqlite3.Connection, thread_id: str) -> None:
    """Remove a thread's FTS5 rows (before the thread is deleted; its passages go with it)."""
    db.execute(
        "DELETE FROM message_index WHERE rowid IN (SELECT rowid FROM message_index WHERE "
        "message_index MATCH ?)",
        (f'thread : "{thread_term(thread_id)}"',),
    )


async def ensure_indexed(store: Store, thread_id: str) -> None:
    """Index a thread stored before the index existed (listed in `unindexed_threads` by the
    migration that made the index), once: its first search waits for it."""
    waiting = await store.fetchone(
        "SELECT 1 FROM unindexed_threads WHERE thread_id = ?", (thread_id,)
    )
    if waiting is None:
        return
    fts = store.full_text

    def work(db: sqlite3.Connection) -> None:
        rows = db.execute(
            "SELECT id, role, parts FROM messages WHERE thread_id = ?", (thread_id,)
        ).fetchall()
        for mid, role, parts in rows:
            message: UIMessage = {"id": mid, "role": role, "parts": json.loads(parts)}
            index_message(db, thread_id, mid, message, fts)
        db.execute("DELETE FROM unindexed_threads WHERE thread_id = ?", (thread_id,))

    await store.write(work)


async def vectors_of(store: Store, model: Embedder, passages: list[tuple[int, str]]) -> list[bytes]:
    """The vectors of `passages` ((id, text), without one yet), computed on a worker thread and
    stored for later searches (unless the passage went meanwhile: a regenerated answer)."""
    vectors = await asyncio.to_thread(model.vectors, [text for _, text in passages])
    rows = [(pid, vector, pid) for (pid, _), vector in zip(passages, vectors, strict=True)]

    def work(db: sqlite3.Connection) -> None:
        db.executemany(
            "INSERT OR IGNORE INTO passage_vectors (passage_id, vector) SELECT ?, ? "
            "WHERE EXISTS (SELECT 1 FROM message_passages WHERE id = ?)",
            rows,
        )

    try:
        await store.write(work)
    except DiskFull:  # (searching needs no room: they are made again next time)
        logging.getLogger("comfyui_assistant").info("no room to store %d vectors", len(rows))
    return vectors
