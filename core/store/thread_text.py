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


def _message_json(row: Any) -> str:
    """One message: its stored parts as they are; its status, unless complete, added to its
    metadata (a small object, the only part read)."""
    metadata = row["metadata"]
    if row["status"] != "complete":
        metadata = compact_json({**json.loads(metadata or "{}"), "status": row["status"]})
    head = f'{{"id":{compact_json(row["id"])},"role":{compact_json(row["role"])}'
    tail = "}" if metadata is None else f',"metadata":{metadata}}}'
    return f'{head},"parts":{row["parts"]}{tail}'
