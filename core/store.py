"""The SQLite store: one file in the data directory, WAL, migrations applied at start-up.

One connection serves the process (aiosqlite runs it on its own thread); `transaction()`
serializes multi-statement writes, so concurrent requests never interleave inside one
transaction and never see "database is locked". Each statement awaited is a trip to that thread
and back; `write()` and the fetch helpers make one trip, for what a chat request waits on.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from .migrations import full_text_index, migrate

log = logging.getLogger("comfyui_assistant")

DB_NAME = "assistant.sqlite3"
USER_NAMESPACES = frozenset({"preferences", "prompt", "persona"})
T = TypeVar("T")


class StoreUnavailable(Exception):
    """The database cannot be opened; the message is one line that says what to do."""


def _unavailable(exc: BaseException, path: Path) -> StoreUnavailable:
    text = str(exc) if not isinstance(exc, OSError) else (exc.strerror or str(exc))
    lowered = text.lower()
    folder = path.parent
    if (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or "disk is full" in lowered:
        return StoreUnavailable(
            f"the disk holding {folder} is full ({text}) — free some space, or choose another "
            f"data directory (--data-dir, or COMFY_ASSISTANT_DATA_DIR)"
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreUnavailable(
            f"{path} is not a readable database ({text}); it was left untouched — move it "
            f"away to start afresh, or restore it from a backup"
        )
    if (isinstance(exc, OSError) and exc.errno == errno.EROFS) or "read-only" in lowered:
        return StoreUnavailable(
            f"the data directory {folder} is on a read-only file system ({text}) — choose "
            f"another (--data-dir, or COMFY_ASSISTANT_DATA_DIR)"
        )
    return StoreUnavailable(
        f"cannot write to the data directory {folder} ({text}) — fix its permissions, or "
        f"choose another (--data-dir, or COMFY_ASSISTANT_DATA_DIR)"
    )


def _prepare(data_dir: Path) -> Path:
    """Create the directory and the database file, readable by its owner only (it holds the
    API key)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / DB_NAME
    if not path.exists():
        path.touch(mode=0o600)
    return path


def _transact(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    db.execute("BEGIN IMMEDIATE")
    try:
        result = work(db)
    except BaseException:
        db.rollback()
        raise
    db.commit()
    return result


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
        # Whether project passages are searched by SQLite's FTS5 (else core/text_search.py).
        self.full_text = True

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

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)` as one write transaction in a single trip to the database's
        thread (committed on success, rolled back on error), where `transaction()` takes a trip
        per statement. `work` runs on that thread, beside the event loop: it may use the
        connection it is given and values nothing changes meanwhile, never the loop's objects."""
        async with self._write_lock:
            # aiosqlite's queue to its thread (`_execute`, `_conn`: in every release so far)
            result: T = await self.db._execute(_transact, self.db._conn, work)  # type: ignore[no-untyped-call]
            return result

    async def fetchall(self, sql: str, params: tuple[Any, ...] = ()) -> list[aiosqlite.Row]:
        return list(await self.db.execute_fetchall(sql, params))

    async def fetchone(self, sql: str, params: tuple[Any, ...] = ()) -> aiosqlite.Row | None:
        """The first row of a query that selects one (by key): fetched in one trip."""
        rows = await self.db.execute_fetchall(sql, params)
        return next(iter(rows), None)

    @classmethod
    async def open(cls, data_dir: Path) -> Store:
        """Open (and migrate) the database; StoreUnavailable says why it cannot be."""
        try:
            return await cls._open(data_dir)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise _unavailable(exc, data_dir / DB_NAME) from exc

    @classmethod
    async def _open(cls, data_dir: Path) -> Store:
        path = await asyncio.to_thread(_prepare, data_dir)
        db = aiosqlite.connect(path, timeout=30)
        _daemonize(db)
        await db
        if not callable(getattr(db, "_execute", None)) or getattr(db, "_conn", None) is None:
            await db.close()  # `write()` needs both: fail at start-up, not on a request
            raise RuntimeError(
                f"aiosqlite {getattr(aiosqlite, '__version__', '?')} lacks the connection "
                "internals ComfyUI Assistant uses; install a tested release: "
                "pip install 'aiosqlite>=0.20,<0.23'"
            )
        try:
            db.row_factory = aiosqlite.Row
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA synchronous=NORMAL")
            await db.execute("PRAGMA foreign_keys=ON")
            await db.execute("PRAGMA busy_timeout=30000")
            await migrate(db)
            # An answer still "streaming" in the file was cut off by a crash of the last process.
            await db.execute(
                "UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'"
            )
            await db.commit()
            full_text = await full_text_index(db)
        except BaseException:
            await db.close()
            raise
        store = cls(db, path)
        store.full_text = full_text
        if not full_text:
            log.warning(
                "ComfyUI Assistant: this Python's SQLite has no FTS5 (full-text search): project "
                "documents too large to send whole are searched by plain word matching instead"
            )
        return store

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
        encoded = {
            key: None if value is None else json.dumps(value) for key, value in values.items()
        }

        def work(db: sqlite3.Connection) -> None:
            for key, value in encoded.items():
                if value is None:
                    db.execute(
                        "DELETE FROM settings WHERE namespace = ? AND key = ?", (namespace, key)
                    )
                else:
                    db.execute(
                        "INSERT INTO settings (namespace, key, value, updated_at) VALUES (?,?,?,?)"
                        " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, "
                        "updated_at = excluded.updated_at",
                        (namespace, key, value, now),
                    )

        await self.write(work)
