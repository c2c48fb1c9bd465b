"""What a `kill -9` in the middle of an answer leaves of what the client was shown, in a real
server process: the answer is written as it streams, text that follows a pause within 50 ms
and a steady stream every 0.25 s (core/chat/answer_saver.py), so the restarted server has all the
client saw but at most the last 0.3 s of a steady stream (and the time a write takes)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from .helpers import chat_body, user
from .scripted_provider import Pause, ScriptedProvider, Stream, chunk
from .test_standalone_process import Server

STEADY = [item for _ in range(30) for item in (chunk("word "), Pause(0.1))]


async def killed_after(
    tmp_path: Path, provider: ScriptedProvider, reply: Stream, seen: Callable[[str], bool]
) -> tuple[str, str]:
    """Stream `reply` to a client; 0.25 s after what it was shown passes `seen`, SIGKILL the
    server; restart it: all the client was shown, and the text stored."""
    provider.enqueue(reply)
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "32768"}
    data = tmp_path / "data"
    server = await Server.start(data, env=env)
    shown, enough = "", asyncio.Event()

    async def read(resp: aiohttp.ClientResponse) -> None:
        nonlocal shown
        with contextlib.suppress(aiohttp.ClientError):
            async for line in resp.content:
                if line.startswith(b"data: {"):
                    event = json.loads(line[6:])
                    shown += event["delta"] if event["type"] == "text-delta" else ""
                if seen(shown):
                    enough.set()

    async with (
        aiohttp.ClientSession() as session,
        session.post(server.base + "/api/assistant/chat", json=chat_body(user("hi"))) as resp,
    ):
        reader = asyncio.ensure_future(read(resp))
        await asyncio.wait_for(enough.wait(), 30)
        await asyncio.sleep(0.25)  # the bound after a pause (50 ms), and the write, with room
        server.proc.send_signal(signal.SIGKILL)
        await server.proc.wait()
        await reader  # (the connection is cut: all the client was shown is in)
    restarted = await Server.start(data, env=env)
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(restarted.base + "/api/assistant/threads/thread-1") as resp,
        ):
            thread: dict[str, Any] = await resp.json()
    finally:
        await restarted.stop()
    answer = thread["messages"][-1]
    if answer["role"] != "assistant":
        return shown, ""
    assert answer["metadata"]["status"] == "interrupted"
    return shown, "".join(p["text"] for p in answer["parts"] if p["type"] == "text")


@pytest.mark.parametrize(
    ("reply", "seen"),
    [
        (Stream([chunk("Hello!"), Pause(60)]), lambda shown: shown == "Hello!"),
        (
            Stream([chunk("Let me look. "), Pause(1.3), chunk("It has 12 nodes."), Pause(60)]),
            lambda shown: shown.endswith("nodes."),
        ),
    ],
    ids=["the first words", "words after a pause"],
)
async def test_a_kill_keeps_all_the_client_was_shown(tmp_path, provider, reply, seen):
    shown, stored = await killed_after(tmp_path, provider, reply, seen)
    assert stored == shown, f"kept {len(stored)} of the {len(shown)} characters shown"


async def test_a_kill_in_a_steady_stream_loses_at_most_its_last_moment(tmp_path, provider):
    """Chunks of 5 characters every 0.1 s: at most 0.3 s of them lost, with room for a slow
    write (0.6 s: 30 characters). (The kill comes 0.25 s after 75 characters were shown.)"""
    reply = Stream([*STEADY, Pause(60)])
    shown, stored = await killed_after(tmp_path, provider, reply, lambda s: len(s) >= 75)
    assert shown.startswith(stored) and len(shown) - len(stored) <= 30, (
        f"kept {len(stored)} of the {len(shown)} characters shown"
    )
