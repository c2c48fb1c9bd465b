"""How much memory the server keeps after big chats: the resident set (RSS) of a real
standalone server process before and after `--chats` chats of about `--mb` MB each, each on its
own thread, then after `--concurrent` more such chats sent at once, and again after `--idle`
seconds of rest.

    .venv/bin/python bench/memory_load.py [--chats 10] [--mb 30] [--concurrent 10]
                                          [--shape image|tools|texts] [--server-path DIR] [--quick]

`--server-path DIR` runs the server from DIR/comfyui_assistant (e.g. `git archive` of an
earlier commit), for a before/after on the same machine and provider. `--quick` is 16 chats of
10 MB and 4 at once, about half a minute with the image shape.

`image`: one user message carrying a photo as a data URL (what a pasted screenshot is).
`tools`: a thread of tool rounds whose outputs (workflow-sized JSON) add up to the size.
`texts`: a long conversation of 3,900-character texts that add up to the size.
The provider is the scripted OpenAI-compatible server from tests/, in this process; the app
runs as `python -m comfyui_assistant serve`, so the RSS is the server's alone.

TARGET lines: what the chats leave behind levels off (the second half of the chats adds less
than one body), and the concurrent chats leave less than two bodies once they are done. What a
thread keeps between turns is fingerprints and counts, never its body (README, "Memory").
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from comfyui_assistant.tests.helpers import summary_text
from comfyui_assistant.tests.scripted_provider import Completion, ScriptedProvider, text_reply

SUMMARY = Completion(summary_text("answer the user"))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def image_thread(thread: int, size: int) -> list[dict[str, Any]]:
    data = base64.b64encode(os.urandom(size * 3 // 4)).decode()
    parts = [
        {"type": "text", "text": f"what is in this picture? ({thread})"},
        {"type": "file", "mediaType": "image/png", "url": f"data:image/png;base64,{data}"},
    ]
    return [{"id": f"u{thread}", "role": "user", "parts": parts}]


def tools_thread(thread: int, size: int) -> list[dict[str, Any]]:
    output = {"nodes": [{"id": i, "type": "KSampler", "widgets": [i] * 40} for i in range(1500)]}
    per = len(json.dumps(output))
    messages: list[dict[str, Any]] = []
    for i in range(max(1, size // per)):
        ask = {"type": "text", "text": f"look at the workflow {i}"}
        messages.append({"id": f"u{thread}-{i}", "role": "user", "parts": [ask]})
        call = {
            "type": "tool-getWorkflow",
            "toolCallId": f"c{thread}-{i}",
            "state": "output-available",
            "input": {"detail": "full"},
            "output": output,
        }
        answer = [{"type": "step-start"}, call, {"type": "text", "text": "It has 1500 nodes."}]
        messages.append({"id": f"a{thread}-{i}", "role": "assistant", "parts": answer})
    messages.append({"id": f"u{thread}-last", "role": "user",
                     "parts": [{"type": "text", "text": "and now?"}]})  # fmt: skip
    return messages


def texts_thread(thread: int, size: int) -> list[dict[str, Any]]:
    """A long conversation: user and assistant texts of 3,900 characters each (pasted logs,
    long answers), each below the length from which caches key a text by its fingerprint."""
    messages: list[dict[str, Any]] = []
    words = [os.urandom(6).hex() for _ in range(64)]
    for i in range(max(2, size // 3900)):
        text = f"{thread}-{i} " + " ".join(words[(i + j) % 64] for j in range(300))
        role = "user" if i % 2 == 0 or i == size // 3900 - 1 else "assistant"
        parts: list[dict[str, Any]] = [{"type": "text", "text": text[:3900]}]
        if role == "assistant":
            parts.insert(0, {"type": "step-start"})
        messages.append({"id": f"m{thread}-{i}", "role": role, "parts": parts})
    if messages[-1]["role"] != "user":
        messages.append({"id": f"m{thread}-last", "role": "user",
                         "parts": [{"type": "text", "text": "and now?"}]})  # fmt: skip
    return messages


SHAPES = {"image": image_thread, "tools": tools_thread, "texts": texts_thread}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def chat(session: aiohttp.ClientSession, base: str, body: bytes, thread: int) -> None:
    async with session.post(
        base + "/api/assistant/chat", data=body, headers={"Content-Type": "application/json"}
    ) as resp:
        text = await resp.text()
        if resp.status != 200 or '"error"' in text:
            print(f"chat {thread}: HTTP {resp.status} {text[:300]}")


def chat_body(make: Any, thread: int, size: int) -> bytes:
    body = {"id": f"t{thread}", "messages": make(thread, size), "trigger": "submit-message"}
    return json.dumps(body).encode()


async def main(args: argparse.Namespace) -> None:
    provider = await ScriptedProvider().start()
    provider.requests = _Forgetful()  # (the provider's own memory is not what is measured)
    # every chat is answered "ok"; a thread beyond the window is summarized, as a model would
    provider.responder = lambda body: text_reply("ok") if body.get("stream") else SUMMARY
    port = free_port()
    data = Path(tempfile.mkdtemp(prefix="memory-load-"))
    env = {**os.environ, "LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m",
           "LLM_CONTEXT_WINDOW": "1000000"}  # fmt: skip
    if args.server_path:  # another version of the app (a folder holding comfyui_assistant/)
        env["PYTHONPATH"] = args.server_path
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--port", str(port),
        "--data-dir", str(data), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    await proc.stdout.readline()
    base = f"http://127.0.0.1:{port}"
    make = SHAPES[args.shape]
    size = args.mb * 1024 * 1024
    rss: list[float] = []
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/api/assistant/provider") as resp:
                await resp.read()  # the store open, the tables loaded
            before = rss_mb(proc.pid)
            peak = before
            started = time.monotonic()
            for thread in range(args.chats):
                body = chat_body(make, thread, size)
                await chat(session, base, body, thread)
                rss.append(rss_mb(proc.pid))
                peak = max(peak, rss[-1])
                print(f"chat {thread + 1}: body {len(body) / 1e6:.1f} MB, "
                      f"RSS {rss[-1]:.0f} MB", flush=True)  # fmt: skip
            after = rss_mb(proc.pid)
            together = range(args.chats, args.chats + args.concurrent)
            bodies = {thread: chat_body(make, thread, size) for thread in together}
            await asyncio.gather(*[chat(session, base, b, t) for t, b in bodies.items()])
            del bodies
            concurrent = rss_mb(proc.pid)
            await asyncio.sleep(args.idle)
            rested = rss_mb(proc.pid)
        took = time.monotonic() - started
        print(
            f"RSS before {before:.0f} MB, after {args.chats} chats of {args.mb} MB ({args.shape})"
            f" {after:.0f} MB (+{after - before:.0f}), peak {peak:.0f} MB; after {args.concurrent}"
            f" more at once {concurrent:.0f} MB; after {args.idle:g} s idle {rested:.0f} MB"
            f" (+{rested - before:.0f}); {took:.1f} s"
        )
        targets(args, rss, after, rested)
    finally:
        proc.terminate()
        await proc.wait()
        await provider.stop()


def targets(args: argparse.Namespace, rss: list[float], after: float, rested: float) -> None:
    if len(rss) >= 4:
        half = rss[len(rss) // 2 - 1]
        late = after - half
        verdict = "PASS" if late < args.mb else "FAIL"
        print(f"TARGET late_growth_mb={late:.0f} ({verdict}, the last {len(rss) - len(rss) // 2}"
              f" chats add < one body of {args.mb} MB)")  # fmt: skip
    if args.concurrent:
        left = rested - after
        verdict = "PASS" if left < 2 * args.mb else "FAIL"
        print(f"TARGET concurrent_left_mb={left:.0f} ({verdict}, {args.concurrent} chats at once"
              f" leave < two bodies, {2 * args.mb} MB)")  # fmt: skip


class _Forgetful(list[Any]):
    def append(self, item: Any) -> None:
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=10)
    parser.add_argument("--mb", type=int, default=30)
    parser.add_argument("--shape", choices=list(SHAPES), default="image")
    parser.add_argument("--concurrent", type=int, default=10, help="chats sent at once after")
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument("--server-path", help="run the server from this folder (a before/after)")
    parser.add_argument("--quick", action="store_true", help="16 chats of 10 MB, 4 at once")
    parsed = parser.parse_args()
    if parsed.quick:
        parsed.chats, parsed.mb, parsed.concurrent = 16, 10, 4
    asyncio.run(main(parsed))
