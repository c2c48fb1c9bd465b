"""The stop button (or a closed tab) drops the browser's connection: the upstream request must
be cancelled at once, whether the model is talking or still silent."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from comfyui_assistant.core.stream.sse import PumpOptions

from .conftest import start_app
from .helpers import chat_body, user
from .scripted_provider import Hang, Pause, Stream, chunk


async def wait_for(condition, timeout: float = 2.0) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
    return time.monotonic() - start


def slow_answer(words: int = 200) -> Stream:
    items: list = [chunk("first")]
    for i in range(words):
        items += [Pause(0.05), chunk(f" {i}")]
    return Stream([*items, chunk(finish_reason="stop")])


async def test_stop_mid_answer_cancels_the_upstream_request(assistant, provider, caplog):
    provider.enqueue(slow_answer())
    caplog.set_level(logging.INFO, logger="comfyui_assistant")
    resp = await assistant.post("/api/assistant/chat", chat_body(user("go")))
    async for line in resp.content:
        if b'"text-delta"' in line:
            break
    resp.close()  # what the browser does when the user presses stop
    elapsed = await wait_for(lambda: provider.disconnects)
    assert elapsed < 0.5
    assert provider.finished_streams == 0
    await wait_for(lambda: "stopped: the browser disconnected" in caplog.text)


@pytest.mark.parametrize("reply", [Stream([Pause(30), chunk("late")]), Hang()])
async def test_stop_while_the_model_is_silent_cancels_at_once(provider, tmp_path, reply):
    # No keep-alive write in this window: only the connection watch can notice the stop.
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    assistant = await start_app(tmp_path, env, pump=PumpOptions(keepalive_seconds=60))
    try:
        await check_silent_stop(assistant, provider, reply)
    finally:
        await assistant.close()


async def check_silent_stop(assistant, provider, reply) -> None:
    provider.enqueue(reply)
    resp = await assistant.post("/api/assistant/chat", chat_body(user("go")))
    assert resp.status == 200  # headers arrive before the model says anything
    await wait_for(lambda: provider.requests)
    await asyncio.sleep(0.1)
    resp.close()
    elapsed = await wait_for(lambda: provider.disconnects)
    assert elapsed < 0.5
    assert provider.finished_streams == 0
