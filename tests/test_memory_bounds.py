"""What the process keeps between requests is bounded: no cache keeps a thread's images or long
texts alive by keying on them, each cache has a limit, nothing of a request's body outlives the
request, and the memory a big body took goes back to the system (bench/memory_load.py
measures the process as a whole)."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import os
import uuid
from pathlib import Path

import aiohttp
import pytest
from comfyui_assistant.core.base.fingerprint import LONG
from comfyui_assistant.core.base.memory_release import RELEASE
from comfyui_assistant.core.context.context_blocks import parts_of
from comfyui_assistant.core.context.context_cache import LARGE, BlockCache, signature
from comfyui_assistant.core.store import threads as threads_module
from comfyui_assistant.core.store.thread_state import ThreadState
from comfyui_assistant.core.store.threads import Threads, stored_key
from comfyui_assistant.core.tokens.tokens import TokenCounter, counter_for
from comfyui_assistant.standalone import SERVICE

from .helpers import chat_body, user
from .scripted_provider import text_reply
from .test_standalone_process import Server

BIG = "x" * (3 * LARGE)


def image(url_chars: int, id: str = "u1") -> dict:
    url = "data:image/png;base64," + "A" * url_chars
    return {
        "id": id,
        "role": "user",
        "parts": [{"type": "file", "mediaType": "image/png", "url": url}],
    }


def test_keys_of_long_texts_and_urls_are_short_and_still_tell_changes_apart():
    for message, changed in [
        (user(BIG), user(BIG[:-1] + "y")),
        (image(len(BIG)), image(len(BIG) + 1)),
    ]:
        assert len(signature(message)) < 200 and len(stored_key(message)) < 200
        assert signature(message) == signature(dict(message))
        assert signature(message) != signature(changed)
        assert stored_key(message) != stored_key(changed)
    short = user("a short text")
    assert "a short text" in signature(short)  # short strings are keyed by themselves


def test_the_block_cache_keeps_no_huge_message_and_stays_within_its_characters():
    cache = BlockCache(max_chars=10 * LONG)
    cache.thread([user(BIG)])
    assert cache._chars == 0 and not cache._blocks  # converted afresh each time instead
    for i in range(100):
        cache.thread([user("y" * LONG, f"m{i}")])
        assert cache._chars <= cache.max_chars
    assert 0 < len(cache._blocks) <= 10


def test_the_token_counter_remembers_a_long_text_by_its_fingerprint():
    counter = TokenCounter("cl100k_base")
    text = "word " * 10_000
    tokens = counter.text(text)
    assert counter.text(text) == tokens == counter.total([text])
    assert all(len(key) < 100 for key in counter._texts)


async def test_threads_remember_fingerprints_for_the_most_recent_threads_only(assistant):
    threads: Threads = await assistant.app[SERVICE].threads()
    limit = threads_module.KNOWN_THREADS
    for i in range(limit + 5):
        await threads.sync(f"t{i}", [image(2 * LONG, f"u{i}")])
    known = threads._known
    assert len(known) == limit and "t0" not in known and f"t{limit + 4}" in known
    assert all(len(key) < 100 for entry in known.values() for _, key in entry.values())
    # a thread forgotten by the process is compared with the database: nothing is lost
    await threads.sync("t0", [image(2 * LONG, "u0"), user("next", "u-next")])
    assert [m.id for m in await threads.messages("t0")] == ["u0", "u-next"]


async def test_what_threads_remember_of_a_message_is_a_fingerprint_whatever_its_size(assistant):
    """Texts just short of the length from which caches fingerprint them were remembered whole:
    a thread of such texts kept its 30 MB body, for each of the last 64 threads (2.3 GB)."""
    threads: Threads = await assistant.app[SERVICE].threads()
    text, long_id = "t" * (LONG - 100), "i" * (LONG - 1)
    await threads.sync("texts", [user(text, long_id), user(text + "!", "u2")])
    known = threads._known["texts"]
    assert len(known) == 2
    assert all(len(mid) < 100 and len(key) < 100 for mid, (_, key) in known.items())
    # and still tells a change apart
    await threads.sync("texts", [user(text, long_id), user(text + "?", "u2")])
    assert [m.parts[0]["text"][-1] for m in await threads.messages("texts")] == ["t", "?"]


async def test_storing_a_message_keeps_none_of_its_text_in_the_token_counter(assistant):
    threads: Threads = await assistant.app[SERVICE].threads()
    counter = counter_for(None)
    before = counter.cache_info()
    await threads.sync("counted", [user("word " * 100_000, "u-counted")])
    assert counter.cache_info() == before
    (stored,) = await threads.messages("counted")
    assert stored.parts[0]["text"].startswith("word word")


async def test_summaries_are_kept_for_the_most_recent_threads_only(assistant):
    store = await assistant.app[SERVICE].store()
    threads, state = Threads(store), ThreadState(store)
    limit = threads_module.KNOWN_THREADS
    for i in range(limit + 5):
        await threads.ensure(f"t{i}", [user("hi")])
        await state.set_summary(f"t{i}", f"summary {i} " + "s" * 10_000, "u1", False)
    kept = store.cache["summaries"]
    assert len(kept) == limit and "t0" not in kept and f"t{limit + 4}" in kept
    summary = await state.summary("t0")  # read again from the database
    assert summary is not None and summary["text"].startswith("summary 0 ")


def _tool_answer(id: str, output_chars: int) -> dict:
    part = {
        "type": "tool-getWorkflow",
        "toolCallId": f"call-{id}",
        "state": "output-available",
        "input": {},
        "output": {"text": "z" * output_chars},
    }
    return {"id": id, "role": "assistant", "parts": [part]}


def test_the_rendered_results_the_block_cache_keeps_count_toward_its_characters():
    """A round sent whole is rendered from its tool outputs, and the rendering is remembered:
    those characters were not counted, so any number of them stayed alive."""
    cache = BlockCache(max_chars=10 * LONG)
    for i in range(40):
        message = _tool_answer(f"a{i}", 2 * LONG)
        ((pending,),) = cache.thread([message])
        whole = cache.rendered(pending, lambda b, m=message: parts_of(b, m))
        assert "z" * LONG in whole.messages[1]["content"]
        derived = sum(
            len(m["content"])
            for block in cache._derived.values()
            for m in block.messages
            if isinstance(m.get("content"), str)
        )
        assert cache._chars + derived <= cache.max_chars


async def test_a_finished_chat_leaves_no_object_of_its_body_behind(assistant, provider):
    """Freed as soon as the chat ends, not by the cycle collector's full passes, which are
    rare: a reference cycle through the turn kept each body until one ran (20 chats of 30 MB
    of tool rounds: 1.5 GB resident)."""
    provider.enqueue(text_reply("ok"))
    marker = f"marker-{uuid.uuid4()}"
    body = json.dumps(chat_body(user("look at this", marker))).encode()
    headers = {"Content-Type": "application/json"}
    gc.collect()
    gc.disable()
    try:
        async with assistant.session.post(
            assistant.base + "/api/assistant/chat", data=body, headers=headers
        ) as resp:
            assert resp.status == 200 and '"text-delta"' in await resp.text()
        await asyncio.sleep(0.1)
        left = [o for o in gc.get_objects() if isinstance(o, dict) and o.get("id") == marker]
    finally:
        gc.enable()
    assert left == []


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not RELEASE.available, reason="no malloc_trim in this C library")
async def test_the_memory_of_concurrent_big_bodies_goes_back_once_they_are_done(tmp_path, provider):
    """Four 12 MB chats at once, in a real server process: what the allocator kept of them
    after they ended (132 MB, before malloc_trim) is handed back (12 MB left)."""
    provider.responder = lambda body: text_reply("ok")
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "1000000"}
    server = await Server.start(tmp_path / "data", env=env)
    image = "data:image/png;base64," + base64.b64encode(os.urandom(3 << 20)).decode() * 3

    def body(thread: str) -> bytes:
        picture = {"type": "file", "mediaType": "image/png", "url": image}
        parts = [{"type": "text", "text": "what is this?"}, picture]
        message = {"id": f"u-{thread}", "role": "user", "parts": parts}
        return json.dumps({"id": thread, "messages": [message]}).encode()

    async def chat(session: aiohttp.ClientSession, thread: str) -> None:
        headers = {"Content-Type": "application/json"}
        async with session.post(
            server.base + "/api/assistant/chat", data=body(thread), headers=headers
        ) as r:
            assert r.status == 200 and '"text-delta"' in await r.text()

    try:
        async with aiohttp.ClientSession() as session:
            await chat(session, "warm-up")
            await asyncio.sleep(0.5)
            before = _rss_mb(server.proc.pid)
            await asyncio.gather(*[chat(session, f"t{i}") for i in range(4)])
            await asyncio.sleep(1.0)
            after = _rss_mb(server.proc.pid)
    finally:
        await server.stop()
    assert after - before < 24, f"{after - before:.0f} MB left after the chats (< two bodies)"
