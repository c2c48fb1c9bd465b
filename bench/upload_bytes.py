"""The bytes one new message uploads (POST /api/assistant/chat) as a thread grows, before and
after a turn sends what is new (core/chat/thread_delta.py, ui/src/runtime/sentMessages.ts), and
the server's time to the answer's first byte for each.

    .venv/bin/python bench/upload_bytes.py [--turns 10,1000,3000] [--quick]

Threads of N turns as issue 38 measured them: a user message of 20 to 200 words and an answer of
40 to 300, a getWorkflow call every 10 turns whose result is a 40-node graph (about 9 KB). Each
thread is stored in our real server (the real SQLite store, as whole-thread requests stored it);
then its next message is sent twice, to two copies of the thread: as the panel sent it before
(the whole thread, serialized as the browser's JSON.stringify does) and as it sends it now (what
is new and the message it follows). Both go through the real app to the scripted provider, and
the provider must receive the same request from both. Window: 4M tokens, so no compaction runs
(what the request carries is what is measured, not the summarizer). `--quick` (CI): 10 and 200
turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.standalone import SERVICE, create_app
from comfyui_assistant.tests.helpers import serve_app
from comfyui_assistant.tests.scripted_provider import ScriptedProvider, text_reply

TARGET_KB = 64
WORDS = ["the", "a", "sampler", "node", "graph", "latent", "image", "prompt", "model", "seed",
         "steps", "cfg", "denoise", "vae", "clip"]  # fmt: skip


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def graph(rng: random.Random, nodes: int = 40) -> dict[str, Any]:
    return {
        "nodes": [
            {"id": i, "type": rng.choice(["KSampler", "VAEDecode", "CLIPTextEncode", "SaveImage"]),
             "pos": [rng.randint(0, 2000), rng.randint(0, 2000)], "size": [320, 260],
             "widgets_values": [rng.randint(0, 2**31), 20, 7.5, "euler", "normal", 1.0],
             "inputs": [{"name": "model", "type": "MODEL", "link": i * 2}],
             "outputs": [{"name": "LATENT", "type": "LATENT", "links": [i * 2 + 1]}]}
            for i in range(nodes)
        ],
        "links": [[i, i, 0, i + 1, 0, "LATENT"] for i in range(nodes - 1)],
    }  # fmt: skip


def thread(turns: int, seed: int = 38) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for n in range(turns):
        out.append({"id": f"u{n:05d}", "role": "user",
                    "parts": [{"type": "text", "text": words(rng, 20, 200)}]})  # fmt: skip
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        if n % 10 == 9:
            parts += [
                {"type": "tool-getWorkflow", "toolCallId": f"call{n:05d}",
                 "state": "output-available", "input": {}, "output": graph(rng)},
                {"type": "step-start"},
            ]  # fmt: skip
        parts.append({"type": "text", "text": words(rng, 40, 300), "state": "done"})
        out.append({"id": f"a{n:05d}", "role": "assistant", "parts": parts})
    return out


def wire(body: dict[str, Any]) -> bytes:
    """As the browser serializes it (JSON.stringify: no spaces, characters as they are)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


async def post(session: aiohttp.ClientSession, url: str, data: bytes) -> tuple[float, str]:
    """Seconds to the response's first byte, and the whole response."""
    started = time.perf_counter()
    headers = {"Content-Type": "application/json"}
    async with session.post(url, data=data, headers=headers) as resp:
        first = await resp.content.readany()
        took = time.perf_counter() - started
        rest = await resp.read()
        assert resp.status == 200, (resp.status, (first + rest)[:300])
    return took, (first + rest).decode()


async def measure(turns: int, app: Any, base: str, provider: ScriptedProvider) -> dict[str, Any]:
    messages = thread(turns)
    threads = await app[SERVICE].threads()
    for copy in ("whole", "new"):
        await threads.sync(f"t{turns}-{copy}", messages)
    new = {"id": "u-next", "role": "user", "parts": [{"type": "text", "text": "one more change"}]}
    common = {"trigger": "submit-message", "tools": {}, "workflow": "workflows/bench.json"}
    before = wire({**common, "id": f"t{turns}-whole", "messages": [*messages, new]})
    after = wire({**common, "id": f"t{turns}-new", "messages": [new],
                  "parentId": messages[-1]["id"], "parentIndex": len(messages) - 1})  # fmt: skip
    got: dict[str, Any] = {"turns": turns, "before": len(before), "after": len(after)}
    sent = []
    async with aiohttp.ClientSession() as session:
        for name, data in (("whole", before), ("new", after)):
            provider.enqueue(text_reply("Done."))
            got[f"ttfb_{name}"], body = await post(session, base + "/api/assistant/chat", data)
            assert '"text-delta"' in body, body[-300:]
            sent.append(provider.requests[-1])
    assert sent[0] == sent[1], "the provider got another request from what is new"
    first = messages[0]["parts"][0]["text"]  # (the whole thread reached the provider)
    assert first in json.dumps(sent[1]["messages"][1]) and "one more change" in json.dumps(sent[1])
    return got


async def run(sizes: list[int]) -> list[dict[str, Any]]:
    provider = await ScriptedProvider().start()
    env = {
        "LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "4000000", "COMFY_ASSISTANT_OFFLINE": "1",
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(ServiceOptions(data_dir=Path(tmp), environ=env))
        runner, base = await serve_app(app)
        try:
            await measure(1, app, base, provider)  # (warm: the first turn loads what all use)
            return [await measure(n, app, base, provider) for n in sizes]
        finally:
            await runner.cleanup()
            await provider.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", default="10,1000,3000")
    parser.add_argument("--quick", action="store_true", help="10 and 200 turns (CI)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    sizes = [10, 200] if args.quick else [int(n) for n in args.turns.split(",")]
    rows = asyncio.run(run(sizes))
    print(
        f"{'turns':>6} {'whole thread':>14} {'what is new':>12} {'ttfb whole':>11} {'ttfb new':>9}"
    )
    for r in rows:
        print(
            f"{r['turns']:>6} {r['before'] / 1024:>11.1f} KB {r['after'] / 1024:>9.2f} KB "
            f"{r['ttfb_whole'] * 1000:>8.0f} ms {r['ttfb_new'] * 1000:>6.0f} ms"
        )
    largest = max(r["after"] for r in rows)
    spread = largest - min(r["after"] for r in rows)
    ok = largest <= TARGET_KB * 1024 and spread <= 8  # (only the parent's index grows: digits)
    print(
        f"TARGET upload_kb_per_message={largest / 1024:.2f} (<= {TARGET_KB} KB at every length, "
        f"{spread} bytes apart from {rows[0]['turns']} to {rows[-1]['turns']} turns) "
        f"{'ok' if ok else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
