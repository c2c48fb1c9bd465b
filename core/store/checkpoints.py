"""Checkpoints: the workflow as it was before an assistant turn changed it, kept with the thread
so the user can rewind the graph to it ("Rewind to here").

The panel saves one per assistant message whose turn edits the graph, just before the turn's
first edit: ComfyUI's serialized graph (`app.rootGraph.serialize()`, subgraph definitions
included) and the key of the workflow it belongs to (core/store/thread_workflows.py), so a
rewind restores it into that workflow's tab. The first save of a message is the one kept: a
resubmit of the same turn never moves its checkpoint past its first edit.

Graphs are stored by content: one zlib-compressed blob per distinct graph (its SHA-256), shared
by every checkpoint that holds it, removed with the last of them (a trigger). Each thread keeps
its newest MAX_CHECKPOINTS checkpoints within MAX_THREAD_BYTES of compressed blobs (a blob
several of them share counts once); saving one drops the oldest beyond either bound. The newest
is always kept: a graph's compressed size is bounded by what a request may carry.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
import zlib
from dataclasses import dataclass
from typing import Any

from ..base import compact_json
from .store import Store

MAX_CHECKPOINTS = 100  # per thread: a rewind reaches back this many graph-changing turns
MAX_THREAD_BYTES = 16 << 20  # per thread, compressed (bench/checkpoints.py: 2.2 MB at 100 turns)
ZLIB_LEVEL = 6  # 8x smaller; level 9 saves 3.5% more at 2-4x the time (bench/checkpoints.py)


@dataclass(frozen=True)
class Checkpoint:
    message_id: str
    workflow: str | None
    nodes: int  # the root graph's nodes, as the panel shows it
    size: int  # the graph's JSON, in bytes
    stored: int  # its compressed blob, in bytes (shared blobs in full)
    created_at: float

    def as_json(self) -> dict[str, Any]:
        return {
            "messageId": self.message_id,
            "workflow": self.workflow,
            "nodes": self.nodes,
            "bytes": self.size,
            "storedBytes": self.stored,
            "createdAt": self.created_at,
        }


@dataclass(frozen=True)
class Saved:
    checkpoint: Checkpoint
    created: bool  # False: the message had one already (kept as first saved)
    dropped: tuple[str, ...]  # message ids whose checkpoints the bounds dropped


@dataclass(frozen=True)
class _Encoded:
    digest: str
    blob: bytes
    size: int
    nodes: int


def _encode(graph: dict[str, Any]) -> _Encoded:
    text = compact_json(graph).encode("utf-8")
    nodes = graph.get("nodes")
    return _Encoded(
        hashlib.sha256(text).hexdigest(),
        zlib.compress(text, ZLIB_LEVEL),
        len(text),
        len(nodes) if isinstance(nodes, list) else 0,
    )


_COLUMNS = (
    "c.message_id, c.workflow, c.nodes, b.size, length(b.data) AS stored, c.created_at, c.hash"
)


def _row(row: Any) -> Checkpoint:
    return Checkpoint(
        row["message_id"],
        row["workflow"],
        row["nodes"],
        row["size"],
        row["stored"],
        row["created_at"],
    )


class Checkpoints:
    def __init__(
        self,
        store: Store,
        max_checkpoints: int = MAX_CHECKPOINTS,
        max_thread_bytes: int = MAX_THREAD_BYTES,
    ) -> None:
        self.store = store
        self.max_checkpoints, self.max_thread_bytes = max_checkpoints, max_thread_bytes

    async def save(
        self, thread_id: str, message_id: str, workflow: str | None, graph: dict[str, Any]
    ) -> Saved | None:
        """Keep `graph` as the checkpoint of `message_id` (the first save of a message wins),
        then apply the thread's bounds; None when the thread does not exist."""
        encoded = await asyncio.to_thread(_encode, graph)
        now = time.time()

        def work(db: sqlite3.Connection) -> Saved | None:
            if db.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
                return None
            db.execute(
                "INSERT INTO checkpoint_blobs (hash, size, data) VALUES (?, ?, ?) "
                "ON CONFLICT (hash) DO NOTHING",
                (encoded.digest, encoded.size, encoded.blob),
            )
            created = db.execute(
                "INSERT INTO checkpoints (thread_id, message_id, workflow, hash, nodes, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, message_id) "
                "DO NOTHING",
                (thread_id, message_id, workflow, encoded.digest, encoded.nodes, now),
            ).rowcount
            # (a blob only the refused insert would have held goes: the trigger runs on deletes)
            db.execute(
                "DELETE FROM checkpoint_blobs WHERE hash = ? AND NOT EXISTS "
                "(SELECT 1 FROM checkpoints WHERE hash = ?)",
                (encoded.digest, encoded.digest),
            )
            dropped = _apply_bounds(db, thread_id, self.max_checkpoints, self.max_thread_bytes)
            row = db.execute(
                f"SELECT {_COLUMNS} FROM checkpoints c JOIN checkpoint_blobs b ON b.hash = c.hash "
                "WHERE c.thread_id = ? AND c.message_id = ?",
                (thread_id, message_id),
            ).fetchone()
            return Saved(_row(row), bool(created), dropped)

        return await self.store.write(work)

    async def listed(self, thread_id: str) -> list[Checkpoint]:
        """The thread's checkpoints, oldest first."""
        rows = await self.store.fetchall(
            f"SELECT {_COLUMNS} FROM checkpoints c JOIN checkpoint_blobs b ON b.hash = c.hash "
            "WHERE c.thread_id = ? ORDER BY c.seq",
            (thread_id,),
        )
        return [_row(r) for r in rows]

    async def get(self, thread_id: str, message_id: str) -> tuple[Checkpoint, Any] | None:
        """A checkpoint and its graph (the JSON as the panel saved it)."""
        row = await self.store.fetchone(
            f"SELECT {_COLUMNS}, b.data FROM checkpoints c "
            "JOIN checkpoint_blobs b ON b.hash = c.hash "
            "WHERE c.thread_id = ? AND c.message_id = ?",
            (thread_id, message_id),
        )
        if row is None:
            return None
        data = bytes(row["data"])
        graph = await asyncio.to_thread(lambda: json.loads(zlib.decompress(data)))
        return _row(row), graph

    async def stored_bytes(self, thread_id: str) -> int:
        """What the thread's checkpoints take, compressed (a shared blob once)."""
        row = await self.store.fetchone(
            "SELECT COALESCE(SUM(length(data)), 0) FROM checkpoint_blobs WHERE hash IN "
            "(SELECT hash FROM checkpoints WHERE thread_id = ?)",
            (thread_id,),
        )
        return int(row[0]) if row is not None else 0


def _apply_bounds(
    db: sqlite3.Connection, thread_id: str, most: int, most_bytes: int
) -> tuple[str, ...]:
    """Drop the thread's oldest checkpoints beyond `most` or `most_bytes` compressed (the newest
    always stays); the message ids dropped, oldest first."""
    rows = db.execute(
        "SELECT c.seq, c.message_id, c.hash, length(b.data) FROM checkpoints c "
        "JOIN checkpoint_blobs b ON b.hash = c.hash WHERE c.thread_id = ? ORDER BY c.seq DESC",
        (thread_id,),
    ).fetchall()
    seen: set[str] = set()
    total = 0
    drop: list[tuple[int, str]] = []
    for kept, (_, _, digest, stored) in enumerate(rows):
        adds = 0 if digest in seen else stored
        if kept and (kept >= most or total + adds > most_bytes):
            drop.extend((s, m) for s, m, _, _ in rows[kept:])
            break
        seen.add(digest)
        total += adds
    for seq, _ in drop:
        db.execute("DELETE FROM checkpoints WHERE seq = ?", (seq,))
    return tuple(m for _, m in reversed(drop))
