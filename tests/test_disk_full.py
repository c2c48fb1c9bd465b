"""A full disk, for real: the data directory on a small file system of its own, filled up. Every
write says the disk is full (507, or an `error` chunk in a chat's stream) and changes nothing;
deleting a thread goes through, and makes room for later writes; writes work again once there
is room."""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.store.store import (
    DB_NAME,
    DISK_FULL,
    RESERVE_NAME,
    DiskFull,
    is_disk_full,
)

from .conftest import App, start_app
from .helpers import chat_body, error_said, small_file_system, sse_events, user
from .scripted_provider import ScriptedProvider, text_reply


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 32 MB."""
    with small_file_system(tmp_path, "32m") as disk:
        yield disk


def fill(disk: Path, name: str = "filler") -> Path:
    """Take every byte left on the disk."""
    filler = disk / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\xff" * 65536)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    assert os.statvfs(disk).f_bavail == 0
    return filler


@pytest.fixture
async def app(small_disk: Path, provider: ScriptedProvider) -> AsyncIterator[App]:
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "1000000"}
    app = await start_app(small_disk / "data", env)
    yield app
    await app.close()


async def answer(app: App, thread: str, text: str) -> list[dict[str, Any]]:
    status, body = await app.chat(chat_body(user(text, f"u-{thread}"), id=thread))
    assert status == 200
    return sse_events(body)


async def writes(app: App) -> dict[str, Any]:
    """Each write route's status (a chat: its error chunk's text)."""
    s, out = app.session, {}
    for name, method, path, body in [
        ("rename", "PATCH", "/api/assistant/threads/kept", {"title": "renamed"}),
        ("new thread", "POST", "/api/assistant/threads", {"id": "new"}),
        ("rule", "POST", "/api/assistant/user-context/rules", {"text": "be brief"}),
        ("soul", "PUT", "/api/assistant/user-context/soul", {"text": "x" * 10_000}),
        ("provider", "PUT", "/api/assistant/provider", {"model": "other"}),
        ("skill", "POST", "/api/assistant/user-context/skills",
         {"name": "A skill", "description": "does it", "body": "steps " * 1000}),
    ]:  # fmt: skip
        async with s.request(method, app.base + path, json=body) as resp:
            out[name] = resp.status, (await resp.json()).get("error")
    events = await answer(app, "another", "hello")
    out["chat"] = [error_said(e["errorText"]) for e in events if e["type"] == "error"]
    return out


async def test_a_full_disk_is_said_a_delete_goes_through_writes_come_back(
    app, provider, small_disk
):
    provider.responder = lambda body: text_reply("noted")
    await answer(app, "kept", "a small thread")
    await answer(app, "big", "a long paste: " + "lorem ipsum " * 500_000)  # 6 MB
    assert (small_disk / "data" / RESERVE_NAME).stat().st_size == 4 << 20
    with closing(sqlite3.connect(small_disk / "data" / DB_NAME)) as db:  # no room in the journal
        assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    filler = fill(small_disk)

    said = {"chat": [DISK_FULL], **dict.fromkeys(["rename", "new thread", "rule", "soul",
            "provider", "skill"], (507, DISK_FULL))}  # fmt: skip
    assert await writes(app) == said
    async with app.session.get(app.base + "/api/assistant/threads") as resp:
        listed = {t["id"]: t["title"] for t in (await resp.json())["threads"]}
    assert sorted(listed) == ["big", "kept"] and listed["kept"] == "a small thread"

    async with app.session.delete(app.base + "/api/assistant/threads/big") as resp:
        assert resp.status == 200, await resp.text()
    # what the delete freed takes later writes, the disk still full
    async with app.session.patch(
        app.base + "/api/assistant/threads/kept", json={"title": "renamed"}
    ) as resp:
        assert resp.status == 200 and (await resp.json())["title"] == "renamed"

    filler.unlink()
    events = await answer(app, "after", "hello again")
    assert [e["delta"] for e in events if e["type"] == "text-delta"] == ["noted"]
    async with app.session.delete(app.base + "/api/assistant/threads/after") as resp:
        assert resp.status == 200
    assert (small_disk / "data" / RESERVE_NAME).stat().st_size == 4 << 20  # made again


async def delete(app: App, thread: str) -> tuple[int, Any]:
    async with app.session.delete(app.base + f"/api/assistant/threads/{thread}") as resp:
        return resp.status, (await resp.json()).get("error")


async def test_a_disk_that_fills_again_still_takes_deletes_also_after_a_restart(
    small_disk, provider
):
    # before: the first delete used the reserve, which was not made again while less than
    # its 4 MB was free; on the next full disk every delete answered 507, after a restart too
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "1000000"}
    data, reserve = small_disk / "data", small_disk / "data" / RESERVE_NAME
    provider.responder = lambda body: text_reply("noted")
    app = await start_app(data, env)
    try:
        for thread in ("kept", "one", "two", "three"):
            await answer(app, thread, f"{thread}: " + "lorem ipsum " * 150_000)  # 1.8 MB
        with closing(sqlite3.connect(data / DB_NAME)) as db:  # no room in the journal
            assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        fill(small_disk, "first")
        assert await delete(app, "one") == (200, None)
        await writes(app)  # (in the room the delete freed: some go through)
        fill(small_disk, "second")  # the disk fills again
        assert await delete(app, "two") == (200, None)  # (was 507)
        assert reserve.stat().st_size > 3 << 20  # the room the journal left: taken back
    finally:
        await app.close()
    fill(small_disk, "third")  # (what the closed journal gave back)
    app = await start_app(data, env)  # a restart on the full disk
    try:
        await writes(app)  # (it opens: room for that came from the reserve)
        assert reserve.stat().st_size > 3 << 20
        assert await delete(app, "three") == (200, None)
        async with app.session.get(app.base + "/api/assistant/threads") as resp:
            listed = {t["id"] for t in (await resp.json())["threads"]}
        assert "kept" in listed and not listed & {"one", "two", "three"}
        for filler in ("first", "second", "third"):  # room again: writes work, the reserve
            (small_disk / filler).unlink()  # grows back on the next write, whole
        assert reserve.stat().st_size < 4 << 20
        events = await answer(app, "after", "hello again")
        assert [e["delta"] for e in events if e["type"] == "text-delta"] == ["noted"]
        assert reserve.stat().st_size == 4 << 20
    finally:
        await app.close()


async def test_a_store_that_cannot_open_on_a_full_disk_says_the_disk_is_full(small_disk, provider):
    # its shared-memory file cannot grow: SQLite says "disk I/O error", which was told as
    # "fix its permissions"; with no reserve to open with, the disk is named full
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m"}
    app = await start_app(small_disk / "data", env)
    try:
        assert (await writes(app))["rule"][0] == 201
    finally:
        await app.close()
    (small_disk / "data" / RESERVE_NAME).unlink()
    for leftover in ("-wal", "-shm"):
        (small_disk / "data" / (DB_NAME + leftover)).unlink(missing_ok=True)
    fill(small_disk)
    app = await start_app(small_disk / "data", env)
    try:
        async with app.session.get(app.base + "/api/assistant/threads") as resp:
            said = (await resp.json())["error"]
        assert resp.status == 503 and said.startswith(
            f"ComfyUI Assistant cannot use its database: the disk holding {small_disk / 'data'} "
            "is full ("
        ), said
        assert said.endswith("— free some space, or choose another data directory (--data-dir, "
                             "or COMFY_ASSISTANT_DATA_DIR)")  # fmt: skip
    finally:
        await app.close()


def test_what_counts_as_a_full_disk():
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert is_disk_full(DiskFull()) and str(DiskFull()) == DISK_FULL
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    full = sqlite3.connect(":memory:")
    full.execute("CREATE TABLE t (x)")
    full.execute("PRAGMA max_page_count = 2")  # SQLITE_FULL from SQLite itself
    with pytest.raises(sqlite3.OperationalError) as raised:
        full.executemany("INSERT INTO t VALUES (?)", [("x" * 4000,)] * 10)
    assert is_disk_full(raised.value)
    assert not is_disk_full(sqlite3.OperationalError("no such table: x"))
