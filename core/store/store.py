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
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from ..base import AlwaysCoded, coded
from .migrations import full_text_index, migrate

log = logging.getLogger("comfyui_assistant")

DB_NAME = "assistant.sqlite3"
USER_NAMESPACES = frozenset({"preferences", "prompt", "persona"})
T = TypeVar("T")
SQLITE_FULL = 13
RESERVE_NAME = DB_NAME + "-reserve"
RESERVE_BYTES = 4 << 20  # room for a delete's journal when the disk is full: 1,000 pages
RESERVE_SPARE = 1 << 20  # free room the reserve leaves to writes when it grows back
OPEN_ROOM = 256 << 10  # what opening the database may take (its -shm file: 32 KB)
DISK_FULL_CODED = coded("server.disk_full")
DISK_FULL = str(DISK_FULL_CODED)


class StoreUnavailable(Exception):
    """The database cannot be opened; the message is one line that says what to do."""


class DiskFull(AlwaysCoded):
    """A write found the disk full and changed nothing (the transaction was rolled back)."""

    def __init__(self) -> None:
        super().__init__(DISK_FULL_CODED)


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error is a full disk (or quota): SQLite's SQLITE_FULL, or ENOSPC/EDQUOT."""
    if isinstance(exc, DiskFull):
        return True
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", 0)  # (Python 3.11 on; the message before)
        return code & 0xFF == SQLITE_FULL or "database or disk is full" in str(exc)
    return False


def _unavailable(exc: BaseException, path: Path) -> StoreUnavailable:
    text = str(exc) if not isinstance(exc, OSError) else (exc.strerror or str(exc))
    lowered = text.lower()
    folder = path.parent
    if is_disk_full(exc) or "disk is full" in lowered or _no_room(folder):
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


def _no_room(folder: Path) -> bool:
    """Whether the disk holding `folder` has no free block (SQLite then says "disk I/O
    error" where it could not extend its shared-memory file)."""
    try:
        return shutil.disk_usage(folder).free == 0
    except OSError:
        return False


def _prepare(data_dir: Path) -> Path:
    """Create the directory and the database file, readable by its owner only (it holds the
    API key); on a full disk, give the room opening it takes (its shared-memory file, the
    journal's start) from the reserve."""
    data_dir.mkdir(parents=True, exist_ok=True)
    _room_to_open(data_dir / RESERVE_NAME)
    path = data_dir / DB_NAME
    if not path.exists():
        path.touch(mode=0o600)
    return path


def _make_reserve(path: Path, spare: int = RESERVE_SPARE) -> int:
    """Grow the reserve file (room held for `Store.freeing`) toward RESERVE_BYTES with the
    disk's free room beyond `spare` bytes, and give its size. What it has is kept (a reserve
    of part of its size still lets most deletes through). Random bytes: a compressing file
    system would not hold room for zeros."""
    with _RESERVE_LOCK:  # (two writes at once would both grow it)
        size = path.stat().st_size if path.exists() else 0
        try:
            missing = min(RESERVE_BYTES - size, shutil.disk_usage(path.parent).free - spare)
            if missing > 0:
                with open(path, "ab") as handle:
                    handle.write(os.urandom(missing))
        except OSError as exc:  # (the disk filled meanwhile: what was written is kept)
            log.info("no room for all of the reserve %s yet (%s)", path, exc.strerror or exc)
        return path.stat().st_size if path.exists() else 0


def _room_to_open(reserve: Path) -> None:
    if shutil.disk_usage(reserve.parent).free < OPEN_ROOM and reserve.exists():
        size = reserve.stat().st_size
        os.truncate(reserve, max(0, size - OPEN_ROOM))
        log.warning("the disk holding %s is full: opening it with room from its reserve", reserve)


def _release_reserve(path: Path) -> bool:
    with _RESERVE_LOCK:
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True


_RESERVE_LOCK = threading.Lock()


def _free_room(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """`work` (a delete) with freed pages left as they are (zeroing them, SQLite's
    `secure_delete`, takes as much room in the journal as they hold), then a checkpoint: the
    journal's frames go to the database, whose freed pages later writes take, and the next
    write starts the journal over in the room it already has."""
    (previous,) = db.execute("PRAGMA secure_delete").fetchone()
    db.execute("PRAGMA secure_delete = FAST")
    try:
        result = _transact(db, work)
    finally:
        db.execute(f"PRAGMA secure_delete = {int(previous)}")
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as exc:  # the delete is done; the next checkpoint will do
        log.info("checkpoint after a delete on a full disk: %s", exc)
    return result


def _transact(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    db.execute("BEGIN IMMEDIATE")
    try:
        result = work(db)
        db.commit()  # (on a full disk, the commit is what fails)
    except BaseException:
        if db.in_transaction:
            db.rollback()
        raise
    return result


@asynccontextmanager
async def _disk_full_named() -> AsyncIterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        if is_disk_full(exc):
            raise DiskFull() from exc
        raise


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
        # Whether project passages and conversation passages are searched by SQLite's FTS5
        # (else core/store/text_search.py).
        self.full_text = True
        # The reserve file's size: while it is short (used by a delete on a full disk, or
        # made when there was little room), each write tries to grow it back.
        self.reserve = path.parent / RESERVE_NAME
        self.reserve_size = RESERVE_BYTES

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction at a time: committed on success, rolled back on error (a full
        disk raises DiskFull)."""
        async with self._write_lock, _disk_full_named():
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
                await self.db.commit()
            except BaseException:
                if self.db.in_transaction:
                    await self.db.rollback()
                raise
        await self._keep_reserve()

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)` as one write transaction in a single trip to the database's
        thread (committed on success, rolled back on error; a full disk raises DiskFull),
        where `transaction()` takes a trip per statement. `work` runs on that thread, beside
        the event loop: it may use the connection it is given and values nothing changes
        meanwhile, never the loop's objects."""
        result = await self._on_thread(_transact, work)
        await self._keep_reserve()
        return result

    async def _keep_reserve(self) -> None:
        """After a write: a reserve that is short grows back if the disk has room again (a
        disk that fills a second time, even after a restart, must still take a delete)."""
        if self.reserve_size < RESERVE_BYTES:
            self.reserve_size = await asyncio.to_thread(_make_reserve, self.reserve)

    async def freeing(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`write(work)` for a write that frees room (a delete), which goes through also on a
        full disk: then the reserve file is released for its journal and it runs again
        (`_free_room`); then the reserve takes back at once the room the journal left (what
        the delete freed is in the database file, for later writes; the disk stays full), so
        the next full disk takes a delete too."""
        try:
            return await self.write(work)
        except DiskFull:
            if not await asyncio.to_thread(_release_reserve, self.reserve):
                raise
            log.warning("the disk holding %s is full: deleting with its reserve", self.path)
        self.reserve_size = 0
        try:
            return await self._on_thread(_free_room, work)
        finally:
            self.reserve_size = await asyncio.to_thread(_make_reserve, self.reserve, 0)

    async def _on_thread(
        self,
        run: Callable[[sqlite3.Connection, Callable[[sqlite3.Connection], T]], T],
        work: Callable[[sqlite3.Connection], T],
    ) -> T:
        async with self._write_lock, _disk_full_named():
            # aiosqlite's queue to its thread (`_execute`, `_conn`: in every release so far)
            result: T = await self.db._execute(run, self.db._conn, work)  # type: ignore[no-untyped-call]
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
        store.reserve_size = await asyncio.to_thread(_make_reserve, store.reserve)
        store.full_text = full_text
        if not full_text:
            log.warning(
                "ComfyUI Assistant: this Python's SQLite has no FTS5 (full-text search): project "
                "documents too large to send whole, and earlier messages (searchConversation), "
                "are searched by plain word matching instead"
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
