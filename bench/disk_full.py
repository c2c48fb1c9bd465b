"""What each write route answers on a full disk, and whether deleting a thread goes through: a
real standalone server process whose data directory is a 24 MB tmpfs (mounting one needs
root), filled up after four threads were stored; then filled again (a delete goes through
again), and once more after a restart.

    .venv/bin/python bench/disk_full.py [--server-path DIR] [--quick]

`--server-path DIR` runs the server from DIR/comfyui_assistant (e.g. `git archive` of an
earlier commit), for a before/after. Prints one line per route: its status and error, then
the delete's, a write after the delete, and a chat once the disk has room again, then TARGET
lines: every write answers 507 (a chat: an error chunk), the delete goes through, writes work
again once there is room, a delete goes through when the disk is full a second time, and
after a restart. It takes seconds: `--quick` is the same run (CI).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

import aiohttp
from comfyui_assistant.tests.scripted_provider import ScriptedProvider, text_reply

WRITES: list[tuple[str, str, dict[str, Any]]] = [
    ("PATCH", "/api/assistant/threads/kept", {"title": "renamed"}),
    ("POST", "/api/assistant/threads", {"id": "new"}),
    ("POST", "/api/assistant/user-context/rules", {"text": "be brief"}),
    ("PUT", "/api/assistant/user-context/soul", {"text": "x" * 10_000}),
    ("PUT", "/api/assistant/provider", {"model": "other"}),
    (
        "POST",
        "/api/assistant/user-context/skills",
        {"name": "A skill", "description": "d", "body": "b"},
    ),
]


TARGETS = ("full_disk_writes_507", "delete_goes_through", "writes_recover",
           "delete_on_second_full_disk", "delete_after_restart")  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fill(disk: Path, name: str) -> Path:
    """The journal emptied (no room left in it), then every byte left on the disk taken."""
    with closing(sqlite3.connect(disk / "data" / "assistant.sqlite3")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    filler = disk / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\xff" * 65536)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
    finally:
        os.close(fd)
    return filler


async def chat(session: aiohttp.ClientSession, base: str, thread: str, text: str) -> str:
    message = {"id": f"u-{thread}", "role": "user", "parts": [{"type": "text", "text": text}]}
    body = {"id": thread, "messages": [message], "trigger": "submit-message"}
    async with session.post(base + "/api/assistant/chat", json=body) as resp:
        raw = await resp.text()
    if resp.status != 200:
        return f"HTTP {resp.status} {raw[:160]}"
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
    errors = [e["errorText"] for e in events if e["type"] == "error"]
    texts = "".join(e["delta"] for e in events if e["type"] == "text-delta")
    return f"HTTP 200, error chunk: {errors[0][:160]}" if errors else f"HTTP 200, answer {texts!r}"


async def call(session: aiohttp.ClientSession, base: str, method: str, path: str, body: Any) -> str:
    async with session.request(method, base + path, json=body) as resp:
        return f"{resp.status} {(await resp.text())[:160]}"


async def serve(disk: Path, env: dict[str, str]) -> tuple[asyncio.subprocess.Process, str]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--port", str(port),
        "--data-dir", str(disk / "data"), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    await proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}"


async def stop(proc: asyncio.subprocess.Process) -> None:
    proc.terminate()
    await proc.wait()


async def run(disk: Path, server_path: str | None) -> None:
    provider = await ScriptedProvider().start()
    provider.responder = lambda body: text_reply("noted")
    env = {**os.environ, "LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m"}
    if server_path:
        env["PYTHONPATH"] = server_path
    proc, base = await serve(disk, env)
    try:
        async with aiohttp.ClientSession() as session:
            await chat(session, base, "kept", "a small thread")
            for big in ("big", "big2", "big3"):
                await chat(session, base, big, "a long paste: " + "lorem ipsum " * 150_000)
            filler = fill(disk, "filler")
            print(f"disk full ({os.statvfs(disk).f_bavail} blocks free):")
            said = []
            for method, path, body in WRITES:
                said.append(await call(session, base, method, path, body))
                print(f"  {method} {path}: {said[-1]}")
            full_chat = await chat(session, base, "another", "hello")
            print(f"  POST /api/assistant/chat: {full_chat}")
            delete = await call(session, base, "DELETE", "/api/assistant/threads/big", None)
            print(f"  DELETE /api/assistant/threads/big: {delete}")
            method, path, body = WRITES[0]
            print(f"  then {method} {path}: {await call(session, base, method, path, body)}")
            filler.unlink()
            again = await chat(session, base, "after", "hello")
            print(f"room again: POST /api/assistant/chat: {again}")
            fill(disk, "filler2")
            second = await call(session, base, "DELETE", "/api/assistant/threads/big2", None)
            print(f"disk full again: DELETE /api/assistant/threads/big2: {second}")
        await stop(proc)
        proc, base = await serve(disk, env)
        async with aiohttp.ClientSession() as session:
            fill(disk, "filler3")
            third = await call(session, base, "DELETE", "/api/assistant/threads/big3", None)
            print(f"restarted, disk full: DELETE /api/assistant/threads/big3: {third}")
        said_507 = all(s.startswith("507") for s in said) and "error chunk" in full_chat
        passed = [said_507, delete.startswith("200"), "answer" in again,
                  second.startswith("200"), third.startswith("200")]  # fmt: skip
        for name, ok in zip(TARGETS, passed, strict=True):
            print(f"TARGET {name}: {'PASS' if ok else 'FAIL'}")
    finally:
        await stop(proc)
        await provider.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-path", help="run the server from this folder (a before/after)")
    parser.add_argument("--quick", action="store_true", help="the same run (it takes seconds)")
    args = parser.parse_args()
    disk = Path(tempfile.mkdtemp(prefix="disk-full-"))
    mount = ["mount", "-t", "tmpfs", "-o", "size=24m,mode=0700", "tmpfs", str(disk)]
    done = subprocess.run(mount, capture_output=True, text=True)
    if done.returncode != 0:  # (said in the TARGET lines, so a CI without root still runs it)
        print(f"cannot mount a 24 MB tmpfs (run as root): {done.stderr.strip()}")
        for name in TARGETS:
            print(f"TARGET {name}: NOT RUN (no tmpfs)")
        disk.rmdir()
        return
    try:
        asyncio.run(run(disk, args.server_path))
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
        disk.rmdir()


if __name__ == "__main__":
    main()
