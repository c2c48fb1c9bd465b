"""Caps on what one answer may make the server do: a model that calls a server tool 1,000 times
in every step, a provider that never stops streaming, and more calls in one step than an 8K
window holds.

    .venv/bin/python bench/tool_caps.py [--calls 1000] [--quick] [--endless-seconds 30]

The scripted OpenAI-compatible provider (tests/) plays the model; our standalone app runs in
the same process and event loop on real 127.0.0.1 sockets, and a poller asks `/status` every
50 ms while each answer streams (its slowest answer is how long the server stopped answering
anything else).

1. Tool calls: every step the model calls `searchInstalledNodes` `--calls` times (with an
   output reserve large enough for their arguments). Reported: tools run, steps, wall time,
   stream bytes, the slowest `/status`.
2. An endless answer: the provider streams words until the client leaves (it ignores
   `max_tokens`); the chat is given `--endless-seconds` to end. Reported: whether it ended, how,
   after how long and how many bytes, and the `max_tokens` the request carried.

3. Calls at an 8K window: a model that wants `searchInstalledNodes` for 64, 80 and 200 queries
   calls, each step, every query whose result it does not see in the request it got (a call
   answered "not run" it makes again; one whose result it sees it never makes again; one it
   cannot see at all it makes again, as a real model does). Reported: steps, calls run, calls
   answered "not run", whether each step's every call was answered in the next request (its
   result or note, or counted in the note of a folded round: core/context/round_fold.py), and
   the calls run again for a query that had run already.

`--quick` runs 200 calls, a 10 s endless limit, and 80 and 200 calls at 8K (about 30 s). Exit
code 0 even when a target is missed; non-zero only on a crash.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from comfyui_assistant.tests.conftest import App, start_app
from comfyui_assistant.tests.helpers import chat_body, sse_events, user
from comfyui_assistant.tests.scripted_provider import (
    Pause,
    ScriptedProvider,
    Stream,
    chunk,
    searches_reply,
    text_reply,
)

ENV = {"LLM_MODEL": "scripted-model", "LLM_CONTEXT_WINDOW": "32768"}


def many_calls(n: int) -> Stream:
    return searches_reply({f"call_{i}": f"load image {i}" for i in range(n)})


class Endless:
    """Chunks forever: a provider that ignores max_tokens and never stops."""

    def __iter__(self) -> Any:
        while True:
            for _ in range(200):
                yield chunk("word ")
            yield Pause(0.001)


async def poll_status(app: App, stop: asyncio.Event) -> float:
    """The slowest /status answer while `stop` is unset, in seconds."""
    worst = 0.0
    while not stop.is_set():
        started = time.perf_counter()
        async with app.session.get(app.base + "/status") as resp:
            await resp.read()
        worst = max(worst, time.perf_counter() - started)
        await asyncio.sleep(0.05)
    return worst


async def timed_chat(app: App, body: Any, limit: float) -> tuple[str, float, float, bool]:
    """(response text, seconds, slowest /status, ended within `limit`)."""
    stop = asyncio.Event()
    poller = asyncio.ensure_future(poll_status(app, stop))
    started = time.perf_counter()
    text, ended = "", True
    try:
        async with app.session.post(app.base + "/api/assistant/chat", json=body) as resp:
            parts: list[bytes] = []
            try:
                async with asyncio.timeout(limit):
                    async for data in resp.content.iter_any():
                        parts.append(data)
            except TimeoutError:
                ended = False
            text = b"".join(parts).decode(errors="replace")
    finally:
        took = time.perf_counter() - started
        stop.set()
        worst = await poller
    return text, took, worst, ended


async def chat_with(
    responder: Any, env: dict[str, str], data: Path, ask: str, limit: float = 600
) -> tuple[ScriptedProvider, str, float, float, bool]:
    """One chat (`ask`) with our app over `data` and the scripted provider playing `responder`:
    (the provider, with the requests it got, and what timed_chat returns)."""
    provider = await ScriptedProvider().start()
    provider.responder = responder
    app = await start_app(data, {**env, "LLM_BASE_URL": provider.base_url})
    try:
        return (provider, *await timed_chat(app, chat_body(user(ask)), limit))
    finally:
        await app.close()
        await provider.stop()


async def tool_calls(calls: int, data: Path) -> None:
    # (a reserve large enough for 1,000 calls' arguments: the output limit is measured apart)
    env = {**ENV, "LLM_CONTEXT_WINDOW": "131072", "LLM_MAX_OUTPUT_TOKENS": "32768"}
    provider, text, took, worst, _ = await chat_with(
        lambda body: many_calls(calls), env, data, "find nodes"
    )
    events = sse_events(text)
    ran = sum(e["type"] == "tool-output-available" for e in events)
    refused = sum(e["type"] == "tool-input-error" for e in events)
    steps = len(provider.requests)
    per_step = [0]
    for event in events:
        if event["type"] == "start-step":
            per_step.append(0)
        per_step[-1] += event["type"] == "tool-output-available"
    print(
        f"tool calls: {calls} per step, {steps} steps, {ran} run, {refused} answered not run, "
        f"{took:.1f} s, stream {len(text) / 1e6:.1f} MB, slowest /status {worst:.2f} s"
    )
    print(f"TARGET most_tools_run_in_a_step={max(per_step)} (guard <= 32)")
    print(f"TARGET slowest_status_s={worst:.2f} (guard < 1)")


async def endless(limit: float, data: Path) -> None:
    stream = Stream(Endless())  # type: ignore[arg-type]
    provider, text, took, worst, ended = await chat_with(
        lambda body: stream, ENV, data, "talk", limit
    )
    sent = provider.requests[0] if provider.requests else {}
    limit_sent = sent.get("max_tokens", sent.get("max_completion_tokens"))
    how = "not ended"
    if ended:
        finish = [e for e in sse_events(text) if e["type"] == "finish"]
        how = f"finishReason {finish[0].get('finishReason')}" if finish else "no finish"
    print(
        f"endless answer: max_tokens sent {limit_sent}, {'ended' if ended else 'still streaming'}"
        f" after {took:.1f} s ({how}), stream {len(text) / 1e6:.2f} MB, slowest /status "
        f"{worst:.2f} s"
    )
    print(f"TARGET endless_ended={ended} (guard True)")


FOLDED = re.compile(r"\[(\d+) more calls of this step, left out here, were not run")


class Searcher:
    """The model of part 3: it wants `wanted` queries; each step it calls those whose result it
    does not see. It checks the request it got against the calls of its previous step."""

    def __init__(self, wanted: int) -> None:
        self.wanted = [f"load image {i}" for i in range(wanted)]
        self.step = 0
        self.made: list[str] = []  # the call ids of the previous step
        self.unanswered = 0  # calls of a step neither answered nor counted in the next request

    def __call__(self, body: dict[str, Any]) -> Stream:
        messages = body["messages"]
        queries = {
            c["id"]: json.loads(c["function"]["arguments"]).get("query")
            for m in messages
            for c in m.get("tool_calls") or ()
        }
        seen, answered, folded = set(), set(), 0
        for m in messages:
            if m["role"] != "tool":
                continue
            answered.add(m["tool_call_id"])
            text = m["content"] if isinstance(m["content"], str) else ""
            folded += sum(int(n) for n in FOLDED.findall(text))
            if not text.startswith("Not run") and "-> error: Not run" not in text:
                seen.add(queries.get(m["tool_call_id"]))
        self.unanswered += max(0, len([i for i in self.made if i not in answered]) - folded)
        self.step += 1
        calls = {f"s{self.step}_{i}": q for i, q in enumerate(self.wanted) if q not in seen}
        self.made = list(calls)
        return searches_reply(calls) if calls else text_reply("Found them all.")


async def round_fit(calls: int, data: Path) -> None:
    model = Searcher(calls)
    env = {**ENV, "LLM_CONTEXT_WINDOW": "8192"}
    provider, text, _, _, _ = await chat_with(model, env, data, "find the image loaders")
    events = sse_events(text)
    inputs = {
        e["toolCallId"]: e["input"].get("query")
        for e in events
        if e["type"] == "tool-input-available"
    }
    ran = [inputs.get(e["toolCallId"]) for e in events if e["type"] == "tool-output-available"]
    not_run = sum(e["type"] == "tool-input-error" for e in events)
    again = len(ran) - len(set(ran))
    print(
        f"{calls} calls in a step at 8K: {len(provider.requests)} steps, {len(ran)} run, "
        f"{not_run} answered not run, {model.unanswered} calls not answered in the next "
        f"request, {again} run again"
    )
    ok = model.unanswered == 0
    print(f"TARGET calls_{calls}_each_answered={ok} (guard True)")
    print(f"TARGET calls_{calls}_run_again={again} (guard 0)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--endless-seconds", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="200 calls, a 10 s endless limit")
    args = parser.parse_args()
    fits = (80, 200) if args.quick else (64, 80, 200)
    if args.quick:
        args.calls, args.endless_seconds = 200, 10.0
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)  # (the endless stream cut)
    with tempfile.TemporaryDirectory() as tmp:
        await tool_calls(args.calls, Path(tmp) / "a")
        await endless(args.endless_seconds, Path(tmp) / "b")
        for n in fits:
            await round_fit(n, Path(tmp) / f"fit{n}")


if __name__ == "__main__":
    asyncio.run(main())
