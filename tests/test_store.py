"""The SQLite store: migrations (fresh, from an older schema, a failing step), WAL, concurrent
writers on one thread (directly and through /api/assistant/chat), threads surviving a restart,
one-trip write transactions, and what storing a request's messages reads."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import aiosqlite
import pytest
from comfyui_assistant.core.store.migrations import MIGRATIONS, applied_migrations, migrate
from comfyui_assistant.core.store.store import DB_NAME, Store
from comfyui_assistant.core.store.thread_state import ThreadState
from comfyui_assistant.core.store.threads import Threads, stored_key

from .conftest import start_app
from .helpers import chat_body, user
from .scripted_provider import text_reply

ALL_STEPS = [
    "001_settings",
    "002_user_context",
    "003_threads",
    "004_sent_turns",
    "005_thread_workflow",
    "006_delegations",
    "007_projects",
    "008_attachments",
    "009_conversation_index",
    "010_passage_vectors",
    "011_sent_turn_recall",
    "012_checkpoints",
    "013_thread_branches",
]
ALL_TABLES = [
    "attachments",
    "checkpoint_blobs",
    "checkpoints",
    "delegations",
    "documents",
    "message_index",
    "message_index_config",
    "message_index_content",
    "message_index_data",
    "message_index_docsize",
    "message_index_idx",
    "message_passages",
    "messages",
    "migrations",
    "passage_index",
    "passage_index_config",
    "passage_index_content",
    "passage_index_data",
    "passage_index_docsize",
    "passage_index_idx",
    "passage_vectors",
    "passages",
    "personas",
    "projects",
    "reminders",
    "rules",
    "sent_turns",
    "settings",
    "thread_branches",
    "thread_state",
    "threads",
    "tool_results",
    "unindexed_threads",
]


async def tables(db: aiosqlite.Connection) -> list[str]:
    async with db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name"
    ) as cursor:
        return [row[0] async for row in cursor]


async def recorded(db: aiosqlite.Connection) -> dict[str, float]:
    async with db.execute("SELECT name, applied_at FROM migrations ORDER BY name") as cursor:
        return {row[0]: row[1] async for row in cursor}


@pytest.fixture
async def store(tmp_path):
    opened = await Store.open(tmp_path)
    yield opened
    await opened.close()


async def test_an_empty_database_gets_every_step(store, tmp_path):
    assert store.path == tmp_path / DB_NAME
    assert list(await recorded(store.db)) == ALL_STEPS
    assert await tables(store.db) == ALL_TABLES
    async with store.db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'messages_by_thread'"
    ) as cursor:
        assert await cursor.fetchall() != []
    assert await migrate(store.db) == []  # nothing left to apply


async def test_an_older_database_is_brought_forward_and_keeps_its_rows(tmp_path):
    path = tmp_path / DB_NAME
    async with aiosqlite.connect(path) as old:
        assert await migrate(old, MIGRATIONS[:1]) == ["001_settings"]
        await old.execute(
            "INSERT INTO settings (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)",
            ("provider", "model", '"llama3.2"', 1.5),
        )
        await old.commit()
        assert await tables(old) == ["migrations", "settings"]
        first_applied = (await recorded(old))["001_settings"]

    store = await Store.open(tmp_path)
    try:
        steps = await recorded(store.db)
        assert list(steps) == ALL_STEPS
        assert steps["001_settings"] == first_applied  # not run a second time
        assert await tables(store.db) == ALL_TABLES
        assert await store.get_settings("provider") == {"model": "llama3.2"}
        row = await store.fetchone("SELECT updated_at FROM settings WHERE key = 'model'")
        assert row is not None and row["updated_at"] == 1.5

        assert await migrate(store.db) == []
        assert await recorded(store.db) == steps
    finally:
        await store.close()

    store = await Store.open(tmp_path)  # and opening again changes nothing
    try:
        assert await recorded(store.db) == steps
        assert await store.get_settings("provider") == {"model": "llama3.2"}
    finally:
        await store.close()


async def test_a_failing_step_rolls_back_and_is_not_recorded(store):
    async def add_notes(db: aiosqlite.Connection) -> None:
        await db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")

    async def broken(db: aiosqlite.Connection) -> None:
        await db.execute("CREATE TABLE half_done (id INTEGER PRIMARY KEY)")
        await db.execute(
            "INSERT INTO settings (namespace, key, value, updated_at) VALUES ('x', 'y', '1', 0)"
        )
        raise RuntimeError("step 906 failed half-way")

    async def never(db: aiosqlite.Connection) -> None:
        await db.execute("CREATE TABLE never_reached (id INTEGER PRIMARY KEY)")

    steps = [*MIGRATIONS, ("905_notes", add_notes), ("906_broken", broken), ("907", never)]
    with pytest.raises(RuntimeError, match="step 906 failed half-way"):
        await migrate(store.db, steps)

    assert list(await recorded(store.db)) == [*ALL_STEPS, "905_notes"]
    assert await tables(store.db) == sorted([*ALL_TABLES, "notes"])  # no half_done
    assert await store.get_settings("x") == {}
    assert store.db.in_transaction is False

    async def fixed(db: aiosqlite.Connection) -> None:
        await db.execute("CREATE TABLE half_done (id INTEGER PRIMARY KEY)")

    steps[-2] = ("906_broken", fixed)
    assert await migrate(store.db, steps) == ["906_broken", "907"]
    assert list(await recorded(store.db)) == [*ALL_STEPS, "905_notes", "906_broken", "907"]
    assert await applied_migrations(store.db) == [*ALL_STEPS, "905_notes", "906_broken", "907"]


async def test_the_database_is_in_wal_mode(store, tmp_path):
    row = await store.fetchone("PRAGMA journal_mode")
    assert row is not None and row[0] == "wal"
    with sqlite3.connect(tmp_path / DB_NAME) as other:  # persistent: every connection sees it
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert (tmp_path / DB_NAME).stat().st_mode & 0o777 == 0o600


def text_message(mid: str, role: str, text: str) -> dict:
    return {"id": mid, "role": role, "parts": [{"type": "text", "text": text}]}


async def test_fifty_concurrent_writers_on_one_thread_lose_nothing(store):
    threads = Threads(store)
    first = text_message("first", "user", "shared first message")

    async def writer(i: int) -> None:
        await threads.sync("busy", [first, text_message(f"u{i}", "user", f"message {i}")])
        answer = text_message(f"a{i}", "assistant", f"answer {i}")
        await threads.save_answer("busy", answer, 2, "complete")

    await asyncio.gather(*(writer(i) for i in range(50)))

    stored = await threads.messages("busy")
    by_id = {m.id: (m.role, m.parts[0]["text"], m.status) for m in stored}
    expected = {"first": ("user", "shared first message", "complete")}
    expected |= {f"u{i}": ("user", f"message {i}", "complete") for i in range(50)}
    expected |= {f"a{i}": ("assistant", f"answer {i}", "complete") for i in range(50)}
    assert len(stored) == 101
    assert by_id == expected
    assert stored[0].id == "first"  # position 0 sorts first
    thread = await threads.get("busy")
    assert thread is not None
    assert (thread["title"], thread["messageCount"]) == ("shared first message", 101)


async def test_fifty_concurrent_chats_on_one_thread_are_all_stored(assistant, provider):
    provider.enqueue(*(text_reply(f"answer {i}") for i in range(50)))
    first = user("shared first message", "first")

    async def one(i: int) -> tuple[int, str]:
        return await assistant.chat(chat_body(first, user(f"message {i}", f"u{i}"), id="busy"))

    results = await asyncio.gather(*(one(i) for i in range(50)))
    assert [status for status, _ in results] == [200] * 50
    assert all('"type":"finish"' in body for _, body in results)
    assert "database is locked" not in "".join(body for _, body in results)

    async with assistant.session.get(assistant.base + "/api/assistant/threads/busy") as resp:
        assert resp.status == 200
        thread = await resp.json()
    messages = thread["messages"]
    assert thread["messageCount"] == len(messages) == 101
    users = {m["id"]: m["parts"][0]["text"] for m in messages if m["role"] == "user"}
    assert users == {"first": "shared first message"} | {f"u{i}": f"message {i}" for i in range(50)}
    answers = sorted(
        p["text"] for m in messages if m["role"] == "assistant" for p in m["parts"] if "text" in p
    )
    assert answers == sorted(f"answer {i}" for i in range(50))
    assert all(
        m.get("metadata", {}).get("status") is None for m in messages if m["role"] == "assistant"
    )
    assert len(provider.requests) == 50


async def test_a_thread_survives_a_restart(provider, tmp_path):
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    provider.enqueue(text_reply("Use a ", "KSampler."))
    app = await start_app(tmp_path / "data", env)
    try:
        status, _ = await app.chat(chat_body(user("How do I sample?"), id="kept"))
        assert status == 200
        async with app.session.get(app.base + "/api/assistant/threads/kept") as resp:
            before = await resp.json()
    finally:
        await app.close()

    app = await start_app(tmp_path / "data", env)
    try:
        async with app.session.get(app.base + "/api/assistant/threads/kept") as resp:
            assert resp.status == 200
            after = await resp.json()
        async with app.session.get(app.base + "/api/assistant/threads") as resp:
            listed = await resp.json()
    finally:
        await app.close()

    assert after == before
    user_message, answer = after["messages"]
    assert user_message == user("How do I sample?")
    assert answer["role"] == "assistant"
    assert [p for p in answer["parts"] if not p["type"].startswith("data-")] == [
        {"type": "step-start"},
        {"type": "text", "text": "Use a KSampler.", "state": "done"},
    ]
    assert answer["metadata"] == {"model": "scripted-model", "modelSource": "environment"}
    assert listed == {"threads": [{k: v for k, v in after.items() if k != "messages"}]}
    assert after["title"] == "How do I sample?"


async def test_a_write_is_one_transaction_committed_or_rolled_back(store):
    def insert(db: sqlite3.Connection, key: str) -> str:
        db.execute(
            "INSERT INTO settings (namespace, key, value, updated_at) VALUES ('t', ?, '1', 0)",
            (key,),
        )
        return key

    def insert_then_fail(db: sqlite3.Connection) -> None:
        insert(db, "lost")
        raise ValueError("no")

    assert await store.write(lambda db: insert(db, "kept")) == "kept"
    with pytest.raises(ValueError):
        await store.write(insert_then_fail)
    assert await store.get_settings("t") == {"kept": 1}
    assert not store.db.in_transaction


async def traced(store: Store) -> list[str]:
    """Every statement the store's connection runs from now on."""
    statements: list[str] = []
    await store.db.set_trace_callback(statements.append)
    return statements


async def test_a_new_thread_is_stored_without_reading_it_first(store):
    threads, state = Threads(store), ThreadState(store)
    statements = await traced(store)
    await threads.sync("new", [text_message("u1", "user", "hello")])
    assert await state.summary("new") is None  # known: a thread just created has none
    # (SQLite's FTS5 reads its own config table once after a schema change: not ours)
    ours = [s for s in statements if "'message_index_config'" not in s]
    assert not [s for s in ours if s.lstrip().upper().startswith("SELECT")]
    assert [m.parts for m in await threads.messages("new")] == [[{"type": "text", "text": "hello"}]]
    assert (await threads.get("new") or {})["title"] == "hello"


async def test_a_stored_thread_unknown_to_this_process_gets_only_its_new_message(store):
    first = text_message("u1", "user", "hello")
    await Threads(store).sync("old", [first])
    store.cache.clear()  # as after a restart: nothing known about what is stored
    statements = await traced(store)
    answer = text_message("a1", "assistant", "hi")
    await Threads(store).sync("old", [first, answer, text_message("u2", "user", "again")])
    written = [s for s in statements if s.startswith("INSERT INTO messages")]
    assert len(written) == 2  # the answer and the new question; the first is unchanged
    assert [m.id for m in await Threads(store).messages("old")] == ["u1", "a1", "u2"]


def tool_message(mid: str, state: str, output: Any = None, **extra: Any) -> dict[str, Any]:
    part = {"type": "tool-getWorkflow", "toolCallId": "c1", "state": state, "input": {"a": 1}}
    if output is not None:
        part["output"] = output
    return {"id": mid, "role": "assistant", "parts": [part], **extra}


async def test_a_known_thread_gets_its_next_message_without_reading_or_rewriting_the_rest(store):
    threads = Threads(store)
    history = [
        text_message(f"m{i}", "user" if i % 2 else "assistant", f"text {i}") for i in range(40)
    ]
    await threads.sync("long", history)
    statements = await traced(store)
    await threads.sync("long", [*history, text_message("new", "user", "one more")])
    assert not [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    written = [s for s in statements if s.startswith("INSERT INTO messages")]
    assert len(written) == 1 and "'new'" in written[0]
    statements.clear()
    await threads.sync("long", [*history, text_message("new", "user", "one more")])
    assert statements == []  # a resubmit writes nothing at all


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (text_message("x", "user", "cfg 7"), text_message("x", "user", "cfg 8")),  # edited
        (tool_message("x", "input-available"), tool_message("x", "output-available", {"n": 1})),
        (
            tool_message(
                "x",
                "output-available",
                {"n": 1},
            ),
            tool_message(
                "x",
                "output-error",
                None,
            ),
        ),
        (
            {"id": "x", "role": "assistant", "parts": [{"type": "data-context", "data": {"t": 1}}]},
            {"id": "x", "role": "assistant", "parts": [{"type": "data-context", "data": {"t": 2}}]},
        ),
    ],
)
async def test_a_known_message_that_changed_is_written_again(store, before, after):
    threads = Threads(store)
    first = text_message("u0", "user", "hello")
    await threads.sync("t", [first, before])
    await threads.sync("t", [first, after])
    stored = await threads.messages("t")
    assert [m.parts for m in stored] == [first["parts"], after["parts"]]


def test_the_stored_key_leaves_out_only_a_tool_calls_input_and_output() -> None:
    done = tool_message("x", "output-available", {"nodes": list(range(50))})
    other = tool_message("x", "output-available", {"nodes": []})
    assert stored_key(done) == stored_key(other)  # set once, with the state
    assert stored_key(done) != stored_key(tool_message("x", "output-error"))
    preliminary = tool_message("x", "output-available", {"nodes": []})
    preliminary["parts"][0]["preliminary"] = True
    assert stored_key(preliminary) != stored_key(other)
    data = {"id": "x", "role": "assistant", "parts": [{"type": "data-x", "input": 1}]}
    assert stored_key(data) != stored_key({**data, "parts": [{"type": "data-x", "input": 2}]})


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temp_file(tmp_path):
    from comfyui_assistant.core.base.atomic_file import write_atomic

    target = tmp_path / "SOUL.md"
    write_atomic(target, "old")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "half a character: \ud800")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["SOUL.md"]


async def test_a_summary_made_ahead_is_kept_beside_the_one_in_use_until_a_request_takes_it(store):
    threads, state = Threads(store), ThreadState(store)
    await threads.sync("t", [text_message("u1", "user", "hello")])
    await state.set_summary("t", "first", "m10", False)
    await state.set_next_summary("t", "second", "m20", True)
    stored = await state.summary("t")
    assert (stored["text"], stored["next"]["text"], stored["next"]["fallback"]) == (
        "first",
        "second",
        True,
    )
    # while that request was being answered, a newer one was made ahead: both are kept
    await state.set_next_summary("t", "third", "m30", False)
    await state.use_next_summary("t", "second", "m20", True)
    stored = await state.summary("t")
    assert (stored["text"], stored["until"], stored["next"]["until"]) == ("second", "m20", "m30")
    await state.use_next_summary("t", "third", "m30", False)
    stored = await ThreadState(store).summary("t")
    assert (stored["text"], "next" in stored) == ("third", False)
    # (read back from the database, not the in-memory copy)
    store.cache.pop("summaries", None)
    assert (await ThreadState(store).summary("t"))["until"] == "m30"
