"""The user's own context: rules, reminders, personas, preferences, the edited system prompt,
and the hand-editable files SOUL.md and goals.md in the data directory.

Rules, reminders and personas are small lists with the same shape of operations, so one
`ListTable` serves all three; each differs only in its columns and their checks.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import RequestError, write_atomic
from .store import Store

TEXT_LIMIT = 20_000
FILES = {"soul": "SOUL.md", "goals": "goals.md"}
DEFAULTS_DIR = Path(__file__).resolve().parents[2] / "user_context" / "defaults"
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def install_defaults(data_dir: Path, defaults: Path = DEFAULTS_DIR) -> list[str]:
    """Copy the shipped defaults that are missing from the data directory; never overwrite."""
    copied = []
    for source in sorted(defaults.glob("*")) if defaults.is_dir() else []:
        target = data_dir / source.name
        if source.is_file() and not target.exists():
            write_atomic(target, source.read_text(encoding="utf-8"))
            copied.append(source.name)
    return copied


def sendable(text: str) -> str:
    """What of a hand-edited file goes to the model: HTML comments are notes to the user."""
    return COMMENT.sub("", text).strip()


@dataclass(frozen=True)
class Column:
    api: str  # camelCase name in the API
    sql: str
    kind: type
    required: bool = False
    default: Any = None


def _check(column: Column, value: Any) -> Any:
    if column.kind is bool:
        if not isinstance(value, bool):
            raise RequestError(f"{column.api} must be true or false")
        return int(value)
    if not isinstance(value, str):
        raise RequestError(f"{column.api} must be a string")
    value = value.strip()
    if column.required and not value:
        raise RequestError(f"{column.api} must not be empty")
    if len(value) > TEXT_LIMIT:
        raise RequestError(f"{column.api} is longer than {TEXT_LIMIT} characters")
    return value


class ListTable:
    def __init__(self, store: Store, table: str, columns: tuple[Column, ...]) -> None:
        self.store, self.table, self.columns = store, table, columns

    def _row(self, row: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"id": row["id"]}
        for c in self.columns:
            out[c.api] = bool(row[c.sql]) if c.kind is bool else row[c.sql]
        return out

    def _values(self, body: Any, creating: bool) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        values = {}
        for c in self.columns:
            if c.api in body:
                values[c.sql] = _check(c, body[c.api])
            elif creating and c.required:
                raise RequestError(f"'{c.api}' is required")
            elif creating:
                values[c.sql] = c.default
        if not values:
            raise RequestError(f"send one or more of {', '.join(c.api for c in self.columns)}")
        return values

    async def list(self) -> list[dict[str, Any]]:
        rows = await self.store.fetchall(f"SELECT * FROM {self.table} ORDER BY id")
        return [self._row(r) for r in rows]

    async def get(self, item_id: int) -> dict[str, Any] | None:
        row = await self.store.fetchone(f"SELECT * FROM {self.table} WHERE id = ?", (item_id,))
        return self._row(row) if row is not None else None

    async def create(self, body: Any) -> dict[str, Any]:
        self.store.user_generation += 1
        values = self._values(body, creating=True)
        now = time.time()
        names = [*values, "created_at", "updated_at"]
        try:
            async with self.store.transaction() as db:
                cursor = await db.execute(
                    f"INSERT INTO {self.table} ({', '.join(names)}) "
                    f"VALUES ({', '.join('?' * len(names))})",
                    (*values.values(), now, now),
                )
                new_id = cursor.lastrowid
        except sqlite3.IntegrityError as exc:
            raise RequestError(f"that {self.table[:-1]} already exists ({exc})") from None
        item = await self.get(int(new_id or 0))
        assert item is not None
        return item

    async def update(self, item_id: int, body: Any) -> dict[str, Any] | None:
        self.store.user_generation += 1
        values = self._values(body, creating=False)
        sets = ", ".join(f"{k} = ?" for k in values)
        try:
            async with self.store.transaction() as db:
                cursor = await db.execute(
                    f"UPDATE {self.table} SET {sets}, updated_at = ? WHERE id = ?",
                    (*values.values(), time.time(), item_id),
                )
        except sqlite3.IntegrityError as exc:
            raise RequestError(f"that {self.table[:-1]} already exists ({exc})") from None
        return await self.get(item_id) if cursor.rowcount else None

    async def delete(self, item_id: int) -> bool:
        self.store.user_generation += 1
        sql = f"DELETE FROM {self.table} WHERE id = ?"
        return await self.store.freeing(lambda db: db.execute(sql, (item_id,)).rowcount > 0)


TEXT_ITEM = (
    Column("text", "text", str, required=True),
    Column("enabled", "enabled", bool, False, 1),
)
PERSONA = (
    Column("name", "name", str, required=True),
    Column("description", "description", str, default=""),
    Column("instructions", "instructions", str, required=True),
    Column("replacesSystemPrompt", "replaces_system_prompt", bool, default=0),
)


_FILE_CACHE: dict[Path, tuple[tuple[int, int], str]] = {}


def _read(path: Path) -> str:
    """A small hand-edited file, re-read only when its size or mtime changed."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return ""
    version = (stat.st_mtime_ns, stat.st_size)
    cached = _FILE_CACHE.get(path)
    if cached is not None and cached[0] == version:
        return cached[1]
    # hand-edited files may not be UTF-8: show them rather than fail every chat
    text = path.read_bytes().decode("utf-8", errors="replace")
    _FILE_CACHE[path] = (version, text)
    return text


class UserData:
    def __init__(self, store: Store, data_dir: Path) -> None:
        self.store = store
        self.data_dir = data_dir
        self.rules = ListTable(store, "rules", TEXT_ITEM)
        self.reminders = ListTable(store, "reminders", TEXT_ITEM)
        self.personas = ListTable(store, "personas", PERSONA)

    async def read_file(self, name: str) -> str:
        return _read(self.data_dir / FILES[name])  # a stat when unchanged: no thread hop

    async def write_file(self, name: str, text: Any) -> str:
        if not isinstance(text, str) or len(text) > TEXT_LIMIT:
            raise RequestError(f"'text' must be a string of at most {TEXT_LIMIT} characters")
        await asyncio.to_thread(write_atomic, self.data_dir / FILES[name], text)
        return text

    async def setting(self, namespace: str, key: str) -> Any:
        return (await self.store.get_settings(namespace)).get(key)

    async def active_persona(self) -> dict[str, Any] | None:
        persona_id = await self.setting("persona", "active")
        return await self.personas.get(int(persona_id)) if persona_id is not None else None

    async def set_active_persona(self, persona_id: Any) -> dict[str, Any] | None:
        if persona_id is None:
            await self.store.update_settings("persona", {"active": None})
            return None
        if not isinstance(persona_id, int) or isinstance(persona_id, bool):
            raise RequestError("'id' must be a persona id (a number) or null")
        if not 0 < persona_id < 2**63:
            raise RequestError(f"there is no persona with id {persona_id}")
        persona = await self.personas.get(persona_id)
        if persona is None:
            raise RequestError(f"there is no persona with id {persona_id}")
        await self.store.update_settings("persona", {"active": persona_id})
        return persona
