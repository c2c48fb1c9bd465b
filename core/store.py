"""The SQLite store: one file in the data directory, WAL, migrations applied at start-up.

Migrations are an ordered list of small named steps; each one that ran is recorded in the
`migrations` table, so an older database is brought forward step by step and never twice.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite

DB_NAME = "assistant.sqlite3"

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]


async def m001_settings(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE settings (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (namespace, key)
        )"""
    )


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_settings", m001_settings),
]


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
        now = time.time()
        for key, value in values.items():
            if value is None:
                await self.db.execute(
                    "DELETE FROM settings WHERE namespace = ? AND key = ?", (namespace, key)
                )
            else:
                await self.db.execute(
                    "INSERT INTO settings (namespace, key, value, updated_at) VALUES (?,?,?,?) "
                    "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, "
                    "updated_at = excluded.updated_at",
                    (namespace, key, json.dumps(value), now),
                )
        await self.db.commit()


async def applied_migrations(db: aiosqlite.Connection) -> list[str]:
    await db.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    async with db.execute("SELECT name FROM migrations ORDER BY name") as cursor:
        return [row[0] async for row in cursor]


async def migrate(db: aiosqlite.Connection) -> list[str]:
    """Apply the migrations not yet recorded, each in its own transaction; return their names."""
    done = set(await applied_migrations(db))
    await db.commit()
    ran = []
    for name, step in MIGRATIONS:
        if name in done:
            continue
        await db.execute("BEGIN IMMEDIATE")
        try:
            await step(db)
            await db.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
            )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise
        ran.append(name)
    return ran
