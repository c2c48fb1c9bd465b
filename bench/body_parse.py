"""What parsing a long thread's /api/assistant/chat body costs, and how long other requests
wait while a hostile one is read.

1. routes/common.py `parse_json` (UTF-8, JSON with its checks) on a 5 MB body of 400 turns, each
   answer with a 30-node workflow as a tool's output. Best of 7 runs, the collector paused as
   the route pauses it.
2. Our standalone app on a real 127.0.0.1 socket (the scripted provider plays the model), and a
   client asking `/status` every 5 ms from another process (the slowest answer is the longest
   any other request waited) while: a chat body of a million one-letter parts (27 MB) is
   posted; one of 10,000 tiny messages (the most a request may hold) is posted and answered;
   a thread stored with a million parts (possible before the limits) is read back by its GET.

    .venv/bin/python bench/body_parse.py [--quick]

TARGETs (guards): parsing takes under 250 ms per 5 MB (80 ms measured on a 2-core machine; the
nesting check is about a third of it); the million parts are refused (413); no other request
waits 0.5 s for the million parts or the stored thread's GET. `--quick` parses a 40-turn body
once and posts 300,000 parts, 2,000 messages, and reads back 300,000 stored parts (CI).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from comfyui_assistant.core.store.threads import Threads
from comfyui_assistant.routes.common import parse_json
from comfyui_assistant.standalone import SERVICE
from comfyui_assistant.tests.conftest import App, start_app
from comfyui_assistant.tests.scripted_provider import ScriptedProvider, text_reply

WAIT_TARGET = 0.5  # seconds: the longest another request may wait
# Asks /status every 5 ms until stdin closes; prints the slowest answer (seconds).
POLLER = """
import sys, threading, time, urllib.request
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
url, worst = sys.argv[1] + "/status", 0.0
while not done.is_set():
    started = time.perf_counter()
    urllib.request.urlopen(url).read()
    worst = max(worst, time.perf_counter() - started)
    time.sleep(0.005)
print(worst)
"""


def _node(i: int) -> dict[str, Any]:
    return {
        "id": i, "type": "KSampler", "pos": [i, i * 2], "size": [300, 200], "flags": {},
        "order": i, "mode": 0, "inputs": [{"name": "model", "type": "MODEL", "link": i}],
        "outputs": [{"name": "LATENT", "type": "LATENT", "links": [i + 1], "slot_index": 0}],
        "properties": {"Node name for S&R": "KSampler"},
        "widgets_values": [123456789, "fixed", 20, 7.5, "euler", "normal", 1.0],
    }  # fmt: skip


def body(turns: int = 400) -> bytes:
    workflow = {
        "nodes": [_node(i) for i in range(30)],
        "links": [[i, i, 0, i + 1, 0, "MODEL"] for i in range(30)],
        "extra": {"ds": {"scale": 1, "offset": [0, 0]}},
        "version": 0.4,
    }
    messages: list[dict[str, Any]] = []
    for t in range(turns):
        ask = {"type": "text", "text": "Change the sampler, please. " * 5}
        messages.append({"id": f"u{t}", "role": "user", "parts": [ask]})
        call = {
            "type": "tool-getWorkflow", "toolCallId": f"c{t}", "state": "output-available",
            "input": {}, "output": workflow,
        }  # fmt: skip
        parts = [{"type": "step-start"}, call, {"type": "text", "text": "Done. " * 20}]
        messages.append({"id": f"a{t}", "role": "assistant", "parts": parts})
    return json.dumps({"id": "bench", "messages": messages}).encode()


TINY = '{"type":"text","text":"a"}'


def tiny_parts(n: int) -> bytes:
    """One user message of `n` one-letter parts."""
    parts = ",".join([TINY] * n)
    return f'{{"id":"parts","messages":[{{"id":"m","role":"user","parts":[{parts}]}}]}}'.encode()


def tiny_messages(n: int) -> bytes:
    """`n` messages of one one-letter part each, the user's and the assistant's in turn."""
    messages = (
        f'{{"id":"m{i}","role":"{"user" if i % 2 == 0 else "assistant"}","parts":[{TINY}]}}'
        for i in range(n - 1 if n % 2 == 0 else n)
    )
    return f'{{"id":"messages","messages":[{",".join(messages)}]}}'.encode()


async def while_polled(app: App, work: Any) -> tuple[Any, float, float]:
    """(what `work()` gave, its seconds, the slowest /status answer meanwhile)."""
    poller = await asyncio.create_subprocess_exec(
        sys.executable, "-c", POLLER, app.base, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    await asyncio.sleep(0.3)  # (the poller's interpreter has started)
    started = time.perf_counter()
    result = await work()
    took = time.perf_counter() - started
    out, _ = await poller.communicate(b"")
    return result, took, float(out)


async def post(app: App, data: bytes) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    async with app.session.post(
        app.base + "/api/assistant/chat", data=data, headers=headers
    ) as resp:
        return resp.status, await resp.text()


async def posted(app: App, data: bytes, what: str) -> tuple[int, float]:
    """Post `data` (`what` it holds) while another process polls, and print how it went:
    (the status, the longest another request waited)."""
    (status, _), took, worst = await while_polled(app, lambda: post(app, data))
    print(
        f"{what} ({len(data) / 1e6:.1f} MB): {status} in {took:.2f} s, "
        f"longest wait of another request {worst:.3f} s"
    )
    return status, worst


def wait_target(name: str, worst: float) -> None:
    verdict = "PASS" if worst < WAIT_TARGET else "FAIL"
    print(f"TARGET {name}_longest_wait_s={worst:.3f} ({verdict}, < {WAIT_TARGET})")


async def served(quick: bool) -> None:
    provider = await ScriptedProvider().start()
    provider.responder = lambda body: text_reply("Done.")
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "32768"}
    parts, messages = (300_000, 2_000) if quick else (1_000_000, 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        app = await start_app(Path(tmp), env)
        try:
            status, worst = await posted(app, tiny_parts(parts), f"{parts:,} tiny parts")
            print(f"TARGET tiny_parts_refused={status == 413} (guard True)")
            wait_target("tiny_parts", worst)
            _, worst = await posted(app, tiny_messages(messages), f"{messages:,} tiny messages")
            print(f"TARGET tiny_messages_longest_wait_s={worst:.3f} (measured)")
            threads: Threads = await app.app[SERVICE].threads()
            stored = [{"id": "m", "role": "user", "parts": [json.loads(TINY)] * parts}]
            await threads.sync("stored", stored)

            async def read() -> int:
                async with app.session.get(app.base + "/api/assistant/threads/stored") as r:
                    return len(await r.read())

            size, took, worst = await while_polled(app, read)
            print(
                f"GET of a thread stored with {parts:,} parts ({size / 1e6:.0f} MB): {took:.2f} s, "
                f"longest wait of another request {worst:.3f} s"
            )
            wait_target("stored_parts_get", worst)
        finally:
            await app.close()
            await provider.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller bodies, one run (CI)")
    args = parser.parse_args()
    asyncio.run(served(args.quick))
    data = body(40 if args.quick else 400)
    runs = []
    for _ in range(1 if args.quick else 7):
        start = time.perf_counter()
        parse_json(data)
        runs.append(time.perf_counter() - start)
    ms = min(runs) * 1000
    print(f"parse_json: {len(data) / 1e6:.1f} MB in {ms:.1f} ms (best of {len(runs)})")
    per_5mb = ms * 5e6 / len(data)
    verdict = "PASS" if per_5mb < 250 else "FAIL"
    print(f"TARGET parse_ms_per_5mb={per_5mb:.1f} ({verdict}, < 250)")


if __name__ == "__main__":
    main()
