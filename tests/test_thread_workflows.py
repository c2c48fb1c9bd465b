"""Threads that belong to a ComfyUI workflow: the column added to an existing database, the
workflow a new thread records (from the panel's POST or its first chat request), the list with
a workflow's threads first, moving and unbinding a thread, following a renamed workflow, and
every bad input a clear 400."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite
import pytest
from comfyui_assistant.core.base.errors import RequestError
from comfyui_assistant.core.chat.chat_request import parse_chat_request
from comfyui_assistant.core.store.migrations import MIGRATIONS, migrate
from comfyui_assistant.core.store.store import DB_NAME, Store
from comfyui_assistant.core.store.threads import Threads

from .helpers import chat_body, user
from .scripted_provider import text_reply
from .test_threads_api import BASE, call, chat, get_thread, listed

A, B = "portraits/flux.json", "Unsaved Workflow.json"


async def create(app, thread_id: str, workflow: str | None = None) -> dict[str, Any]:
    body = {"id": thread_id} if workflow is None else {"id": thread_id, "workflow": workflow}
    status, thread = await call(app, "POST", BASE, body)
    assert status == 201, thread
    return thread


async def workflows(app, query: str = "") -> list[tuple[str, str | None]]:
    status, body = await call(app, "GET", BASE + query)
    assert status == 200, body
    return [(t["id"], t["workflow"]) for t in body["threads"]]


async def test_an_existing_database_gets_the_column_and_keeps_its_threads(tmp_path):
    async with aiosqlite.connect(tmp_path / DB_NAME) as old:
        before = [name for name, _ in MIGRATIONS if name != "005_thread_workflow"]
        assert await migrate(old, [m for m in MIGRATIONS if m[0] in before]) == before
        await old.execute(
            "INSERT INTO threads (id, title, created_at, updated_at) VALUES ('old', 'Old', 1, 2)"
        )
        await old.execute(
            "INSERT INTO messages (thread_id, id, position, role, parts, created_at, updated_at)"
            " VALUES ('old', 'u1', 0, 'user', '[{\"type\":\"text\",\"text\":\"hi\"}]', 1, 1)"
        )
        await old.commit()

    store = await Store.open(tmp_path)
    try:
        threads = Threads(store)
        [listed_thread] = await threads.list(workflow=A)
        assert listed_thread == {
            "id": "old",
            "title": "Old",
            "archived": False,
            "createdAt": 1,
            "updatedAt": 2,
            "messageCount": 1,
            "workflow": None,  # made before: unbound
            "project": None,
        }
        assert [m.id for m in await threads.messages("old")] == ["u1"]
        index = await store.fetchone(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'threads_by_workflow'"
        )
        assert index is not None
    finally:
        await store.close()


async def test_a_thread_records_the_workflow_it_was_started_on(assistant, provider):
    assert (await create(assistant, "posted", A))["workflow"] == A
    assert (await create(assistant, "plain"))["workflow"] is None

    provider.enqueue(text_reply("one"), text_reply("two"), text_reply("three"))
    await chat(assistant, chat_body(user("first"), id="chatted", workflow=B))
    assert (await get_thread(assistant, "chatted"))["workflow"] == B
    # Later requests from another tab do not move it: moving is asked for (PATCH).
    await chat(assistant, chat_body(user("first"), user("again", "u2"), id="chatted", workflow=A))
    assert (await get_thread(assistant, "chatted"))["workflow"] == B
    # Nor does a request bind a thread created unbound (or unbound by the user).
    await chat(assistant, chat_body(user("hello"), id="plain", workflow=A))
    assert (await get_thread(assistant, "plain"))["workflow"] is None


async def test_the_list_shows_a_workflows_threads_first_newest_first(assistant):
    for thread_id, workflow in [("a1", A), ("b1", B), ("none", None), ("a2", A), ("b2", B)]:
        await create(assistant, thread_id, workflow)
    everything = [("b2", B), ("a2", A), ("none", None), ("b1", B), ("a1", A)]
    assert await workflows(assistant) == everything
    assert await workflows(assistant, "?workflow=" + A.replace("/", "%2F")) == [
        ("a2", A),
        ("a1", A),
        ("b2", B),
        ("none", None),
        ("b1", B),
    ]
    assert await workflows(assistant, "?workflow=Unsaved%20Workflow.json") == [
        ("b2", B),
        ("b1", B),
        ("a2", A),
        ("none", None),
        ("a1", A),
    ]
    assert await workflows(assistant, "?workflow=elsewhere.json") == everything
    await call(assistant, "PATCH", f"{BASE}/a1", {"archived": True})
    assert await listed(assistant, f"?archived=false&workflow={A}") == ["a2", "b2", "none", "b1"]


async def test_a_thread_is_moved_to_another_workflow_or_unbound(assistant):
    created = await create(assistant, "t", A)
    status, moved = await call(assistant, "PATCH", f"{BASE}/t", {"workflow": B})
    assert (status, moved["workflow"]) == (200, B)
    assert moved["updatedAt"] == created["updatedAt"]  # a move is not a message
    assert await workflows(assistant, "?workflow=" + A.replace("/", "%2F")) == [("t", B)]

    status, unbound = await call(assistant, "PATCH", f"{BASE}/t", {"workflow": None})
    assert (status, unbound["workflow"], unbound["title"]) == (200, None, "")
    status, both = await call(assistant, "PATCH", f"{BASE}/t", {"workflow": A, "title": "Flux"})
    assert (status, both["workflow"], both["title"]) == (200, A, "Flux")
    # Without "workflow" the binding stays.
    status, renamed = await call(assistant, "PATCH", f"{BASE}/t", {"title": "Flux 2"})
    assert (status, renamed["workflow"]) == (200, A)

    status, body = await call(assistant, "PATCH", f"{BASE}/missing", {"workflow": A})
    assert (status, body["error"], body["code"]) == (
        404,
        "thread missing does not exist",
        "not_found.thread",
    )


async def test_a_renamed_workflow_takes_its_threads_along(assistant):
    for thread_id, workflow in [("u1", B), ("u2", B), ("other", A), ("none", None)]:
        await create(assistant, thread_id, workflow)
    status, body = await call(assistant, "POST", f"{BASE}/rebind", {"from": B, "to": "saved.json"})
    assert (status, body) == (200, {"from": B, "to": "saved.json", "moved": 2})
    assert sorted(await workflows(assistant)) == [
        ("none", None),
        ("other", A),
        ("u1", "saved.json"),
        ("u2", "saved.json"),
    ]
    # A temporary tab closed unsaved: its threads stay, bound to nothing.
    status, body = await call(
        assistant, "POST", f"{BASE}/rebind", {"from": "saved.json", "to": None}
    )
    assert (status, body["moved"]) == (200, 2)
    assert (await get_thread(assistant, "u1"))["workflow"] is None
    assert (await get_thread(assistant, "other"))["workflow"] == A
    status, body = await call(assistant, "POST", f"{BASE}/rebind", {"from": "nothing", "to": A})
    assert (status, body["moved"]) == (200, 0)


KEY_ERROR = "'workflow' must be a workflow key: a string of 1 to 1024 characters"
BAD_KEYS = [5, "", "x" * 1025, ["a"], {"a": 1}, True]


@pytest.mark.parametrize("value", BAD_KEYS)
async def test_a_bad_workflow_key_is_400_everywhere(assistant, value):
    await create(assistant, "t", A)
    assert await call(assistant, "PATCH", f"{BASE}/t", {"workflow": value}) == (
        400,
        {"error": KEY_ERROR},
    )
    assert await call(assistant, "POST", BASE, {"id": "n", "workflow": value}) == (
        400,
        {"error": KEY_ERROR},
    )
    status, body = await call(assistant, "POST", f"{BASE}/rebind", {"from": A, "to": value})
    assert (status, body) == (400, {"error": KEY_ERROR.replace("'workflow'", "'to'")})
    status, raw = await assistant.chat(chat_body(user("hi"), id="c", workflow=value))
    assert (status, json.loads(raw)) == (400, {"error": KEY_ERROR})
    assert (await get_thread(assistant, "t"))["workflow"] == A
    assert sorted(await listed(assistant)) == ["t"]


async def test_other_bad_inputs_are_400(assistant):
    await create(assistant, "t", A)
    control = {"error": "'workflow' must not contain control characters"}
    assert await call(assistant, "PATCH", f"{BASE}/t", {"workflow": "a\nb"}) == (400, control)
    assert await call(assistant, "GET", BASE + "?workflow=" + "x" * 1025) == (
        400,
        {"error": KEY_ERROR},
    )
    assert await call(assistant, "GET", BASE + "?workflow=a%00b") == (400, control)
    usage = {"error": 'send {"from": "<workflow key>", "to": "<workflow key>"|null}'}
    for body in ({"from": A}, {"to": A}, {"from": 5, "to": A}, [A, B]):
        assert await call(assistant, "POST", f"{BASE}/rebind", body) == (400, usage)
    status, body = await call(assistant, "POST", f"{BASE}/rebind", {"from": "", "to": A})
    assert (status, body) == (400, {"error": KEY_ERROR.replace("'workflow'", "'from'")})


@pytest.mark.parametrize("value", BAD_KEYS)
def test_the_chat_request_checks_its_workflow(value):
    with pytest.raises(RequestError, match="'workflow' must be a workflow key"):
        parse_chat_request(chat_body(user("hi"), workflow=value))
    assert parse_chat_request(chat_body(user("hi"), workflow=A)).workflow == A
    assert parse_chat_request(chat_body(user("hi"))).workflow is None
