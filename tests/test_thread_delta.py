"""A turn sends what is new (core/chat/thread_delta.py): the panel sends the messages the server
does not have as they are and the id of the stored message they follow; the server rebuilds the
thread from its store. The provider gets exactly what the whole thread would have given it; a
request of the whole thread still works; a stale parent is a clear 409 that changes nothing; an
answer asked again, a rewind, a thread longer than the wire's limits; the request's size does not
grow with the thread."""

from __future__ import annotations

import copy
import json
from typing import Any

from comfyui_assistant.core.base import coded
from comfyui_assistant.core.chat.chat_request import MAX_MESSAGES
from comfyui_assistant.standalone import SERVICE

from .conftest import start_app
from .helpers import assistant_message, user
from .scripted_provider import Stream, call_piece, chunk, text_reply
from .test_threads_api import BASE, call, get_thread


def add_node_reply(call_id: str) -> Stream:
    args = json.dumps({"nodeType": "KSampler"})
    piece = call_piece(0, id=call_id, name="addNode", arguments=args)
    return Stream([chunk(tool_calls=[piece]), chunk(finish_reason="tool_calls")])


class Panel:
    """One thread as the panel holds it (the messages the real AI SDK client assembled), sent
    whole or as what is new since the server last had it."""

    def __init__(self, app: Any, sdk: Any, thread: str, *, new_only: bool) -> None:
        self.app, self.sdk, self.thread, self.new_only = app, sdk, thread, new_only
        self.messages: list[dict[str, Any]] = []
        self.synced = 0  # how many leading messages the server has as the panel has them
        self.bodies: list[dict[str, Any]] = []

    def body(self, trigger: str, message_id: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.thread, "trigger": trigger}
        if message_id is not None:
            body["messageId"] = message_id
        if self.new_only and self.synced > 0:
            parent = self.synced - 1
            body.update(parentId=self.messages[parent]["id"], parentIndex=parent)
            body["messages"] = self.messages[self.synced :]
        else:
            body["messages"] = self.messages
        return copy.deepcopy(body)

    async def send(self, trigger: str = "submit-message", message_id: str | None = None) -> Any:
        body = self.body(trigger, message_id)
        self.bodies.append(body)
        status, raw = await self.app.chat(body)
        assert status == 200, raw
        continued = self.messages[-1] if message_id == self.messages[-1]["id"] else None
        message = self.sdk.check(raw, continued)["message"]
        if continued is not None:
            self.messages[-1] = message
        else:
            self.messages.append(message)
        self.synced = len(self.messages)
        return message

    async def say(self, text: str, mid: str) -> Any:
        self.messages.append(user(text, mid))
        return await self.send()

    async def tool_output(self, output: Any) -> Any:
        """The panel ran the answer's addNode call: its output, and the automatic resubmit."""
        answer = self.messages[-1]
        part = next(p for p in answer["parts"] if p["type"] == "tool-addNode")
        part.update(state="output-available", output=output)
        self.synced = len(self.messages) - 1  # the answer changed in the panel
        return await self.send(message_id=answer["id"])

    async def regenerate(self) -> Any:
        """ "Answer again" as assistant-ui asks it: the answer dropped, no message named."""
        self.messages.pop()
        self.synced = min(self.synced, len(self.messages))
        return await self.send("regenerate-message")


async def twin_turns(provider: Any, whole: Panel, new: Panel, step: Any, *replies: Any) -> None:
    """The same step on both threads, with the same replies: the provider got the same."""
    for panel in (whole, new):
        provider.enqueue(*replies)
        before = len(provider.requests)
        await step(panel)
        got = provider.requests[before:]
        if panel is whole:
            expected = got
    assert got == expected
    assert len(got) == len(replies)


async def test_what_is_new_gives_the_provider_exactly_what_the_whole_thread_gives(
    assistant, provider, sdk
):
    whole = Panel(assistant, sdk, "t-whole", new_only=False)
    new = Panel(assistant, sdk, "t-new", new_only=True)

    def ask(text: str, mid: str) -> Any:
        return lambda p: p.say(text, mid)

    await twin_turns(provider, whole, new, ask("add a sampler", "u1"), add_node_reply("c1"))
    await twin_turns(
        provider, whole, new, lambda p: p.tool_output({"nodeId": 7}), text_reply("Added node 7.")
    )
    await twin_turns(provider, whole, new, ask("and a VAE decode?", "u2"), text_reply("Ok."))
    await twin_turns(provider, whole, new, lambda p: p.regenerate(), text_reply("Done again."))
    await twin_turns(provider, whole, new, ask("thanks", "u3"), text_reply("Welcome."))

    # what each request carried: the new one only what the server did not have
    carried = [[m["id"] for m in b["messages"]] for b in new.bodies]
    answer = new.messages[1]["id"]
    assert carried == [["u1"], [answer], ["u2"], [], ["u3"]]
    parents = [None, "u1", answer, "u2", new.messages[3]["id"]]
    assert [b.get("parentId") for b in new.bodies] == parents
    # the tool's full result went up once, with the resubmit
    assert ['"nodeId":7' in json.dumps(b, separators=(",", ":")) for b in new.bodies] == [
        False, True, False, False, False,
    ]  # fmt: skip
    # both threads hold the same conversation
    kept = [await get_thread(assistant, t) for t in ("t-whole", "t-new")]
    shapes = [[(m["role"], m["parts"]) for m in t["messages"]] for t in kept]
    assert shapes[0] == shapes[1] and len(shapes[0]) == 6
    # the answer asked again replaced the first one (also for the whole thread)
    said = [[p.get("text") for p in m["parts"] if p["type"] == "text"] for m in kept[1]["messages"]]
    assert said[3:] == [["Done again."], ["thanks"], ["Welcome."]]


async def test_a_stale_parent_is_a_409_that_changes_nothing(assistant, provider, sdk):
    panel = Panel(assistant, sdk, "t-stale", new_only=True)
    provider.enqueue(text_reply("one"))
    a1 = (await panel.say("first", "u1"))["id"]
    provider.enqueue(text_reply("two"))
    a2 = (await panel.say("second", "u2"))["id"]
    before = await get_thread(assistant, "t-stale")
    asked = len(provider.requests)

    def body(**extra: Any) -> dict[str, Any]:
        return {"id": "t-stale", "messages": [user("third", "u3")], **extra}

    follows = "the request follows message"
    cases = [
        (body(parentId="nope"), f"has no such message: {follows} 'nope'"),
        (body(parentId=a2, parentIndex=2), f"holds that message at 3, not at 2: {follows} '{a2}'"),
        (
            body(parentId=a2, messages=[user("again", "u1")]),
            "already holds a message the request carries before its parent",
        ),
        ({"id": "t-other", "messages": [user("x", "u1")], "parentId": "u0"}, "has no such message"),
    ]
    for sent, says in cases:
        status, answer = await call(assistant, "POST", "/api/assistant/chat", sent)
        assert status == 409, answer
        assert says in answer["error"], answer
        assert answer["error"].endswith(
            "; send the whole thread (leave out 'parentId') or reload the thread"
        )
    # messages after the parent that the request does not carry: another tab's turn; the
    # panel must not send its own thread over them (coded: it loads the thread instead)
    status, answer = await call(assistant, "POST", "/api/assistant/chat", body(parentId=a1))
    assert (status, answer) == (409, {"error": str(coded("chat.thread_moved_on")),
                                      "code": "chat.thread_moved_on", "params": {}})  # fmt: skip
    assert len(provider.requests) == asked
    assert await get_thread(assistant, "t-stale") == before
    assert (await call(assistant, "GET", f"{BASE}/t-other"))[0] == 404


async def test_bad_parent_fields_are_400s(assistant):
    for extra, says in [
        ({"parentId": 5}, "'parentId' must be the id of the message the request follows"),
        ({"parentId": "u1", "parentIndex": -1}, "'parentIndex' must be the parent's index"),
        ({"parentIndex": 0}, "'parentIndex' must be the parent's index"),
        ({"parentId": "u1", "parentIndex": True}, "'parentIndex' must be the parent's index"),
    ]:
        sent = {"id": "t-bad", "messages": [user("x", "u2")], **extra}
        status, answer = await call(assistant, "POST", "/api/assistant/chat", sent)
        assert (status, says in answer["error"]) == (400, True), answer
    empty = {"id": "t", "messages": []}
    status, answer = await call(assistant, "POST", "/api/assistant/chat", empty)
    assert (status, answer["error"]) == (
        400,
        "'messages' must be a non-empty list (or a list of what follows 'parentId')",
    )


async def test_after_a_rewind_what_is_new_follows_the_rewound_point(assistant, provider, sdk):
    panel = Panel(assistant, sdk, "t-rw", new_only=True)
    for n in (1, 2, 3):
        provider.enqueue(text_reply(f"answer {n}"))
        await panel.say(f"question {n}", f"u{n}")
    a1, a2 = panel.messages[1]["id"], panel.messages[3]["id"]
    status, moved = await call(assistant, "POST", f"{BASE}/t-rw/rewind", {"messageId": a2})
    assert status == 200
    # the panel still follows a2, which the rewind set aside: refused
    stale = {"id": "t-rw", "messages": [user("question 4", "u4")], "parentId": a2}
    status, answer = await call(assistant, "POST", "/api/assistant/chat", stale)
    assert status == 409 and "has no such message" in answer["error"]
    # the panel shows what the rewind left, and follows a1
    panel.messages, panel.synced = moved["messages"], len(moved["messages"])
    provider.enqueue(text_reply("answer 4"))
    a4 = (await panel.say("question 4", "u4"))["id"]
    sent = provider.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "answer 2" not in json.dumps(sent) and "question 4" in json.dumps(sent[-1])
    thread = await get_thread(assistant, "t-rw")
    assert [m["id"] for m in thread["messages"]] == ["u1", a1, "u4", a4]


async def seed(app: Any, thread: str, turns: int) -> list[dict[str, Any]]:
    """A thread of `turns` short turns, stored as a whole-thread request would store it."""
    messages = []
    for n in range(turns):
        messages.append(user(f"question {n}", f"u{n:05d}"))
        messages.append(assistant_message(f"answer {n}", f"a{n:05d}"))
    threads = await app.app[SERVICE].threads()
    await threads.sync(thread, messages)
    return messages


async def test_the_request_stays_the_same_size_at_10_and_3000_turns(provider, tmp_path):
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path / "data", {**env, "LLM_CONTEXT_WINDOW": "262144"})
    try:
        sizes = {}
        for turns in (10, 3000):
            thread = f"t-{turns:04d}"
            await seed(app, thread, turns)
            body = {
                "id": thread,
                "messages": [user("one more question", "u-next")],
                "parentId": f"a{turns - 1:05d}",
                "parentIndex": 2 * turns - 1,
            }
            sizes[turns] = len(json.dumps(body))
            provider.enqueue(text_reply("an answer"))
            status, raw = await app.chat(body)
            assert status == 200 and '"text-delta"' in raw, raw[-300:]
            sent = provider.requests[-1]["messages"]
            assert len(sent) == 1 + 2 * turns + 1  # system, the whole thread, the new message
            assert sent[1]["content"] == "question 0"
            assert sent[-2]["content"] == f"answer {turns - 1}"
            assert "one more question" in json.dumps(sent[-1])
            thread_now = await get_thread(app, thread)
            assert thread_now["messageCount"] == 2 * turns + 2
        # the same bytes but for the parent's index (19, 5999)
        assert sizes[3000] - sizes[10] == len("5999") - len("19") and sizes[10] < 200
    finally:
        await app.close()


async def test_a_thread_longer_than_a_request_may_hold_goes_on(provider, tmp_path):
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path / "data", {**env, "LLM_CONTEXT_WINDOW": "262144"})
    try:
        turns = MAX_MESSAGES // 2 + 1
        messages = await seed(app, "t-long", turns)
        status, answer = await call(
            app, "POST", "/api/assistant/chat",
            {"id": "t-long", "messages": [*messages, user("more", "u-next")]},
        )  # fmt: skip
        assert (status, "more than the limit of 10,000" in answer["error"]) == (413, True)
        provider.enqueue(text_reply("still here"))
        last = f"a{turns - 1:05d}"
        new = {"id": "t-long", "messages": [user("more", "u-next")], "parentId": last}
        status, raw = await app.chat(new)
        assert status == 200 and "still here" in raw
        assert (await get_thread(app, "t-long"))["messageCount"] == 2 * turns + 2
    finally:
        await app.close()
