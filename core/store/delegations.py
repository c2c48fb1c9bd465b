"""Stored traces of delegated tasks: the child's messages, tool calls and results, under the
parent's thread, answer and `delegate` call ids (the panel fetches one by the call's id)."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import cast

from ..base import DelegationTrace, compact_json
from .store import Store


class Delegations:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def save(self, trace: DelegationTrace) -> None:
        """Store a trace; it replaces an older one of the same call (a model that reuses call
        ids across answers: the newest is the one its card shows)."""
        text, now = compact_json(trace), time.time()
        row = (
            trace["id"],
            trace["threadId"],
            trace["messageId"],
            trace["toolCallId"],
            trace["status"],
            text,
            trace["createdAt"],
            now,
        )

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO delegations (id, thread_id, message_id, tool_call_id, status, "
                "trace, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT "
                "(thread_id, tool_call_id) DO UPDATE SET id = excluded.id, message_id = "
                "excluded.message_id, status = excluded.status, trace = excluded.trace, "
                "created_at = excluded.created_at, updated_at = excluded.updated_at",
                row,
            )

        await self.store.write(work)

    async def get(self, thread_id: str, tool_call_id: str) -> DelegationTrace | None:
        row = await self.store.fetchone(
            "SELECT trace FROM delegations WHERE thread_id = ? AND tool_call_id = ?",
            (thread_id, tool_call_id),
        )
        return None if row is None else cast(DelegationTrace, json.loads(row["trace"]))
