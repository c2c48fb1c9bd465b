"""The SQLite store: one file in the data directory, WAL, migrations applied at start-up.

One connection serves the process (aiosqlite runs it on its own thread); `transaction()`
serializes multi-statement writes, so concurrent requests never interleave inside one
transaction and never see "database is locked".
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from .migrations import migrate

DB_NAME = "assistant.sqlite3"
USER_NAMESPACES = frozenset({"preferences", "prompt", "persona"})


def _prepare(data_dir: Path) -> Path:
    """Create the directory and the database file, readable by its owner only (it holds the
    API key)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / DB_NAME
    if not path.exists():
        path.touch(mode=0o600)
    return path


def _daemonize(db: aiosqlite.Connection) -> None:
    """aiosqlite's worker thread must not keep ComfyUI's process alive at exit (nothing may be
    left uncommitted: every write commits). Older aiosqlite made the connection the thread."""
    thread = getattr(db, "_thread", db)
    if isinstance(thread, threading.Thread):
        thread.daemon = True


class Store:
    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._write_lock = asyncio.Lock()
        # Bumped by every write to the user's own context (rules, reminders, personas and
        # their settings), so what a chat reads of it can be cached until it changes.
        self.user_generation = 0
        # Values derived from this database that requests reuse (kept with it, gone with it).
        self.cache: dict[str, Any] = {}

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction at a time: committed on success, rolled back on error."""
        async with self._write_lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                await self.db.rollback()
                raise
            await self.db.commit()

    async def fetchall(self, sql: str, params: tuple[Any, ...] = ()) -> list[aiosqlite.Row]:
        async with self.db.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def fetchone(self, sql: str, params: tuple[Any, ...] = ()) -> aiosqlite.Row | None:
        async with self.db.execute(sql, params) as cursor:
            row: aiosqlite.Row | None = await cursor.fetchone()
            return row

    @classmethod
    async def open(cls, data_dir: Path) -> Store:
        path = await asyncio.to_thread(_prepare, data_dir)
        db = aiosqlite.connect(path, timeout=30)
        _daemonize(db)
        await db
        db.row_factory = aiosqlite.Row
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute("PRAGMA foreign_keys=ON")
        await db.execute("PRAGMA busy_timeout=30000")
        await migrate(db)
        return cls(db, path)

    async def close(self) -> None:
        await self.db.close()

    async def get_settings(self, namespace: str) -> dict[str, Any]:
        async with self.db.execute(
            "SELECT key, value FROM settings WHERE namespace = ?", (namespace,)
        ) as cursor:
            return {row["key"]: json.loads(row["value"]) async for row in cursor}

    async def update_settings(self, namespace: str, values: dict[str, Any]) -> None:
        """Set each key; a value of None deletes the key."""
        if namespace in USER_NAMESPACES:
            self.user_generation += 1
        now = time.time()
        async with self.transaction() as db:
            for key, value in values.items():
                if value is None:
                    await db.execute(
                        "DELETE FROM settings WHERE namespace = ? AND key = ?", (namespace, key)
                    )
                else:
                    await db.execute(
                        "INSERT INTO settings (namespace, key, value, updated_at) VALUES (?,?,?,?)"
                        " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, "
                        "updated_at = excluded.updated_at",
                        (namespace, key, json.dumps(value), now),
                    )
