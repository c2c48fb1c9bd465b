"""Two tabs, one thread (core/chat/turn_lock.py): one turn at a time in a thread. A request that
arrives while another answer is being written in its thread gets the `chat.thread_busy` error
chunk and changes nothing; a request that follows a history another tab has moved on from gets
the coded 409 `chat.thread_moved_on`; the next turn is built on the whole stored thread. The
scripted provider holds the first answer open (a Gate), so the two turns overlap for real."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from comfyui_assistant.core.base import coded

from .conftest import App, start_app
from .helpers import sent, sse_events, user
from .scripted_provider import Gate, ScriptedProvider, Stream, chunk, text_reply
from .test_thread_delta import add_node_reply
from .test_threads_api import call, get_thread

WAIT = 0.3  # how long a turn waits for its busy thread here


@pytest.fixture
async def app(provider: ScriptedProvider, tmp_path) -> AsyncIterator[App]:
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path / "data", env, turn_wait=WAIT)
    yield app
    await app.close()


def held_answer(gate: Gate, *pieces: str) -> Stream:
    """An answer that says its first piece, then waits for the gate before the rest."""
    first, *rest = pieces
    return Stream([chunk(first), gate, *(chunk(p) for p in rest), chunk(finish_reason="stop")])


def texts(thread: dict[str, Any]) -> list[tuple[str, str]]:
    """Each stored message's role and text."""
    return [
        (m["role"], "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text"))
        for m in thread["messages"]
    ]


def dialogue(provider: ScriptedProvider, i: int) -> list[tuple[str, str]]:
    """What request `i` gave the model after its system message: each role and text."""
    return [(m["role"], m["content"]) for m in sent(provider, i)[1:]]


def busy_events(body: str) -> list[dict[str, Any]]:
    events = sse_events(body)
    assert [e["type"] for e in events] == ["start", "error"], events
    return events


BUSY = json.dumps(coded("chat.thread_busy").as_json(), ensure_ascii=False)


async def test_a_second_turn_while_one_answers_is_told_busy_and_changes_nothing(app, provider):
    gate = Gate()
    provider.enqueue(held_answer(gate, "One", " answer."))
    first = await app.post("/api/assistant/chat", {"id": "t1", "messages": [user("first", "u1")]})
    await asyncio.wait_for(gate.reached.wait(), 5)
    # the other tab: the same thread, its own message, while the first answer is written
    began = time.monotonic()
    status, body = await app.chat({"id": "t1", "messages": [user("second", "u2")]})
    waited = time.monotonic() - began
    assert status == 200
    events = busy_events(body)
    assert events[1] == {"type": "error", "errorText": BUSY}
    assert WAIT <= waited < WAIT + 2  # it waited its moment, not for the whole answer
    assert len(provider.requests) == 1  # the model was not asked
    gate.open.set()
    async with first:
        assert first.status == 200
        done = sse_events(await first.text())
    assert done[-1]["type"] == "finish"
    thread = await get_thread(app, "t1")
    assert texts(thread) == [("user", "first"), ("assistant", "One answer.")]


async def test_two_turns_sent_at_once_answer_one_after_the_other(app, provider):
    gate = Gate()
    provider.enqueue(held_answer(gate, "Hello", " there."))
    bodies = [{"id": "t2", "messages": [user(f"hi {n}", f"u{n}")]} for n in (1, 2)]
    sending = [asyncio.ensure_future(app.chat(b)) for b in bodies]
    await asyncio.wait_for(gate.reached.wait(), 5)
    busy = await asyncio.wait_for(asyncio.wait(sending, return_when="FIRST_COMPLETED"), 5)
    (told,) = busy[0]
    status, body = told.result()
    assert status == 200 and busy_events(body)[1]["errorText"] == BUSY
    gate.open.set()
    (answered,) = busy[1]
    status, body = await answered
    assert status == 200 and sse_events(body)[-1]["type"] == "finish"
    which = sending.index(answered) + 1
    thread = await get_thread(app, "t2")
    assert texts(thread) == [("user", f"hi {which}"), ("assistant", "Hello there.")]
    assert len(provider.requests) == 1


async def test_the_other_tab_follows_a_moved_on_thread_only_after_loading_it(app, provider):
    provider.enqueue(text_reply("Zero."))
    status, _ = await app.chat({"id": "t3", "messages": [user("start", "u0")]})
    assert status == 200
    loaded = await get_thread(app, "t3")  # both tabs show [u0, a0]
    a0 = loaded["messages"][1]["id"]
    # tab A's turn
    provider.enqueue(text_reply("One."))
    body_a = {"id": "t3", "messages": [user("from A", "uA")], "parentId": a0, "parentIndex": 1}
    assert (await app.chat(body_a))[0] == 200
    after_a = await get_thread(app, "t3")
    # tab B still follows a0: refused, coded, nothing changed, the model not asked
    body_b = {"id": "t3", "messages": [user("from B", "uB")], "parentId": a0, "parentIndex": 1}
    status, answer = await call(app, "POST", "/api/assistant/chat", body_b)
    assert (status, answer["code"]) == (409, "chat.thread_moved_on")
    assert await get_thread(app, "t3") == after_a and len(provider.requests) == 2
    # tab B loads the thread (its new messages) and sends again: an answer on the whole thread
    a1 = after_a["messages"][-1]["id"]
    provider.enqueue(text_reply("Two."))
    again = {**body_b, "parentId": a1, "parentIndex": 3}
    assert (await app.chat(again))[0] == 200
    assert dialogue(provider, 2) == [
        ("user", "start"), ("assistant", "Zero."), ("user", "from A"), ("assistant", "One."),
        ("user", "from B"),
    ]  # fmt: skip
    assert texts(await get_thread(app, "t3")) == [
        ("user", "start"), ("assistant", "Zero."), ("user", "from A"), ("assistant", "One."),
        ("user", "from B"), ("assistant", "Two."),
    ]  # fmt: skip


async def test_a_message_sent_right_after_stop_waits_for_the_stopped_answer(app, provider):
    gate = Gate()
    provider.enqueue(held_answer(gate, "Partial", " never said"))
    first = await app.post("/api/assistant/chat", {"id": "t4", "messages": [user("go", "u1")]})
    await asyncio.wait_for(gate.reached.wait(), 5)
    answer_id = None
    async for line in first.content:
        if line.startswith(b"data: {"):
            event = json.loads(line[6:])
            answer_id = event.get("messageId", answer_id)
            if event["type"] == "text-delta":
                break
    first.close()  # Stop: the browser lets go; the server saves the partial answer
    partial = {"id": answer_id, "role": "assistant", "parts": [{"type": "text", "text": "Partial"}]}
    provider.enqueue(text_reply("Fresh."))
    status, body = await app.chat(
        {"id": "t4", "messages": [user("go", "u1"), partial, user("again", "u2")]}
    )  # sent at once: it waits the moment the stopped answer takes to be saved
    assert status == 200 and sse_events(body)[-1]["type"] == "finish", body
    thread = await get_thread(app, "t4")
    assert texts(thread) == [
        ("user", "go"), ("assistant", "Partial"), ("user", "again"), ("assistant", "Fresh."),
    ]  # fmt: skip
    assert dialogue(provider, 1) == [("user", "go"), ("assistant", "Partial"), ("user", "again")]


async def test_tool_results_sent_after_the_other_tab_moved_on_are_kept_and_its_turn_stays(
    app, provider
):
    # Tab A's answer ends on a panel tool call (addNode); before A's panel sends the tool's
    # result, tab B sends a message on the same thread. A's resubmit (the answer continued with
    # the result) must neither delete B's turn nor lose the result: the result is kept in A's
    # answer where it stands, B's turn stays, and A is told the thread moved on (the model is
    # not asked to continue A's answer over B's turn).
    provider.enqueue(add_node_reply("c1"))
    status, _ = await app.chat({"id": "t5", "messages": [user("add a sampler", "u1")]})
    assert status == 200
    stored = (await get_thread(app, "t5"))["messages"]
    answer = stored[1]
    # tab B, which loaded the thread with the call pending, sends its own message
    provider.enqueue(text_reply("A VAE decodes latents."))
    body_b = {"id": "t5", "messages": [user("what is a VAE?", "uB")], "parentId": answer["id"]}
    assert (await app.chat({**body_b, "parentIndex": 1}))[0] == 200
    # tab A's panel ran addNode: its automatic resubmit of the answer with the result
    continued = copy.deepcopy(answer)
    call_part = next(p for p in continued["parts"] if p["type"] == "tool-addNode")
    call_part.update(state="output-available", output={"nodeId": 7})
    body_a = {
        "id": "t5", "messages": [continued], "parentId": "u1", "parentIndex": 0,
        "trigger": "submit-message", "messageId": answer["id"],
    }  # fmt: skip
    status, refused = await call(app, "POST", "/api/assistant/chat", body_a)
    assert (status, refused["code"]) == (409, "chat.thread_moved_on_kept")
    assert len(provider.requests) == 2  # (A's answer was not continued)
    kept = (await get_thread(app, "t5"))["messages"]
    assert [m["id"] for m in kept] == ["u1", answer["id"], "uB", kept[3]["id"]]
    assert texts({"messages": kept})[2:] == [
        ("user", "what is a VAE?"), ("assistant", "A VAE decodes latents."),
    ]  # fmt: skip
    tool = next(p for p in kept[1]["parts"] if p["type"] == "tool-addNode")
    assert (tool["state"], tool["output"]) == ("output-available", {"nodeId": 7})
