"""Rewinding a thread's conversation (core/store/branches.py, routes/branches.py): the turn of an
answer and all that follows set aside as a branch, never deleted; the stored thread what the
panel shows; the next request append-only from the rewound point; returning to a branch (what
followed set aside in turn), byte for byte as first sent; a branch out of reach while the message
it followed is away; the search index following; every bad input a clear 4xx."""

from __future__ import annotations

from typing import Any

import pytest
from comfyui_assistant.standalone import SERVICE

from .helpers import chat_body, user
from .scripted_provider import text_reply
from .test_threads_api import BASE, call, chat, get_thread

T = "t-rw"


async def turn(app, provider, text: str, answer: str, n: int) -> str:
    """One more turn of thread T, sent as the panel sends it: what the thread holds, plus `text`."""
    status, thread = await call(app, "GET", f"{BASE}/{T}")
    earlier = thread["messages"] if status == 200 else []
    provider.enqueue(text_reply(answer))
    return await chat(app, chat_body(*earlier, user(text, id=f"u{n}"), id=T))


async def three_turns(app, provider) -> list[str]:
    return [
        await turn(app, provider, f"question {n}", f"answer {n}", n) for n in (1, 2, 3)
    ]  # fmt: skip


def ids(messages: list[dict[str, Any]]) -> list[str]:
    return [m["id"] for m in messages]


async def rewind(app, message_id: str) -> tuple[int, Any]:
    return await call(app, "POST", f"{BASE}/{T}/rewind", {"messageId": message_id})


async def branches(app) -> list[dict[str, Any]]:
    status, body = await call(app, "GET", f"{BASE}/{T}/branches")
    assert status == 200
    return [{k: b[k] for k in ("number", "afterId", "messageCount", "preview", "available")}
            for b in body["branches"]]  # fmt: skip


async def test_a_rewind_sets_the_turn_aside_and_the_next_request_appends_to_what_is_left(
    assistant, provider
):
    a1, a2, a3 = await three_turns(assistant, provider)
    first_requests = list(provider.requests)

    status, moved = await rewind(assistant, a2)
    assert status == 200, moved
    assert ids(moved["messages"]) == ["u1", a1]
    assert moved["draft"] == "question 2"  # (the panel puts it back in the composer)
    assert {k: moved["setAside"][k] for k in ("number", "afterId", "messageCount")} == {
        "number": 1,
        "afterId": a1,
        "messageCount": 4,
    }
    assert ids((await get_thread(assistant, T))["messages"]) == ["u1", a1]
    assert await branches(assistant) == [
        {"number": 1, "afterId": a1, "messageCount": 4, "preview": "question 2", "available": True}
    ]

    a4 = await turn(assistant, provider, "question 4", "answer 4", 4)
    sent = provider.requests[-1]["messages"]
    before = first_requests[1]["messages"]  # the request of turn 2: system, u1, a1, u2
    assert sent[: len(before) - 1] == before[:-1]  # the same bytes up to the rewound point
    assert "question 4" in str(sent[len(before) - 1]["content"])
    assert len(sent) == len(before)
    assert ids((await get_thread(assistant, T))["messages"]) == ["u1", a1, "u4", a4]
    assert a3 not in str(sent)


async def test_returning_to_a_branch_sets_aside_what_followed_and_resends_it_as_first_sent(
    assistant, provider
):
    a1, a2, a3 = await three_turns(assistant, provider)
    third = provider.requests[2]["messages"]
    await rewind(assistant, a2)
    a4 = await turn(assistant, provider, "question 4", "answer 4", 4)

    status, moved = await call(assistant, "POST", f"{BASE}/{T}/branches/1/restore", {})
    assert status == 200, moved
    assert ids(moved["messages"]) == ["u1", a1, "u2", a2, "u3", a3]
    assert (moved["setAside"]["number"], moved["setAside"]["messageCount"]) == (2, 2)
    thread = await get_thread(assistant, T)
    assert ids(thread["messages"]) == ids(moved["messages"]) and thread["messageCount"] == 6
    assert await branches(assistant) == [
        {"number": 2, "afterId": a1, "messageCount": 2, "preview": "question 4", "available": True}
    ]

    await turn(assistant, provider, "question 5", "answer 5", 5)
    sent = provider.requests[-1]["messages"]
    assert sent[: len(third)] == third  # u3 too, resent as first sent (its reminder block)
    assert a4 not in str(sent) and "question 4" not in str(sent)


async def test_the_server_keeps_what_a_request_holds_after_a_rewind(assistant, provider):
    """A panel that still shows the turn set aside (another browser tab) sends it again: the
    thread stores what that request holds, not what this process remembers storing."""
    a1, a2, a3 = await three_turns(assistant, provider)
    stale = (await get_thread(assistant, T))["messages"]
    await rewind(assistant, a3)
    provider.enqueue(text_reply("answer 4"))
    a4 = await chat(assistant, chat_body(*stale, user("question 4", id="u4"), id=T))
    thread = await get_thread(assistant, T)
    assert ids(thread["messages"]) == ["u1", a1, "u2", a2, "u3", a3, "u4", a4]
    status, back = await call(assistant, "POST", f"{BASE}/{T}/branches/1/restore", {})
    assert (status, ids(back["messages"])) == (200, ["u1", a1, "u2", a2, "u3", a3])
    assert back["setAside"]["messageCount"] == 4


async def test_a_branch_is_out_of_reach_while_the_message_it_followed_is_set_aside(
    assistant, provider
):
    a1, a2, _ = await three_turns(assistant, provider)
    await rewind(assistant, a2)  # branch 1: after a1
    status, moved = await rewind(assistant, a1)  # branch 2: the whole thread
    assert (status, moved["messages"], moved["setAside"]["afterId"]) == (200, [], None)
    assert [(b["number"], b["available"]) for b in await branches(assistant)] == [
        (2, True),
        (1, False),
    ]
    status, refused = await call(assistant, "POST", f"{BASE}/{T}/branches/1/restore", {})
    assert status == 409
    assert refused["error"].startswith("branch 1 followed a message that is itself set aside")
    status, _ = await call(assistant, "POST", f"{BASE}/{T}/branches/2/restore", {})
    assert status == 200
    status, back = await call(assistant, "POST", f"{BASE}/{T}/branches/1/restore", {})
    assert (status, len(back["messages"])) == (200, 6)
    assert await branches(assistant) == []  # (nothing followed a1 when branch 1 came back)


async def test_what_is_set_aside_leaves_the_search_index_and_comes_back_with_it(
    assistant, provider
):
    a1, a2, _ = await three_turns(assistant, provider)
    store = await assistant.app[SERVICE].store()

    async def indexed() -> set[str]:
        rows = await store.fetchall(
            "SELECT DISTINCT message_id FROM message_passages WHERE thread_id = ?", (T,)
        )
        return {r[0] for r in rows}

    assert {"u2", a2} <= await indexed()
    await rewind(assistant, a2)
    assert await indexed() == {"u1", a1}
    await call(assistant, "POST", f"{BASE}/{T}/branches/1/restore", {})
    assert {"u2", a2} <= await indexed()
    assert (await call(assistant, "DELETE", f"{BASE}/{T}"))[0] == 200
    assert (await store.fetchone("SELECT COUNT(*) FROM thread_branches"))[0] == 0


@pytest.mark.parametrize(
    ("path", "body", "status", "says"),
    [
        ("rewind", {"messageId": "nope"}, 404, f"message nope in thread {T} does not exist"),
        ("rewind", {}, 400, '"messageId"'),
        ("rewind", {"messageId": 5}, 400, "message's id"),
        ("branches/9/restore", {}, 404, f"branch 9 of thread {T} does not exist"),
        ("branches/x/restore", {}, 400, "'number' must be a number"),
    ],
)
async def test_bad_rewinds_say_what_to_fix(assistant, provider, path, body, status, says):
    await turn(assistant, provider, "question 1", "answer 1", 1)
    got, answer = await call(assistant, "POST", f"{BASE}/{T}/{path}", body)
    assert (got, says in answer["error"]) == (status, True), answer


async def test_no_rewind_while_an_answer_is_being_written(assistant, provider):
    a1 = await turn(assistant, provider, "question 1", "answer 1", 1)
    store = await assistant.app[SERVICE].store()
    await store.write(
        lambda db: db.execute(
            "UPDATE messages SET status = 'streaming' WHERE thread_id = ? AND id = ?", (T, a1)
        )
    )
    status, refused = await rewind(assistant, a1)
    assert status == 409 and "stop it first" in refused["error"]
    assert ids((await get_thread(assistant, T))["messages"]) == ["u1", a1]
