"""Branches of a thread: the messages a conversation rewind set aside, kept to return to.

Rewinding the conversation to an answer ("Rewind to here", or `/rewind`) takes the thread back to
before that answer's turn: the user message the turn began with and everything after it leave
the thread's messages and are kept whole, in order, as a branch (`thread_branches`, numbered per
thread: "branch 2"), never deleted. The stored thread then holds exactly what the panel shows, and
the next request is append-only from there. Returning to a branch puts its messages back after the
message it followed and sets aside what follows that message now as a new branch: nothing is lost
either way. A branch can be returned to while the message it followed is in the thread (one set
aside further back comes within reach once the branch holding that message is returned to).

What a message carried when first sent (sent_turns), its tool results, checkpoint and delegations
stay keyed by its id, so a message returned to is resent byte for byte. A running summary whose
last message was set aside is not used while it is away (core/context: `covered_ids` finds it in
no request), and is again once it is back.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from dataclasses import dataclass
from typing import Any

from ..base import Coded, StatusError, UIMessage, coded, compact_json
from ..tokens import TokenCounter, counter_for
from . import conversation_index
from .store import Store
from .threads import Threads, title_from, write_message

PREVIEW_CHARS = 60


class BranchError(StatusError):
    """A rewind or a return that cannot be done now (409); the message says why and what to
    do."""

    coded: Coded

    def __init__(self, message: Coded) -> None:
        super().__init__(409, message)


@dataclass(frozen=True)
class Branch:
    number: int
    after: str | None  # the message it followed (None: the thread's start)
    message_count: int
    preview: str  # its first user text, as a thread's title reads
    created_at: float

    def as_json(self, available: bool | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "afterId": self.after,
            "messageCount": self.message_count,
            "preview": self.preview,
            "createdAt": self.created_at,
        }
        if available is not None:
            out["available"] = available
        return out


@dataclass(frozen=True)
class Moved:
    """The thread after a rewind or a return: its messages, and what was set aside (if any)."""

    messages: list[UIMessage]
    set_aside: Branch | None
    draft: str = ""  # a rewind: the text of the user message the turn began with


_COLUMNS = "id, position, role, parts, metadata, status, created_at"


def _rows(db: sqlite3.Connection, thread_id: str) -> list[sqlite3.Row]:
    return db.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE thread_id = ? ORDER BY position, seq", (thread_id,)
    ).fetchall()


def _stored(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "role": row["role"],
        "parts": json.loads(row["parts"]),
        "metadata": json.loads(row["metadata"]) if row["metadata"] else None,
        "status": row["status"],
        "createdAt": row["created_at"],
    }


def _ui(message: dict[str, Any]) -> UIMessage:
    out: UIMessage = {"id": message["id"], "role": message["role"], "parts": message["parts"]}
    if message["metadata"] is not None:
        out["metadata"] = message["metadata"]
    if message["status"] != "complete":
        out["metadata"] = {**out.get("metadata", {}), "status": message["status"]}
    return out


def _text_of(message: dict[str, Any]) -> str:
    texts = [p.get("text", "") for p in message["parts"] if p.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str) and t)


def _not_writing(rows: list[sqlite3.Row]) -> None:
    if any(row["status"] == "streaming" for row in rows):
        raise BranchError(coded("branch.answer_running"))


class Branches:
    def __init__(self, threads: Threads) -> None:
        self.threads = threads
        self.store: Store = threads.store

    async def rewind(self, thread_id: str, message_id: str) -> Moved | None:
        """Set aside the turn of `message_id` (from the user message it began with) and all that
        follows; None when the thread has no such message."""
        now, fts = time.time(), self.store.full_text

        def work(db: sqlite3.Connection) -> Moved | None:
            rows = _rows(db, thread_id)
            found = next((i for i, r in enumerate(rows) if r["id"] == message_id), None)
            if found is None:
                return None
            start = next((i for i in range(found, -1, -1) if rows[i]["role"] == "user"), found)
            tail = [_stored(r) for r in rows[start:]]
            _not_writing(rows[start:])
            after = rows[start - 1]["id"] if start else None
            branch = _set_aside(db, thread_id, after, tail, now, fts)
            kept = [_ui(_stored(r)) for r in rows[:start]]
            return Moved(kept, branch, _text_of(tail[0]) if tail[0]["role"] == "user" else "")

        moved = await self.store.write(work)
        self.threads.changed_elsewhere(thread_id)
        return moved

    async def listed(self, thread_id: str) -> list[tuple[Branch, bool]]:
        """The thread's branches, the latest first, each with whether it can be returned to."""
        rows = await self.store.fetchall(
            "SELECT b.number, b.after_id, b.message_count, b.preview, b.created_at, "
            "(b.after_id IS NULL OR EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = "
            "b.thread_id AND m.id = b.after_id)) AS available FROM thread_branches b "
            "WHERE b.thread_id = ? ORDER BY b.number DESC",
            (thread_id,),
        )
        return [(_branch(r), bool(r["available"])) for r in rows]

    async def restore(self, thread_id: str, number: int) -> Moved | None:
        """Return to branch `number`: its messages back after the message it followed, what
        follows that message now set aside; None when the thread has no such branch."""
        now, fts = time.time(), self.store.full_text
        counter = counter_for(None)

        def work(db: sqlite3.Connection) -> Moved | None:
            found = db.execute(
                "SELECT number, after_id, message_count, preview, created_at, data FROM "
                "thread_branches WHERE thread_id = ? AND number = ?",
                (thread_id, number),
            ).fetchone()
            if found is None:
                return None
            rows = _rows(db, thread_id)
            ids = [r["id"] for r in rows]
            after = found["after_id"]
            if after is not None and after not in ids:
                raise BranchError(coded("branch.after_set_aside", number=str(number)))
            cut = 0 if after is None else ids.index(after) + 1
            _not_writing(rows[cut:])
            back: list[dict[str, Any]] = json.loads(zlib.decompress(found["data"]))
            if {m["id"] for m in back} & set(ids[:cut]):
                raise BranchError(coded("branch.overlaps", number=str(number)))
            tail = [_stored(r) for r in rows[cut:]]
            branch = _set_aside(db, thread_id, after, tail, now, fts) if tail else None
            db.execute(
                "DELETE FROM thread_branches WHERE thread_id = ? AND number = ?",
                (thread_id, number),
            )
            for offset, message in enumerate(back):
                _put_back(db, counter, thread_id, cut + offset, message, now, fts)
            kept = [_ui(_stored(r)) for r in rows[:cut]]
            return Moved(kept + [_ui(m) for m in back], branch)

        moved = await self.store.write(work)
        self.threads.changed_elsewhere(thread_id)
        return moved


def _branch(row: Any) -> Branch:
    return Branch(
        row["number"], row["after_id"], row["message_count"], row["preview"], row["created_at"]
    )


def _set_aside(
    db: sqlite3.Connection,
    thread_id: str,
    after: str | None,
    messages: list[dict[str, Any]],
    now: float,
    fts: bool,
) -> Branch | None:
    """Move `messages` (the thread's last ones, as stored) out of the thread into a new branch."""
    if not messages:
        return None
    (number,) = db.execute(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM thread_branches WHERE thread_id = ?",
        (thread_id,),
    ).fetchone()
    preview = title_from([_ui(m) for m in messages])[:PREVIEW_CHARS]
    data = zlib.compress(compact_json(messages).encode("utf-8"))
    db.execute(
        "INSERT INTO thread_branches (thread_id, number, after_id, message_count, preview, data, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (thread_id, number, after, len(messages), preview, data, now),
    )
    ids = [m["id"] for m in messages]
    db.execute(
        f"DELETE FROM messages WHERE thread_id = ? AND id IN ({','.join('?' * len(ids))})",
        (thread_id, *ids),
    )
    if fts:  # (their passages went with them)
        conversation_index.sweep(db, thread_id)
    db.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (now, thread_id))
    return Branch(number, after, len(messages), preview, now)


def _put_back(
    db: sqlite3.Connection,
    counter: TokenCounter,
    thread_id: str,
    position: int,
    message: dict[str, Any],
    now: float,
    fts: bool,
) -> None:
    """A message of a branch back in the thread: stored (and indexed) as before, at `position`,
    said when it was said."""
    ui = _ui({**message, "status": "complete"})
    parts = compact_json(message["parts"])
    write_message(db, counter, thread_id, message["id"], position, ui, parts, now, fts)
    db.execute(
        "UPDATE messages SET status = ?, created_at = ? WHERE thread_id = ? AND id = ?",
        (message["status"], message["createdAt"], thread_id, message["id"]),
    )
