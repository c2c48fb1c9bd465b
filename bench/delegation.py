"""What delegating research to a helper (the `delegate` tool) saves the parent, and how fast a
stop reaches the helper.

    PYTHONPATH=... .venv/bin/python bench/delegation.py [--turns 20] [--windows 32768,8192]
        [--stops 10] [--quick]

Our real app on a socket and the scripted OpenAI-compatible provider, which plays both the
parent and the helper: it tells them apart by the helper's system prompt and picks each reply
from what the request already holds. Five research tasks (upscaling, LoRAs, ControlNet,
inpainting, video), each four real lookups against the shipped object_info (two rounds of two
parallel calls), then an answer. "direct": the parent makes the lookups itself; "delegate": it
hands the task to the helper, which makes them and answers in the JSON asked for.

Figures (exact cl100k counts, tool definitions included):
- parent context: the parent's last request after one task, and after the whole session;
- uncached tokens per turn: tokens of each request not repeating the previous request's prefix
  (its tool definitions, then its messages; as bench/session_sim.py counts), summed per turn.
  "one cache": every request against the one before (a local server with one slot: a helper's
  request evicts the parent's prefix); "per role": parent against parent, helper against helper
  (a server with a slot per conversation, or a hosted prompt cache);
  At 8K the threads outgrow the window: the summarizer's requests get no summary from the
  scripted provider, so the deterministic digest stands in (as in core.summary.summarizer's failure
  path; it logs a line);
- stop: from the client dropping the connection while the helper streams to the provider seeing
  the helper's request disconnected, over `--stops` runs (the server's own watch: every 0.1 s).

TARGET lines (guards): at 32K the parent's context after the session with delegation is at
most two thirds of the direct one's (the README quotes 6,185 against 11,667 tokens after 20
turns); every stop reaches the helper's request within 0.5 s. `--quick`: 5 turns at 32K, 3
stops (a few seconds). Exit code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from comfyui_assistant.core.chat.delegation import helper_prompt
from comfyui_assistant.core.stream.sse import PumpOptions
from comfyui_assistant.core.tokens.tokens import counter_for
from comfyui_assistant.tests.conftest import start_app
from comfyui_assistant.tests.helpers import assemble, chat_body, sse_events, user
from comfyui_assistant.tests.scripted_provider import (
    Pause,
    ScriptedProvider,
    Stream,
    call_piece,
    chunk,
    text_reply,
)

COUNTER = counter_for("gpt-4o")
Call = tuple[str, dict[str, Any]]
TASKS: list[tuple[str, list[list[Call]]]] = [
    (
        "upscaling",
        [
            [("searchInstalledNodes", {"query": "upscale image"}),
             ("getAvailableModels", {"category": "upscale_models"})],
            [("getNodeDefinition", {"nodeType": "ImageUpscaleWithModel"}),
             ("readDocumentation", {"nodeType": "ImageUpscaleWithModel"})],
        ],
    ),
    (
        "LoRAs",
        [
            [("searchInstalledNodes", {"query": "lora"}),
             ("getAvailableModels", {"category": "loras"})],
            [("getNodeDefinition", {"nodeType": "LoraLoader"}),
             ("readDocumentation", {"nodeType": "LoraLoader"})],
        ],
    ),
    (
        "ControlNet",
        [
            [("searchInstalledNodes", {"query": "controlnet"}),
             ("getAvailableModels", {"category": "controlnet"})],
            [("getNodeDefinition", {"nodeType": "ControlNetApplyAdvanced"}),
             ("readDocumentation", {"nodeType": "ControlNetApplyAdvanced"})],
        ],
    ),
    (
        "inpainting",
        [
            [("searchInstalledNodes", {"query": "inpaint"}),
             ("getNodeDefinition", {"nodeType": "VAEEncodeForInpaint"})],
            [("getNodeDefinition", {"nodeType": "SetLatentNoiseMask"}),
             ("readDocumentation", {"nodeType": "VAEEncodeForInpaint"})],
        ],
    ),
    (
        "video",
        [
            [("searchInstalledNodes", {"query": "video"}),
             ("getAvailableModels", {"category": "diffusion_models"})],
            [("getNodeDefinition", {"nodeType": "SaveAnimatedWEBP"}),
             ("readDocumentation", {"nodeType": "SaveAnimatedWEBP"})],
        ],
    ),
]  # fmt: skip
IDS = itertools.count()


def calls_reply(calls: list[Call]) -> Stream:
    pieces = [
        call_piece(i, id=f"call_{next(IDS)}", name=name, arguments=json.dumps(args))
        for i, (name, args) in enumerate(calls)
    ]
    return Stream([chunk(tool_calls=pieces), chunk(finish_reason="tool_calls")])


def task_of(text: str) -> int:
    return next(i for i, (name, _) in enumerate(TASKS) if f"about {name}" in text)


def rounds_since_user(messages: list[dict[str, Any]]) -> tuple[int, str]:
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    content = messages[last]["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    return sum(1 for m in messages[last:] if m.get("tool_calls")), text


def responder(mode: str) -> Any:
    def reply(body: dict[str, Any]) -> Stream:
        messages = body["messages"]
        done, text = rounds_since_user(messages)
        name, rounds = TASKS[task_of(text)]
        if str(messages[0]["content"]).startswith(helper_prompt()):  # the helper
            if done < len(rounds):
                return calls_reply(rounds[done])
            facts = [f"{n} {json.dumps(a)}" for r in rounds for n, a in r]
            return text_reply(json.dumps({"answer": f"What {name} needs here.", "facts": facts}))
        if mode == "delegate" and done == 0:
            return calls_reply([("delegate", {"task": f"Find out about {name} here."})])
        if mode == "direct" and done < len(rounds):
            return calls_reply(rounds[done])
        return text_reply(f"Here is how to do {name} with what you have installed.")

    return reply


def prefix_tokens(prev: dict[str, Any] | None, cur: dict[str, Any]) -> int:
    """Tokens of `cur` repeating `prev` from the start: its tools, then equal messages."""
    tools = cur.get("tools", [])
    if prev is None or prev.get("tools", []) != tools:
        return 0
    same = COUNTER.tools(tools)
    for a, b in zip(prev["messages"], cur["messages"], strict=False):
        if a != b:
            break
        same += COUNTER.message(b)
    return same


def size(request: dict[str, Any]) -> int:
    return COUNTER.tools(request.get("tools", [])) + COUNTER.messages(request["messages"])


def is_helper(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith(helper_prompt())


@dataclass
class Session:
    mode: str
    after_first: int = 0  # the parent's last request after one task
    parent_last: int = 0  # ... after the whole session
    one_cache: list[int] = field(default_factory=list)  # uncached tokens per turn
    per_role: list[int] = field(default_factory=list)
    requests: int = 0


def uncached(requests: list[dict[str, Any]], last: dict[str, Any]) -> tuple[int, int]:
    one = per_role = 0
    for request in requests:
        role = is_helper(request)
        one += size(request) - prefix_tokens(last.get("any"), request)
        per_role += size(request) - prefix_tokens(last.get(str(role)), request)
        last["any"], last[str(role)] = request, request
    return one, per_role


async def run_session(mode: str, turns: int, window: int) -> Session:
    provider = await ScriptedProvider().start()
    provider.responder = responder(mode)
    out, last, history = Session(mode), {}, []  # type: ignore[var-annotated]
    with tempfile.TemporaryDirectory() as data:
        env = {
            "LLM_BASE_URL": provider.base_url,
            "LLM_MODEL": "scripted-model",
            "LLM_CONTEXT_WINDOW": str(window),
        }
        app = await start_app(Path(data), env)
        try:
            for turn in range(turns):
                name = TASKS[turn % len(TASKS)][0]
                history.append(user(f"Tell me about {name} in my install.", f"u{turn}"))
                seen = len(provider.requests)
                status, body = await app.chat(chat_body(*history))
                assert status == 200, body
                events = sse_events(body)
                assert not [e for e in events if e["type"] == "error"], body[-500:]
                history.append(assemble(events))
                new = provider.requests[seen:]
                one, per_role = uncached(new, last)
                out.one_cache.append(one)
                out.per_role.append(per_role)
                parent = [r for r in new if not is_helper(r)][-1]
                out.parent_last = size(parent)
                if turn == 0:
                    out.after_first = out.parent_last
            out.requests = len(provider.requests)
        finally:
            await app.close()
            await provider.stop()
    return out


async def stop_timing(runs: int) -> list[float]:
    """Seconds from the client's abort to the helper's request disconnected."""
    provider = await ScriptedProvider().start()
    times = []
    with tempfile.TemporaryDirectory() as data:
        env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "32768"}
        app = await start_app(Path(data), env, pump=PumpOptions())  # (the server's defaults)
        try:
            for _ in range(runs):
                provider.replies.clear()
                provider.disconnects.clear()
                slow = [chunk("checking")] + [Pause(0.05), chunk(" more")] * 200
                provider.enqueue(
                    calls_reply([("delegate", {"task": "Find out about upscaling here."})]),
                    Stream([*slow, chunk(finish_reason="stop")]),
                )
                seen = len(provider.requests)
                resp = await app.post("/api/assistant/chat", chat_body(user("upscaling?")))
                for _ in range(10_000):  # until the helper's request streams (at most 10 s)
                    if len(provider.requests) > seen + 1:
                        break
                    await asyncio.sleep(0.001)
                await asyncio.sleep(0.2)
                aborted = time.monotonic()
                resp.close()
                for _ in range(10_000):  # (at most 10 s)
                    if provider.disconnects:
                        break
                    await asyncio.sleep(0.001)
                times.append(provider.disconnects[0] - aborted)
                await asyncio.sleep(0.1)
        finally:
            await app.close()
            await provider.stop()
    return times


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--windows", default="32768,8192")
    parser.add_argument("--stops", type=int, default=10, help="stop timing runs")
    parser.add_argument("--quick", action="store_true", help="5 turns at 32K, 3 stops")
    args = parser.parse_args()
    if args.quick:
        args.turns, args.windows, args.stops = 5, "32768", 3
    contexts: dict[tuple[int, str], int] = {}  # (window, mode) -> parent context at the end
    for window in (int(w) for w in args.windows.split(",")):
        print(f"\n## {window:,}-token window, {args.turns} research turns\n")
        print(
            "| mode | parent context after 1 task | after the session | uncached/turn, one "
            "cache (median / mean) | uncached/turn, per role (median / mean) | requests |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        for mode in ("direct", "delegate"):
            s = await run_session(mode, args.turns, window)
            one, role = s.one_cache, s.per_role
            contexts[window, mode] = s.parent_last
            print(
                f"| {mode} | {s.after_first:,} | {s.parent_last:,} | "
                f"{statistics.median(one):,.0f} / {statistics.mean(one):,.0f} | "
                f"{statistics.median(role):,.0f} / {statistics.mean(role):,.0f} | {s.requests} |"
            )
    times = sorted(await stop_timing(args.stops))
    median, top = statistics.median(times) * 1000, times[-1] * 1000
    print(
        f"\nstop -> the helper's provider request disconnected: median {median:.0f} ms, "
        f"max {top:.0f} ms ({args.stops} runs)"
    )
    if (32768, "direct") in contexts:
        share = contexts[32768, "delegate"] / contexts[32768, "direct"]
        verdict = "PASS" if share <= 2 / 3 else "FAIL"
        print(
            f"TARGET window=32768 parent_context_delegate_vs_direct={share:.0%} ({verdict}, "
            f"guard <= 67%)"
        )
    print(f"TARGET stop_reaches_helper_max_ms={top:.0f} ({'PASS' if top < 500 else 'FAIL'}, < 500)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
