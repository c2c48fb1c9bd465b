"""A stored thread's messages as JSON text for `GET /api/assistant/threads/{id}`, put together
from the text the store holds, never parsed: a thread stored with a million parts (before
requests were capped) took a second of the event loop to parse and serialize again, on every
visit, while every other request waited."""

from __future__ import annotations

import json
from typing import Any

from ..base import compact_json
from .store import Store


async def messages_json(store: Store, thread_id: str) -> list[str]:
    """The thread's UI messages as the pieces of a JSON array (`StoredMessage.as_ui` of each,
    in order), to be written one after the other."""
    rows = await store.fetchall(
        "SELECT id, role, parts, metadata, status FROM messages "
        "WHERE thread_id = ? ORDER BY position, seq",
        (thread_id,),
    )
    pieces = [f",{text}" for text in map(_message_json, rows)]
    if pieces:
        pieces[0] = pieces[0][1:]
    return ["[", *pieces, "]"]


_PAGE_COLUMNS = "SELECT id, role, parts, metadata, status, position, seq FROM messages"


async def page_json(
    store: Store, thread_id: str, last: int, before: str | None = None
) -> tuple[list[str], int] | None:
    """The `last` messages of the thread (those before message `before`, when given) as the
    pieces of a JSON array, and the index in the thread of the first of them; None when
    `before` is not in the thread. Read by the index on (thread, position): a page of a long
    thread costs what a page of a short one does."""
    where, params = "thread_id = ?", list[Any]([thread_id])
    if before is not None:
        mark = await store.fetchone(
            "SELECT position, seq FROM messages WHERE thread_id = ? AND id = ?",
            (thread_id, before),
        )
        if mark is None:
            return None
        where += " AND (position, seq) < (?, ?)"
        params += [mark["position"], mark["seq"]]
    rows = await store.fetchall(
        f"{_PAGE_COLUMNS} WHERE {where} ORDER BY position DESC, seq DESC LIMIT ?",
        (*params, last),
    )
    rows.reverse()
    first = 0
    if rows:
        row = await store.fetchone(
            "SELECT COUNT(*) FROM messages WHERE thread_id = ? AND (position, seq) < (?, ?)",
            (thread_id, rows[0]["position"], rows[0]["seq"]),
        )
        first = int(row[0]) if row is not None else 0
    pieces = [f",{text}" for text in map(_message_json, rows)]
    if pieces:
        pieces[0] = pieces[0][1:]
    return ["[", *pieces, "]"], first


def _message_json(row: Any) -> str:
    """One message: its stored parts as they are; its status, unless complete, added to its
    metadata (a small object, the only part read)."""
    metadata = row["metadata"]
    if row["status"] != "complete":
        metadata = compact_json({**json.loads(metadata or "{}"), "status": row["status"]})
    head = f'{{"id":{compact_json(row["id"])},"role":{compact_json(row["role"])}'
    tail = "}" if metadata is None else f',"metadata":{metadata}}}'
    return f'{head},"parts":{row["parts"]}{tail}'
