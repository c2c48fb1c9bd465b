"""llama-server's slots sharing one KV cache (its default), through the real app and the
llama-server stand-in over sockets: the stand-in fails requests that fill the shared cache
together as llama-server does; the app tells that failure of the moment from a prompt too
long for the slot (retried with the same window, never learned as a smaller window), and never
lets a summary made ahead decode beside an answer (core/provider/shared_cache.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from comfyui_assistant.core.chat.step_calls import CACHE_FULL_RETRY
from comfyui_assistant.core.chat.turn_setup import RECHECK_TURNS
from comfyui_assistant.core.provider import slots as slots_module
from comfyui_assistant.core.provider.provider_config import resolve
from comfyui_assistant.core.provider.provider_probes import provider_capabilities, provider_window
from comfyui_assistant.core.provider.provider_profiles import (
    is_cache_full,
    is_context_overflow,
    window_from_error,
)

from .conftest import start_app
from .helpers import chat_body, context_report, sse_events, user
from .llama_standin import ANSWER, CACHE_FULL, MODEL, LlamaStandin
from .scripted_provider import Status, error_body, text_reply

pytestmark = pytest.mark.usefixtures("fresh_probes")  # (conftest: no cached probe or count)

WORDS = "the sampler seed steps cfg latent vae lora model node graph "


def words(tokens: int) -> str:
    """About `tokens` of the stand-in's tokens (one a word, with its space)."""
    return " ".join((WORDS * (tokens // 12 + 1)).split()[:tokens])


async def post(server: LlamaStandin, body: dict[str, Any]) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{server.url}/v1/chat/completions", json={"model": MODEL, **body}) as r,
    ):
        return r.status, await r.text()


async def get(server: LlamaStandin, path: str) -> Any:
    async with aiohttp.ClientSession() as session, session.get(server.url + path) as r:
        return await r.json()


async def until_busy(server: LlamaStandin) -> None:
    for _ in range(400):
        if any(s["is_processing"] for s in await get(server, "/slots")):
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the stand-in never got busy")


@pytest.fixture
async def shared() -> AsyncIterator[LlamaStandin]:
    async with LlamaStandin(n_ctx=2048, slots=4, seconds_per_token=0.001) as server:
        yield server


async def test_requests_that_fill_the_shared_cache_together_all_fail(shared: LlamaStandin):
    # as llama-server's defaults: /props says 4 slots of 2048 each, not that they share 2048
    props = await get(shared, "/props")
    assert props["default_generation_settings"]["n_ctx"] == 2048 and props["total_slots"] == 4
    assert not any("unified" in key for key in props)
    settings = resolve({}, {"LLM_BASE_URL": f"{shared.url}/v1", "LLM_MODEL": MODEL})
    caps = await provider_capabilities(settings, MODEL)
    assert (caps.slots, caps.slot_ctx, caps.shared) == (4, 2048, True)
    window = await provider_window(settings, MODEL)
    assert window is not None and window.tokens == 2048
    # each fits its slot alone; 1,200 + 1,200 do not fit the 2,048 they share
    first = asyncio.ensure_future(post(shared, {"messages": [user_msg(1200)], "id_slot": 0}))
    await until_busy(shared)
    streamed = {"messages": [user_msg(1200)], "id_slot": 1, "stream": True}
    status, body = await post(shared, {**streamed, "return_progress": True})
    # a stream that sent its progress gets an error event; a request that did not, HTTP 500
    assert status == 200
    events = [json.loads(e.removeprefix("data: ")) for e in body.split("\n\n") if e]
    assert "prompt_progress" in events[0]
    assert events[-1] == {"error": {"code": 500, "message": CACHE_FULL, "type": "server_error"}}
    assert await first == (500, json.dumps(events[-1]))
    assert shared.failures == 2 and [s.tokens for s in shared.slots] == [[]] * 4
    # told apart from a prompt too long for the slot: a failure of the moment, no window in it
    assert is_cache_full(CACHE_FULL) and not is_context_overflow(500, CACHE_FULL, None)
    assert window_from_error(CACHE_FULL) is None
    # one at a time, both fit
    for slot in (0, 1):
        status, _ = await post(shared, {"messages": [user_msg(1200)], "id_slot": slot})
        assert status == 200
    assert shared.failures == 2


def user_msg(tokens: int) -> dict[str, str]:
    return {"role": "user", "content": words(tokens)}


async def test_a_full_shared_cache_is_retried_with_the_same_window(shared, tmp_path, sdk):
    shared.seconds_per_token = 0.004  # (the other request decodes for seconds)
    app = await start_app(tmp_path, {"LLM_BASE_URL": f"{shared.url}/v1", "LLM_MODEL": MODEL})
    try:
        # another client's long request decodes when the answer's starts: the cache fills
        other = asyncio.ensure_future(post(shared, {"messages": [user_msg(1900)], "id_slot": 3}))
        await until_busy(shared)
        status, body = await app.chat(chat_body(user("Which sampler for portraits?")))
        assert status == 200
        result = sdk.check(body)
        assert result["errors"] == [] and result["message"]["parts"][-1]["text"] == ANSWER
        assert (await other)[0] == 500 and shared.failures == 2
        report = context_report(body)
        # sent again once the server was free, with the window it states
        assert report["window"] == {
            "tokens": 2048,
            "source": "provider",
            "detail": "llama.cpp /props n_ctx=2048",
        }
        assert CACHE_FULL_RETRY in report["limits"]
        # the next turn plans with the same window: nothing was learned from it
        thread = [
            user("Which sampler for portraits?"),
            {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": ANSWER}]},
            user("And the scheduler?", "u2"),
        ]
        status, body = await app.chat(chat_body(*thread))
        report = context_report(body)
        assert (report["window"]["tokens"], report["window"]["source"]) == (2048, "provider")
        assert not [x for x in report["limits"] if x.startswith("retried")]
        assert shared.failures == 2
    finally:
        await app.close()


def thread(pairs: int, tokens: int) -> list[dict[str, Any]]:
    """`pairs` requests and answers of about `tokens` each."""
    out: list[dict[str, Any]] = []
    for i in range(pairs):
        out.append(user(f"Request {i}: {words(tokens)}", f"u{i}"))
        out.append(answer(f"Answer {i}: {words(tokens)}", f"a{i}"))
    return out


def answer(text: str, id: str) -> dict[str, Any]:
    return {"id": id, "role": "assistant", "parts": [{"type": "text", "text": text}]}


async def test_a_summary_made_ahead_never_decodes_beside_the_answer(tmp_path, sdk, monkeypatch):
    # On llama-server's defaults the summary made after an answer and the next turn's request
    # decoded at once (measured: 2,047 and 7,357 tokens in an 8K cache): both failed, and the
    # thread planned with a quarter less window for good. The answer stops the summary and
    # waits until the server has finished it; then it goes to its own slot, alone.
    monkeypatch.setattr(slots_module, "BUSY_WAIT", 0.3)  # (3 s in use: moved on sooner)
    async with LlamaStandin(n_ctx=4096, slots=4) as server:
        server.hold = asyncio.Event()  # (the summary is being written until it is set)
        app = await start_app(tmp_path, {"LLM_BASE_URL": f"{server.url}/v1", "LLM_MODEL": MODEL})
        try:
            first = [*thread(12, 100), user("Go on.", "u_last")]
            status, _ = await app.chat(chat_body(*first))
            assert status == 200
            await until_busy(server)  # the summary made ahead decodes in the thread's slot
            (own,) = {slot for streamed, slot, *_ in server.log}
            second = [*first, answer(ANSWER, "a_last"), user("And now?", "u_next")]
            turn = asyncio.ensure_future(app.chat(chat_body(*second)))
            await asyncio.sleep(1.0)
            assert not turn.done()  # (it waits for the summary it stopped)
            server.hold.set()
            status, body = await turn
            assert status == 200
            result = sdk.check(body)
            assert result["errors"] == [] and result["message"]["parts"][-1]["text"] == ANSWER
            # one at a time, each in the thread's own slot; nothing failed
            assert [(streamed, slot, failed) for streamed, slot, _, failed in server.log] == [
                (True, own, False),
                (False, own, False),
                (True, own, False),
            ]
            assert server.failures == 0
            report = context_report(body)
            assert (report["window"]["tokens"], report["window"]["source"]) == (4096, "provider")
            assert not [x for x in report["limits"] if "retried" in x or "slot" in x]
            # the wait is in the answer, which started at once (not before its first byte)
            statuses = [e["data"] for e in sse_events(body) if e["type"] == "data-status"]
            waiting = "Waiting for the model to finish the summary it was writing…"
            assert statuses[:2] == [{"text": waiting, "done": False}, {"text": "", "done": True}]
        finally:
            await app.close()


async def test_a_learned_window_is_checked_again_after_ten_turns(assistant, provider, sdk):
    # a provider's overflow error that states its window: planned with for RECHECK_TURNS turns
    # (no overflow each time), then the stated window is tried again
    overflow = error_body("maximum context length is 4096 tokens", "context_length_exceeded")
    provider.enqueue(Status(400, overflow), text_reply("fits now"))
    history: list[dict[str, Any]] = []
    windows = []
    for turn in range(RECHECK_TURNS + 2):
        history.append(user(f"Turn {turn}: set the seed to {turn}.", f"u{turn}"))
        if turn:
            provider.enqueue(text_reply(f"done {turn}"))
        status, body = await assistant.chat(chat_body(*history))
        assert status == 200 and sdk.check(body)["errors"] == []
        report = context_report(body)
        windows.append((report["window"]["tokens"], report["window"]["source"]))
        history.append(answer(f"done {turn}", f"a{turn}"))
    learned = (4096, "provider error")
    assert windows == [learned] * (RECHECK_TURNS + 1) + [(32768, "environment")]
    assert len(provider.requests) == RECHECK_TURNS + 3  # (one retried, no other overflow)
