"""Decompression bombs attached to a real server: how long each takes to be refused, the
server's peak memory meanwhile, and the longest another request waits while it is checked.

    .venv/bin/python bench/image_bombs.py [--quick] [--server-path DIR]

- text bomb: a 1×1 PNG whose zTXt `workflow` inflates to `--text-mb` MB (512: a 530 KB file);
- pixel bomb: a PNG claiming 10000×10000 RGB (300 MB of pixel rows) whose image data inflates
  to `--pixel-mb` MB (19,500: a 20.2 MB file, under the 20 MB attachment limit).
- EXIF bombs: WebPs of 800 KB and 837 KB whose 65,535 EXIF entries all point at one value
  (800 KB: bytes that are no "key:value"; 837 KB: "workflow:aaa…"), and one of 800 KB whose
  2,000 entries each start a byte further (different texts of 774 KB: 1.5 GB if all were read).

The app runs as `python -m comfyui_assistant serve` (so the RSS is the server's alone, its peak
read from VmHWM after clearing it; its log goes to server.log in its data folder); the
scripted provider from tests/ runs in this process.
While each bomb is uploaded, another request (GET /status) is sent again and again: its
longest wait is the stall. `--quick` (64 MB and 2,000 MB) runs in seconds. `--server-path DIR`
runs the server from DIR/comfyui_assistant (e.g. `git archive` of an earlier commit) for a
before/after. Exit code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import socket
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from comfyui_assistant.tests.comfy_images import exif_bomb, pixel_bomb, text_bomb
from comfyui_assistant.tests.scripted_provider import ScriptedProvider

STALL_TARGET = 0.5  # seconds another request may wait while a bomb is checked
MEMORY_TARGET = 100  # MB the text bomb (and each EXIF bomb) may add to the server's peak
EXIF_SECONDS = 2  # each EXIF bomb answered within
EXIF_BOMBS = [
    ("EXIF bomb (65,535 entries at one offset)", exif_bomb(800_000)),
    ("EXIF bomb (65,535 entries at one offset, workflow:)", exif_bomb(837_000, b"workflow:a")),
    ("EXIF bomb (2,000 entries a byte apart)", exif_bomb(800_000, entries=2_000, shared=False)),
]


@dataclass
class Outcome:
    status: int
    answer: str
    seconds: float
    stall: float
    peak_growth_mb: float
    stored_mb: float


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def memory_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def clear_peak(pid: int) -> None:
    try:  # (Linux: "5" resets the peak resident set to the current one)
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        print("(could not reset the peak RSS: the peak growth counts from the start)")


def stored_mb(data_dir: Path) -> float:
    with sqlite3.connect(data_dir / "assistant.sqlite3") as db:
        row = db.execute("SELECT coalesce(sum(length(reading) + length(data)), 0) FROM attachments")
        return float(row.fetchone()[0]) / 1e6


async def stalls(session: aiohttp.ClientSession, base: str, done: asyncio.Event) -> float:
    """The longest a GET /status waits for its answer until `done`."""
    worst = 0.0
    while not done.is_set():
        started = time.monotonic()
        async with session.get(base + "/status") as resp:
            await resp.read()
        worst = max(worst, time.monotonic() - started)
        await asyncio.sleep(0.01)
    return worst


async def upload(
    session: aiohttp.ClientSession, base: str, pid: int, data_dir: Path, name: str, data: bytes
) -> Outcome:
    body = {"thread": "bombs", "name": name, "data": base64.b64encode(data).decode()}
    before = memory_mb(pid, "VmRSS")
    clear_peak(pid)
    done = asyncio.Event()
    pinger = asyncio.ensure_future(stalls(session, base, done))
    await asyncio.sleep(0.05)
    started = time.monotonic()
    async with session.post(base + "/api/assistant/attachments", json=body) as resp:
        answer = await resp.text()
    seconds = time.monotonic() - started
    done.set()
    stall = await pinger
    growth = memory_mb(pid, "VmHWM") - before
    return Outcome(resp.status, answer, seconds, stall, growth, stored_mb(data_dir))


def report(label: str, size: int, got: Outcome) -> None:
    print(
        f"{label}: {size / 1e6:.1f} MB file -> HTTP {got.status} in {got.seconds:.2f} s; "
        f"peak RSS +{got.peak_growth_mb:.0f} MB; stored {got.stored_mb:.1f} MB; longest wait "
        f"of another request {got.stall:.2f} s\n    {got.answer[:200]}"
    )


async def main(args: argparse.Namespace) -> None:
    text_mb = 64 if args.quick else args.text_mb
    pixel_mb = 2000 if args.quick else args.pixel_mb
    provider = await ScriptedProvider().start()
    port = free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="image-bombs-"))
    env = {**os.environ, "LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m",
           "LLM_CONTEXT_WINDOW": "1000000"}  # fmt: skip
    if args.server_path:
        env["PYTHONPATH"] = args.server_path
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--port", str(port),
        "--data-dir", str(data_dir), stdout=asyncio.subprocess.PIPE, env=env,
        stderr=(data_dir / "server.log").open("wb"),
    )  # fmt: skip
    assert proc.stdout is not None
    await proc.stdout.readline()
    base = f"http://127.0.0.1:{port}"
    try:
        timeout = aiohttp.ClientTimeout(total=600)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.get(base + "/api/assistant/provider") as resp:
                await resp.read()  # the store open
            bomb = text_bomb(text_mb)
            text = await upload(session, base, proc.pid, data_dir, "text.png", bomb)
            report(f"text bomb ({text_mb} MB of zTXt)", len(bomb), text)
            bomb = pixel_bomb(pixel_mb)
            pixels = await upload(session, base, proc.pid, data_dir, "pixels.png", bomb)
            report(f"pixel bomb (10000×10000, {pixel_mb:,} MB of IDAT)", len(bomb), pixels)
            exif = []
            for label, bomb in EXIF_BOMBS:
                exif.append(await upload(session, base, proc.pid, data_dir, "exif.webp", bomb))
                report(label, len(bomb), exif[-1])
    finally:
        proc.terminate()
        await proc.wait()
        await provider.stop()
    print(f"TARGET text-bomb refused (4xx): {'yes' if 400 <= text.status < 500 else 'no'}")
    print(f"TARGET text-bomb peak RSS growth < {MEMORY_TARGET} MB: {text.peak_growth_mb:.0f} MB")
    print(f"TARGET pixel-bomb refused (4xx): {'yes' if 400 <= pixels.status < 500 else 'no'}")
    no_5xx = all(e.status < 500 for e in exif)
    print(f"TARGET exif-bomb answered without 5xx: {'yes' if no_5xx else 'no'}")
    exif_peak = max(e.peak_growth_mb for e in exif)
    print(f"TARGET exif-bomb peak RSS growth < {MEMORY_TARGET} MB: {exif_peak:.0f} MB")
    print(f"TARGET exif-bomb time < {EXIF_SECONDS} s: {max(e.seconds for e in exif):.2f} s")
    worst = max([text.stall, pixels.stall] + [e.stall for e in exif])
    print(f"TARGET max stall of another request < {STALL_TARGET} s: {worst:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="64 MB and 2,000 MB bombs")
    parser.add_argument("--text-mb", type=int, default=512)
    parser.add_argument("--pixel-mb", type=int, default=19_500)
    parser.add_argument("--server-path", help="run the server from this folder (a before/after)")
    asyncio.run(main(parser.parse_args()))
