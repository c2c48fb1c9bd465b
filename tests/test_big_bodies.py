"""A chat body of very many parts is refused with the limit it broke (413), before any of it is
stored; one at the limits is answered; a thread stored with far more parts (before the limits)
is still read back whole (routes/common.py, core/chat/chat_request.py, core/store/thread_text.py).
How long other requests wait meanwhile is measured by bench/body_parse.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from comfyui_assistant.core.chat.chat_request import MAX_PARTS, MAX_PARTS_PER_MESSAGE
from comfyui_assistant.core.store.threads import Threads
from comfyui_assistant.routes.common import OFF_LOOP_FROM
from comfyui_assistant.standalone import SERVICE

from .helpers import chat_body, sse_events, user
from .scripted_provider import text_reply

TINY = {"type": "text", "text": "a"}


def _message(i: int, parts: int) -> dict[str, Any]:
    return {"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant", "parts": [TINY] * parts}


async def _post(assistant, body: dict[str, Any]) -> tuple[int, str]:
    data = json.dumps(body).encode()
    assert len(data) >= OFF_LOOP_FROM  # (parsed and checked on a worker thread)
    headers = {"Content-Type": "application/json"}
    async with assistant.session.post(
        assistant.base + "/api/assistant/chat", data=data, headers=headers
    ) as resp:
        return resp.status, await resp.text()


async def _stored(assistant, thread_id: str) -> int:
    async with assistant.session.get(f"{assistant.base}/api/assistant/threads/{thread_id}") as r:
        return r.status


def _too_many_in_a_message() -> list[dict[str, Any]]:
    return [_message(0, MAX_PARTS_PER_MESSAGE + 1)]


def _too_many_in_a_request() -> list[dict[str, Any]]:
    full = MAX_PARTS // MAX_PARTS_PER_MESSAGE
    return [
        *(_message(i, MAX_PARTS_PER_MESSAGE) for i in range(full)),
        user("and one more", "last"),
    ]


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        (
            _too_many_in_a_message,
            "messages[0] holds 10,001 parts, more than the limit of 10,000 parts in one message",
        ),
        (
            _too_many_in_a_request,
            "'messages' hold 200,001 parts in all, more than the limit of 200,000 parts in one "
            "request; start a new thread",
        ),
    ],
    ids=["in-a-message", "in-a-request"],
)
async def test_too_many_parts_are_refused_with_their_limit(assistant, provider, messages, error):
    body = chat_body(*messages(), id="too-many")
    status, text = await _post(assistant, body)
    assert (status, json.loads(text)) == (413, {"error": error})
    assert await _stored(assistant, "too-many") == 404 and provider.requests == []


async def test_a_message_at_the_limit_is_answered_and_stored(assistant, provider):
    provider.enqueue(text_reply("Read them all."))
    body = chat_body(_message(0, MAX_PARTS_PER_MESSAGE), id="at-the-limit")
    status, text = await _post(assistant, body)
    events = sse_events(text)
    assert status == 200 and not [e for e in events if e["type"] == "error"]
    assert "".join(e.get("delta", "") for e in events) == "Read them all."
    async with assistant.session.get(assistant.base + "/api/assistant/threads/at-the-limit") as r:
        thread = await r.json()
    asked, answer = thread["messages"]
    assert asked == {"id": "m0", "role": "user", "parts": [TINY] * MAX_PARTS_PER_MESSAGE}
    said = [p for p in answer["parts"] if p["type"] == "text"]
    assert said == [{"type": "text", "text": "Read them all.", "state": "done"}]


async def test_a_thread_stored_before_the_limits_is_read_back_whole(assistant):
    """A million parts in one stored message (possible before the limits): the thread's GET
    sends its stored text as it is, with the status a cut-off answer was stored with."""
    threads: Threads = await assistant.app[SERVICE].threads()
    huge = _message(0, 1_000_000)
    answer = {"id": "a1", "role": "assistant", "parts": [TINY], "metadata": {"model": "m"}}
    await threads.sync("stored-huge", [huge, answer])
    await threads.save_answer("stored-huge", answer, 1, "interrupted")
    async with assistant.session.get(assistant.base + "/api/assistant/threads/stored-huge") as r:
        assert r.status == 200 and r.content_type == "application/json"
        thread = await r.json()
    assert thread["messages"] == [
        {"id": "m0", "role": "user", "parts": [TINY] * 1_000_000},
        {**answer, "metadata": {"model": "m", "status": "interrupted"}},
    ]
    assert {k: v for k, v in thread.items() if k != "messages"} == await threads.get("stored-huge")
