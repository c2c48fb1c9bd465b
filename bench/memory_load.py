"""How much memory the server keeps after big chats: the resident set (RSS) of a real
standalone server process before and after `--chats` chats of about `--mb` MB each, each on its
own thread, and again after `--idle` seconds of rest.

    .venv/bin/python bench/memory_load.py [--chats 10] [--mb 30] [--shape image|tools]
                                          [--server-path DIR]

`--server-path DIR` runs the server from DIR/comfyui_assistant (e.g. `git archive` of an
earlier commit), for a before/after on the same machine and provider.

`image`: one user message carrying a photo as a data URL (what a pasted screenshot is).
`tools`: a thread of tool rounds whose outputs (workflow-sized JSON) add up to the size.
The provider is the scripted OpenAI-compatible server from tests/, in this process; the app
runs as `python -m comfyui_assistant serve`, so the RSS is the server's alone.
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
from comfyui_assistant.tests.scripted_provider import ScriptedProvider, text_reply


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def main(args: argparse.Namespace) -> None:
    provider = await ScriptedProvider().start()
    provider.enqueue(*[text_reply("ok") for _ in range(args.chats)])
    port = free_port()
    data = Path(tempfile.mkdtemp(prefix="memory-load-"))
    env = {**os.environ, "LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m",
           "LLM_CONTEXT_WINDOW": "1000000"}  # fmt: skip
    if args.server_path:  # another version of the app (a folder holding comfyui_assistant/)
        env["PYTHONPATH"] = args.server_path
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--port", str(port),
        "--data-dir", str(data), stdout=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    await proc.stdout.readline()
    base = f"http://127.0.0.1:{port}"
    make = image_thread if args.shape == "image" else tools_thread
    size = args.mb * 1024 * 1024
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/api/assistant/provider") as resp:
                await resp.read()  # the store open, the tables loaded
            before = rss_mb(proc.pid)
            peak = before
            started = time.monotonic()
            for thread in range(args.chats):
                body = json.dumps({"id": f"t{thread}", "messages": make(thread, size),
                                   "trigger": "submit-message"}).encode()  # fmt: skip
                async with session.post(
                    base + "/api/assistant/chat",
                    data=body,
                    headers={"Content-Type": "application/json"},
                ) as resp:
                    text = await resp.text()
                    if resp.status != 200 or '"error"' in text:
                        print(f"chat {thread}: HTTP {resp.status} {text[:300]}")
                peak = max(peak, rss_mb(proc.pid))
                print(f"chat {thread + 1}: body {len(body) / 1e6:.1f} MB, "
                      f"RSS {rss_mb(proc.pid):.0f} MB", flush=True)  # fmt: skip
            after = rss_mb(proc.pid)
            await asyncio.sleep(args.idle)
            rested = rss_mb(proc.pid)
        took = time.monotonic() - started
        print(
            f"RSS before {before:.0f} MB, after {args.chats} chats of {args.mb} MB ({args.shape})"
            f" {after:.0f} MB (+{after - before:.0f}), peak {peak:.0f} MB, after {args.idle:g} s"
            f" idle {rested:.0f} MB (+{rested - before:.0f}); {took:.1f} s"
        )
    finally:
        proc.terminate()
        await proc.wait()
        await provider.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=10)
    parser.add_argument("--mb", type=int, default=30)
    parser.add_argument("--shape", choices=["image", "tools"], default="image")
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument("--server-path", help="run the server from this folder (a before/after)")
    asyncio.run(main(parser.parse_args()))
