"""/api/assistant/threads and what /api/assistant/chat stores: the thread list, rename, archive,
delete; the user's message kept when the provider fails, an interrupted answer kept with its partial
text, titles, and a regenerate replacing the old answer."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

import pytest
from comfyui_assistant.core.store.store import DB_NAME

from .helpers import chat_body, sse_events, user
from .scripted_provider import Cut, Status, Stream, chunk, error_body, text_reply

BASE = "/api/assistant/threads"
USAGE = (
    'send {"title": "..."}, {"archived": true|false}, {"workflow": "<key>"|null} '
    'and/or {"project": <project id>|null}'
)
META = {"model": "scripted-model", "modelSource": "environment"}


async def call(app, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    kwargs = {} if body is None else {"json": body}
    async with app.session.request(method, app.base + path, **kwargs) as resp:
        return resp.status, await resp.json()


async def get_thread(app, thread_id: str) -> dict[str, Any]:
    status, thread = await call(app, "GET", f"{BASE}/{thread_id}")
    assert status == 200, thread
    return thread


def without_data(message: dict[str, Any]) -> dict[str, Any]:
    """The message without its `data-*` parts (the context report is another feature's)."""
    parts = [p for p in message["parts"] if not p["type"].startswith("data-")]
    return {**message, "parts": parts}


async def stored(app, thread_id: str = "thread-1") -> list[dict[str, Any]]:
    """The thread's messages as stored, `data-*` parts left out."""
    return [without_data(m) for m in (await get_thread(app, thread_id))["messages"]]


async def listed(app, query: str = "") -> list[str]:
    status, body = await call(app, "GET", BASE + query)
    assert status == 200
    return [t["id"] for t in body["threads"]]


def answer(message_id: str, text: str, **metadata: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "role": "assistant",
        "parts": [{"type": "step-start"}, {"type": "text", "text": text, "state": "done"}],
        "metadata": {**META, **metadata},
    }


async def chat(app, body: dict[str, Any]) -> str:
    """Run one chat turn; return the id of the answer it streamed."""
    status, raw = await app.chat(body)
    assert status == 200
    start = sse_events(raw)[0]
    assert start["type"] == "start"
    return str(start["messageId"])


async def test_create_then_get_a_thread(assistant):
    before = time.time()
    status, created = await call(assistant, "POST", BASE, {"id": "t-1", "title": "  Portraits "})
    assert status == 201
    assert before <= created["createdAt"] <= created["updatedAt"] <= time.time()
    assert created == {
        "id": "t-1",
        "title": "Portraits",
        "archived": False,
        "createdAt": created["createdAt"],
        "updatedAt": created["updatedAt"],
        "messageCount": 0,
        "workflow": None,
        "project": None,
    }
    assert await get_thread(assistant, "t-1") == {**created, "messages": []}

    status, untitled = await call(assistant, "POST", BASE, {"id": "t-2"})
    assert (status, untitled["title"], untitled["messageCount"]) == (201, "", 0)
    assert await call(assistant, "GET", BASE) == (200, {"threads": [untitled, created]})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"title": "x"}, 'send {"id": "<thread id>", "title"?: "...", "workflow"?: "..."}'),
        ({"id": 5}, 'send {"id": "<thread id>", "title"?: "...", "workflow"?: "..."}'),
        (["t"], 'send {"id": "<thread id>", "title"?: "...", "workflow"?: "..."}'),
        ({"id": ""}, "a thread id has 1 to 200 characters"),
        ({"id": "x" * 201}, "a thread id has 1 to 200 characters"),
        ({"id": "t", "title": 5}, "'title' must be a string of at most 200 characters"),
        ({"id": "t", "title": "x" * 201}, "'title' must be a string of at most 200 characters"),
    ],
)
async def test_bad_creates_are_400(assistant, body, message):
    assert await call(assistant, "POST", BASE, body) == (400, {"error": message})
    assert await listed(assistant) == []


async def test_the_list_is_newest_first_and_can_hide_archived(assistant):
    for thread_id in ("a", "b", "c"):
        assert (await call(assistant, "POST", BASE, {"id": thread_id}))[0] == 201
    assert await listed(assistant) == ["c", "b", "a"]

    status, renamed = await call(assistant, "PATCH", f"{BASE}/a", {"title": "Renamed"})
    assert status == 200
    assert (renamed["id"], renamed["title"], renamed["archived"]) == ("a", "Renamed", False)
    assert renamed["updatedAt"] > renamed["createdAt"]
    assert await listed(assistant) == ["a", "c", "b"]  # touched: first

    status, archived = await call(assistant, "PATCH", f"{BASE}/c", {"archived": True})
    assert (status, archived["archived"], archived["title"]) == (200, True, "")
    assert await listed(assistant) == ["c", "a", "b"]
    for query in ("?archived=false", "?archived=0", "?archived=no", "?archived=FALSE"):
        assert await listed(assistant, query) == ["a", "b"]
    assert await listed(assistant, "?archived=true") == ["c", "a", "b"]

    status, body = await call(assistant, "GET", BASE)
    assert [(t["id"], t["title"], t["archived"]) for t in body["threads"]] == [
        ("c", "", True),
        ("a", "Renamed", False),
        ("b", "", False),
    ]

    status, back = await call(
        assistant, "PATCH", f"{BASE}/c", {"archived": False, "title": "Restored"}
    )
    assert (status, back["archived"], back["title"]) == (200, False, "Restored")
    assert await listed(assistant, "?archived=false") == ["c", "a", "b"]


async def test_a_chat_moves_its_thread_to_the_top(assistant, provider):
    provider.enqueue(text_reply("one"), text_reply("two"))
    await chat(assistant, chat_body(user("first"), id="old"))
    await chat(assistant, chat_body(user("second"), id="new"))
    assert await listed(assistant) == ["new", "old"]
    provider.enqueue(text_reply("three"))
    await chat(assistant, chat_body(user("first"), user("again", "u2"), id="old"))
    assert await listed(assistant) == ["old", "new"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, USAGE),
        ({"colour": "red"}, USAGE),
        (["x"], USAGE),
        ({"archived": "yes"}, "'archived' must be true or false"),
        ({"archived": 1}, "'archived' must be true or false"),
        ({"title": 5}, "'title' must be a string of at most 200 characters"),
        ({"title": "x" * 201}, "'title' must be a string of at most 200 characters"),
    ],
)
async def test_bad_updates_are_400_and_change_nothing(assistant, body, message):
    status, created = await call(assistant, "POST", BASE, {"id": "t", "title": "Kept"})
    assert status == 201
    assert await call(assistant, "PATCH", f"{BASE}/t", body) == (400, {"error": message})
    assert await get_thread(assistant, "t") == {**created, "messages": []}


async def test_unknown_threads_are_404(assistant):
    missing = {
        "error": "thread nope does not exist",
        "code": "not_found.thread",
        "params": {"thread": "nope"},
    }
    assert await call(assistant, "GET", f"{BASE}/nope") == (404, missing)
    assert await call(assistant, "PATCH", f"{BASE}/nope", {"title": "x"}) == (404, missing)
    assert await call(assistant, "DELETE", f"{BASE}/nope") == (404, missing)
    assert await listed(assistant) == []  # a PATCH does not create it


@pytest.mark.parametrize(("method", "path"), [("POST", BASE), ("PATCH", f"{BASE}/t")])
async def test_form_posts_get_415(assistant, method, path):
    status, created = await call(assistant, "POST", BASE, {"id": "t", "title": "Kept"})
    assert status == 201
    async with assistant.session.request(
        method,
        assistant.base + path,
        data=b"id=evil&title=evil&archived=true",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    ) as resp:
        assert (resp.status, await resp.json()) == (
            415,
            {"error": "send the body as JSON with 'Content-Type: application/json'"},
        )
    assert await call(assistant, "GET", BASE) == (200, {"threads": [created]})


def rows(data_dir, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(data_dir / DB_NAME) as db:
        return db.execute(sql, params).fetchall()


async def test_deleting_a_thread_deletes_its_messages(assistant, provider, tmp_path):
    provider.enqueue(text_reply("keep"), text_reply("drop"))
    await chat(assistant, chat_body(user("kept thread"), id="keep"))
    await chat(assistant, chat_body(user("doomed thread"), id="doomed"))
    assert (await get_thread(assistant, "doomed"))["messageCount"] == 2

    assert await call(assistant, "DELETE", f"{BASE}/doomed") == (200, {"deleted": "doomed"})
    assert await call(assistant, "GET", f"{BASE}/doomed") == (
        404,
        {
            "error": "thread doomed does not exist",
            "code": "not_found.thread",
            "params": {"thread": "doomed"},
        },
    )
    assert await listed(assistant) == ["keep"]
    data_dir = tmp_path / "data"
    assert rows(data_dir, "SELECT COUNT(*) FROM messages WHERE thread_id = ?", "doomed") == [(0,)]
    assert rows(data_dir, "SELECT thread_id, COUNT(*) FROM messages GROUP BY thread_id") == [
        ("keep", 2)
    ]
    # the id can be used again, and starts empty
    assert (await call(assistant, "POST", BASE, {"id": "doomed"}))[0] == 201
    assert (await get_thread(assistant, "doomed"))["messages"] == []


async def test_the_user_message_is_kept_when_the_provider_fails(assistant, provider):
    provider.enqueue(Status(500, error_body("the GPU caught fire")))
    status, raw = await assistant.chat(chat_body(user("Build me a txt2img workflow")))
    assert status == 200
    assert sse_events(raw)[-1]["type"] == "error"
    thread = await get_thread(assistant, "thread-1")
    assert thread["messages"] == [user("Build me a txt2img workflow")]
    assert (thread["title"], thread["messageCount"]) == ("Build me a txt2img workflow", 1)


async def test_an_interrupted_answer_is_kept_with_its_partial_text(assistant, provider):
    provider.enqueue(Stream([chunk("Partial "), chunk("answer"), Cut()], done=False))
    answer_id = await chat(assistant, chat_body(user("Explain CFG")))
    thread = await get_thread(assistant, "thread-1")
    assert [without_data(m) for m in thread["messages"]] == [
        user("Explain CFG"),
        answer(answer_id, "Partial answer", status="interrupted"),
    ]

    # the next turn sends it back as the client holds it; it stays one message
    provider.enqueue(text_reply("Go on?"))
    shown = {**thread["messages"][1], "metadata": META}
    go_on = await chat(assistant, chat_body(user("Explain CFG"), shown, user("continue", "u2")))
    assert await stored(assistant) == [
        user("Explain CFG"),
        answer(answer_id, "Partial answer", status="interrupted"),
        user("continue", "u2"),
        answer(go_on, "Go on?"),
    ]


async def test_a_complete_answer_is_stored_as_the_client_shows_it(assistant, provider):
    provider.enqueue(text_reply("Hello ", "there", usage=(12, 3)))
    answer_id = await chat(assistant, chat_body(user("hi")))
    thread = await get_thread(assistant, "thread-1")
    expected = answer(
        answer_id,
        "Hello there",
        usage={"promptTokens": 12, "completionTokens": 3, "totalTokens": 15},
    )
    assert [without_data(m) for m in thread["messages"]] == [user("hi"), expected]
    assert (thread["title"], thread["messageCount"]) == ("hi", 2)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Fix my workflow", "Fix my workflow"),
        ("  Fix my workflow  \nIt crashes at the KSampler.", "Fix my workflow"),
        (
            "Please build me a workflow that upscales my old family photos and restores the "
            "faces too",
            "Please build me a workflow that upscales my old family…",
        ),
        ("x" * 80, "x" * 59 + "…"),
        ("Exactly sixty characters long, which is the longest title!!!", None),
        ("/skill txt2img a red fox in the snow", "a red fox in the snow (txt2img)"),
        ("/skill upscale", "skill upscale"),
    ],
)
async def test_the_title_comes_from_the_first_user_message(assistant, provider, text, title):
    title = text if title is None else title
    assert len(title) <= 60
    provider.enqueue(text_reply("ok"), text_reply("ok"))
    await chat(assistant, chat_body(user(text)))
    assert (await get_thread(assistant, "thread-1"))["title"] == title
    first = (await get_thread(assistant, "thread-1"))["messages"]
    await chat(assistant, chat_body(*first, user("a different question", "u2")))
    assert (await get_thread(assistant, "thread-1"))["title"] == title


async def test_a_thread_created_without_a_title_gets_one_and_a_title_given_is_kept(
    assistant, provider
):
    await call(assistant, "POST", BASE, {"id": "untitled"})
    await call(assistant, "POST", BASE, {"id": "named", "title": "My name"})
    provider.enqueue(text_reply("ok"), text_reply("ok"))
    await chat(assistant, chat_body(user("Upscale this image"), id="untitled"))
    await chat(assistant, chat_body(user("Upscale this image"), id="named"))
    assert (await get_thread(assistant, "untitled"))["title"] == "Upscale this image"
    assert (await get_thread(assistant, "named"))["title"] == "My name"


async def test_a_regenerate_replaces_the_old_answer(assistant, provider):
    provider.enqueue(text_reply("first answer"))
    first_id = await chat(assistant, chat_body(user("Which sampler?")))
    assert await stored(assistant) == [user("Which sampler?"), answer(first_id, "first answer")]

    provider.enqueue(text_reply("second answer"))
    second_id = await chat(
        assistant,
        chat_body(user("Which sampler?"), trigger="regenerate-message", messageId=first_id),
    )
    assert second_id != first_id
    thread = await get_thread(assistant, "thread-1")
    assert [without_data(m) for m in thread["messages"]] == [
        user("Which sampler?"),
        answer(second_id, "second answer"),
    ]
    assert thread["messageCount"] == 2
    # the model did not see the old answer
    seen = provider.requests[1]["messages"]
    assert [m["role"] for m in seen] == ["system", "user"]
    assert seen[1]["content"].startswith("Which sampler?")
    assert "first answer" not in json.dumps(seen)


async def test_a_regenerate_in_the_middle_drops_what_followed(assistant, provider):
    provider.enqueue(text_reply("a1"), text_reply("a2"))
    a1 = await chat(assistant, chat_body(user("q1")))
    history = (await get_thread(assistant, "thread-1"))["messages"]
    a2 = await chat(assistant, chat_body(*history, user("q2", "u2")))
    assert [m["id"] for m in (await get_thread(assistant, "thread-1"))["messages"]] == [
        "u1",
        a1,
        "u2",
        a2,
    ]

    provider.enqueue(text_reply("a1 again"))
    new = await chat(assistant, chat_body(user("q1"), trigger="regenerate-message", messageId=a1))
    assert await stored(assistant) == [user("q1"), answer(new, "a1 again")]
