"""Threads and their messages in the store.

Every request's thread is stored (the whole thread, as sent or as rebuilt from the store around
what is new: core/chat/thread_delta.py); storing it is append-and-update:
a message is written when it is new or its parts changed (the assistant message that received
tool outputs), and stored messages are removed only where the client said so — a regenerate
or an edit names the message it replaces (`messageId`; a regenerate naming none replaces what
follows its messages: thread_delta.py), and everything from there on goes.
Concurrent requests on one thread therefore never lose each other's messages.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..base import (
    Role,
    UIMessage,
    UIPart,
    compact_json,
    cyclic_gc_paused,
    fingerprint,
    to_openai_messages,
    tool_name_of,
    tool_result_text,
)
from ..tokens import TokenCounter, counter_for
from . import conversation_index, thread_text, thread_workflows
from .store import Store
from .thread_state import KNOWN_THREADS, ThreadState

TITLE_CHARS = 60
ID_CHARS = 64  # a message id remembered as it is (those the panel sends have about 20)


def title_from(messages: list[UIMessage]) -> str:
    """The first line of the first user text, cut at a word boundary."""
    for message in messages:
        if message.get("role") != "user":
            continue
        for part in message.get("parts", []):
            if part.get("type") == "text" and part["text"].strip():
                line = _without_command(str(part["text"]).strip().splitlines()[0].strip())
                if len(line) <= TITLE_CHARS:
                    return line
                head = line[: TITLE_CHARS - 1]
                if line[TITLE_CHARS - 1] != " ":  # the last word is cut: drop it
                    head = head.rsplit(" ", 1)[0] or head
                return head.rstrip(" ,.;:") + "…"
    return ""


_COMMAND = re.compile(r"^/(?P<name>[a-z]+)(?:\s+(?P<rest>.*))?$", re.IGNORECASE)


def _without_command(line: str) -> str:
    """A title reads as what was asked: "/skill txt2img a red fox" → "a red fox (txt2img)",
    a bare "/compact" → "compact"."""
    found = _COMMAND.match(line)
    if found is None:
        return line
    name, rest = found["name"].lower(), (found["rest"] or "").strip()
    if name == "skill" and rest:
        slug, _, request = rest.partition(" ")
        return f"{request.strip()} ({slug})" if request.strip() else f"skill {slug}"
    return rest or name


_SET_ONCE = frozenset({"input", "output", "rawInput"})


def stored_key(message: UIMessage) -> str:
    """What decides whether a stored message must be written again: its parts as JSON, but
    for a tool part's input and output. The AI SDK sets those once, together with the part's
    state (a streamed tool's interim outputs are flagged `preliminary`), and never changes
    them after, so the state and flags stand for them; the input and output are where a
    thread's size is (workflow graphs, node definitions), and are not serialized again on
    every request. Any other change to any part — a text, a state, a flag, a data part —
    gives another key. The key is a fingerprint (32 characters) whatever the message's size:
    the process remembers these keys, and must not keep a thread's images and texts alive by
    them (a thread of 3,900-character texts kept each text whole, 30 MB for a 30 MB thread)."""
    return fingerprint(
        compact_json(
            [
                {k: v for k, v in part.items() if k not in _SET_ONCE}
                if not _SET_ONCE.isdisjoint(part) and tool_name_of(part) is not None
                else part
                for part in message.get("parts") or ()
            ]
        )
    )


def _id_key(mid: str) -> str:
    """A message id as this process remembers it: itself, or a long one by its fingerprint."""
    return mid if len(mid) <= ID_CHARS else "\x00#" + fingerprint(mid)


def _touch_thread(
    db: sqlite3.Connection, thread_id: str, title: str, now: float, workflow: str | None = None
) -> bool:
    """Create the thread (bound to `workflow`), or mark it updated (and title it if it has no
    title yet; its workflow changes only when asked: core/store/thread_workflows.py); whether it was
    created."""
    created = db.execute(
        "INSERT INTO threads (id, title, created_at, updated_at, workflow) VALUES (?,?,?,?,?) "
        "ON CONFLICT (id) DO NOTHING",
        (thread_id, title, now, now, workflow),
    )
    if created.rowcount == 1:
        return True
    db.execute(
        "UPDATE threads SET updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END "
        "WHERE id = ?",
        (now, title, thread_id),
    )
    return False


@dataclass(frozen=True)
class StoredMessage:
    id: str
    role: Role
    parts: list[UIPart]
    metadata: dict[str, Any] | None
    status: str
    created_at: float

    def as_ui(self) -> UIMessage:
        out: UIMessage = {"id": self.id, "role": self.role, "parts": self.parts}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.status != "complete":
            out.setdefault("metadata", {})
            out["metadata"] = {**out["metadata"], "status": self.status}
        return out


class Threads:
    def __init__(self, store: Store) -> None:
        self.store = store

    # A thread's stored text as JSON pieces (thread_text.py), and the workflow it belongs to
    # (thread_workflows.py): the routes reach them through the threads they are handed.
    async def messages_json(self, thread_id: str) -> list[str]:
        return await thread_text.messages_json(self.store, thread_id)

    async def page_json(
        self, thread_id: str, last: int, before: str | None = None
    ) -> tuple[list[str], int] | None:
        return await thread_text.page_json(self.store, thread_id, last, before)

    async def bind(self, thread_id: str, workflow: str | None) -> bool:
        return await thread_workflows.bind(self.store, thread_id, workflow)

    async def rebind(self, old: str, new: str | None) -> int:
        return await thread_workflows.rebind(self.store, old, new)

    async def ensure(
        self, thread_id: str, messages: list[UIMessage], workflow: str | None = None
    ) -> None:
        title, now = title_from(messages), time.time()
        await self.store.write(lambda db: _touch_thread(db, thread_id, title, now, workflow))

    async def sync(
        self,
        thread_id: str,
        messages: list[UIMessage],
        replaces: str | None = None,
        workflow: str | None = None,
    ) -> None:
        """Store the request's messages before the model is called (see module docstring):
        one transaction, writing only what is new or changed — none at all when this process
        already stored every one of them as they are (the common resubmit and retry). What
        this process stored is known by each message's `stored_key`, so a long thread's
        next message is written without reading or serializing the others; a thread it does
        not know is compared with what the database holds. The transaction is one trip to the
        database's thread; a thread it creates is written without reading it first, bound to
        `workflow`."""
        rows = [
            (message.get("id") or f"{thread_id}:{position}", position, message)
            for position, message in enumerate(messages)
        ]
        if replaces is not None:  # a cut: what is stored is re-read next time
            await self._write_rows(
                thread_id, messages, rows, compare=True, replaces=replaces, workflow=workflow
            )
            self._known.pop(thread_id, None)
            return
        keys = [(position, stored_key(message)) for _, position, message in rows]
        known = self._known.get(thread_id)
        if known is not None:
            self._known.move_to_end(thread_id)
        if known is None:
            await self._write_rows(thread_id, messages, rows, compare=True, workflow=workflow)
            self._known[thread_id] = {
                _id_key(row[0]): key for row, key in zip(rows, keys, strict=True)
            }
            while len(self._known) > KNOWN_THREADS:  # the least recently used goes first
                self._known.popitem(last=False)
            return
        changed = [
            (row, key)
            for row, key in zip(rows, keys, strict=True)
            if known.get(_id_key(row[0])) != key
        ]
        if changed:
            await self._write_rows(thread_id, messages, [row for row, _ in changed], compare=False)
            known.update((_id_key(row[0]), key) for row, key in changed)

    async def _write_rows(
        self,
        thread_id: str,
        messages: list[UIMessage],
        rows: list[tuple[str, int, UIMessage]],
        *,
        compare: bool,
        replaces: str | None = None,
        workflow: str | None = None,
    ) -> None:
        """Write `rows` (id, position, message) in one transaction; with `compare`, only those
        whose position or parts differ from what the database holds (and, with `replaces`,
        delete what comes after the message replaced)."""
        dumped = [compact_json(message.get("parts", [])) for _, _, message in rows]
        now = time.time()
        title = title_from(messages)
        ids = [m.get("id", "") for m in messages]
        counter = counter_for(None)  # made here: its first use loads the encoding
        fts = self.store.full_text

        def work(db: sqlite3.Connection) -> bool:
            created = _touch_thread(db, thread_id, title, now, workflow)
            stored: dict[str, tuple[int, str]] = {}
            if compare and not created:  # a new thread has nothing to compare with
                found = db.execute(
                    "SELECT id, position, parts FROM messages WHERE thread_id = ?", (thread_id,)
                )
                stored = {row["id"]: (row["position"], row["parts"]) for row in found}
            if replaces is not None and replaces in stored:
                db.execute(
                    "DELETE FROM messages WHERE thread_id = ? AND position >= ? AND id NOT IN "
                    f"({','.join('?' * len(ids))})",
                    (thread_id, stored[replaces][0], *ids),
                )
                if fts:  # (their passages went with them)
                    conversation_index.sweep(db, thread_id)
            for (mid, position, message), parts in zip(rows, dumped, strict=True):
                if stored.get(mid) == (position, parts):
                    continue
                write_message(db, counter, thread_id, mid, position, message, parts, now, fts)
                if message.get("role") == "assistant":
                    _record_tool_results(db, thread_id, message.get("parts", []), now)
            return created

        if await self.store.write(work):
            ThreadState(self.store).created(thread_id)

    @property
    def _known(self) -> OrderedDict[str, dict[str, tuple[int, str]]]:
        """What this process stored per thread: (position, `stored_key`) by message id (a
        long id by its fingerprint), for the KNOWN_THREADS threads used last (another one is
        compared with the database): about 100 bytes per message, whatever the thread's size."""
        known: OrderedDict[str, dict[str, tuple[int, str]]] = self.store.cache.setdefault(
            "stored", OrderedDict()
        )
        return known

    def changed_elsewhere(self, thread_id: str) -> None:
        """Its messages were changed outside `sync` (a rewind: core/store/branches.py): what
        this process stored of it is compared with the database next time."""
        self._known.pop(thread_id, None)

    async def save_answer(
        self, thread_id: str, message: UIMessage, position: int, status: str
    ) -> None:
        """Store the assistant's answer: complete, or interrupted when the stream broke."""
        now = time.time()
        parts = compact_json(message.get("parts", []))
        known = self._known.get(thread_id)
        if known is not None:
            known[_id_key(message["id"])] = (position, stored_key(message))
        counter = counter_for(None)
        fts = self.store.full_text

        def work(db: sqlite3.Connection) -> None:
            mid = message["id"]
            write_message(db, counter, thread_id, mid, position, message, parts, now, fts, status)
            _record_tool_results(db, thread_id, message.get("parts", []), now)
            db.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (now, thread_id))

        await self.store.write(work)

    async def tool_result(self, thread_id: str, tool_call_id: str) -> dict[str, Any] | None:
        row = await self.store.fetchone(
            "SELECT tool_name, input, output, is_error FROM tool_results "
            "WHERE thread_id = ? AND tool_call_id = ?",
            (thread_id, tool_call_id),
        )
        if row is None:
            return None
        return {
            "toolCallId": tool_call_id,
            "tool": row["tool_name"],
            "input": json.loads(row["input"]) if row["input"] else None,
            "output": row["output"],
            "isError": bool(row["is_error"]),
        }

    async def messages(self, thread_id: str) -> list[StoredMessage]:
        rows = await self.store.fetchall(
            "SELECT id, role, parts, metadata, status, created_at FROM messages "
            "WHERE thread_id = ? ORDER BY position, seq",
            (thread_id,),
        )
        with cyclic_gc_paused():  # (a long thread's parts: tens of thousands of objects)
            return [
                StoredMessage(
                    r["id"],
                    r["role"],
                    json.loads(r["parts"]),
                    json.loads(r["metadata"]) if r["metadata"] else None,
                    r["status"],
                    r["created_at"],
                )
                for r in rows
            ]

    async def list(
        self, include_archived: bool = True, workflow: str | None = None
    ) -> list[dict[str, Any]]:
        """Every thread, the latest first; with `workflow`, that workflow's threads first."""
        rows = await self.store.fetchall(
            "SELECT t.id, t.title, t.archived, t.created_at, t.updated_at, t.workflow, t.project, "
            "(SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id) AS message_count "
            "FROM threads t WHERE (? OR t.archived = 0) "
            "ORDER BY COALESCE(t.workflow = ?, 0) DESC, t.updated_at DESC, t.id",
            (int(include_archived), workflow),
        )
        return [_thread_json(r) for r in rows]

    async def get(self, thread_id: str) -> dict[str, Any] | None:
        row = await self.store.fetchone(
            "SELECT t.id, t.title, t.archived, t.created_at, t.updated_at, t.workflow, t.project, "
            "(SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id) AS message_count "
            "FROM threads t WHERE t.id = ?",
            (thread_id,),
        )
        return _thread_json(row) if row is not None else None

    async def update(
        self, thread_id: str, title: str | None = None, archived: bool | None = None
    ) -> bool:
        async with self.store.transaction() as db:
            cursor = await db.execute(
                "UPDATE threads SET title = COALESCE(?, title), archived = COALESCE(?, archived),"
                " updated_at = ? WHERE id = ?",
                (title, None if archived is None else int(archived), time.time(), thread_id),
            )
            return bool(cursor.rowcount)

    async def delete(self, thread_id: str) -> bool:
        self.store.cache.get("summaries", {}).pop(thread_id, None)
        self._known.pop(thread_id, None)
        fts = self.store.full_text

        def work(db: sqlite3.Connection) -> bool:
            if fts:  # (its passages go with its messages)
                conversation_index.unindex_thread(db, thread_id)
            return db.execute("DELETE FROM threads WHERE id = ?", (thread_id,)).rowcount > 0

        # (goes through on a full disk: deleting threads is how room is made)
        return await self.store.freeing(work)


def write_message(
    db: sqlite3.Connection,
    counter: TokenCounter,
    thread_id: str,
    mid: str,
    position: int,
    message: UIMessage,
    parts: str,
    now: float,
    fts: bool,
    status: str = "complete",
) -> None:
    """Store one message and index its words (`conversation_index`), in the caller's
    transaction."""
    meta = message.get("metadata")
    # counted afresh: a message is stored once, and the counter's cache of whole messages
    # would keep the texts of the threads stored last alive (32 MB of them)
    tokens = sum(map(counter.uncached, to_openai_messages([message])))
    db.execute(
        "INSERT INTO messages (thread_id, id, position, role, parts, metadata, status, "
        "token_count, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT "
        "(thread_id, id) DO UPDATE SET position = excluded.position, parts = excluded.parts,"
        " metadata = excluded.metadata, status = excluded.status, token_count = "
        "excluded.token_count, updated_at = excluded.updated_at",
        (
            thread_id,
            mid,
            position,
            message["role"],
            parts,
            compact_json(meta) if meta is not None else None,
            status,
            tokens,
            now,
            now,
        ),
    )
    conversation_index.index_message(db, thread_id, mid, message, fts)


def _record_tool_results(
    db: sqlite3.Connection, thread_id: str, parts: list[UIPart], now: float
) -> None:
    """Keep every finished tool result whole, so a shortened one can be recalled later."""
    for part in parts:
        name = tool_name_of(part)
        if name is None or part.get("state") not in ("output-available", "output-error"):
            continue
        db.execute(
            "INSERT OR REPLACE INTO tool_results (thread_id, tool_call_id, tool_name, input, "
            "output, is_error, created_at) VALUES (?,?,?,?,?,?,?)",
            (
                thread_id,
                part["toolCallId"],
                name,
                compact_json(part.get("input")),
                tool_result_text(part),
                int(part.get("state") == "output-error"),
                now,
            ),
        )


def _thread_json(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "title": row["title"],
        "archived": bool(row["archived"]),
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
        "messageCount": row["message_count"],
        "workflow": row["workflow"],
        "project": row["project"],
    }
