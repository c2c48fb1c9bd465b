"""The standalone server as a real process: start-up failures are one clear line, the host
names it answers to, and what a `kill -9` in the middle of an answer leaves for the restart."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import pytest
from comfyui_assistant.core.store.store import _unavailable

from .helpers import chat_body, user
from .scripted_provider import Pause, Stream, chunk

PREFIX = "ComfyUI Assistant cannot start: "


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, proc: asyncio.subprocess.Process, port: int) -> None:
        self.proc, self.port = proc, port
        self.base = f"http://127.0.0.1:{port}"

    @classmethod
    async def start(cls, data_dir: Path, *extra: str, env: dict[str, str] | None = None) -> Server:
        port = _free_port()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "comfyui_assistant", "serve", "--port", str(port),
            "--data-dir", str(data_dir), *extra,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"listening" in line, line + (await proc.stderr.read() if proc.stderr else b"")
        return cls(proc, port)

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()


async def _failed_start(data_dir: Path, *extra: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--data-dir", str(data_dir), *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), err.decode()
    return lines[0][len(PREFIX) :]


async def test_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        message = await _failed_start(tmp_path, "--port", str(port))
    assert (
        message == f"port {port} on 127.0.0.1 is already in use — stop what uses it, or use --port"
    )


@pytest.mark.parametrize("port", ["99999", "-1", "65536", "80x"])
async def test_a_port_out_of_range_is_one_line(tmp_path, port):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--data-dir", str(tmp_path),
        f"--port={port}", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2 and out == b""
    assert b"Traceback" not in err
    assert err.decode().splitlines()[-1] == (
        "python -m comfyui_assistant serve: error: argument --port: must be a number from 0 "
        f"to 65535 (0: any free port), not '{port}'"
    )


async def test_port_0_prints_the_port_the_system_chose(tmp_path):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "serve", "--data-dir", str(tmp_path),
        "--port", "0", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        prefix = "ComfyUI Assistant listening on http://127.0.0.1:"
        assert line.startswith(prefix) and line.endswith("/\n"), line
        port = int(line[len(prefix) : -2])
        assert port > 0
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/status") as resp,
        ):
            assert resp.status == 200
    finally:
        proc.terminate()
        await proc.wait()


async def test_an_unusable_data_directory_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    message = await _failed_start(blocker / "data", "--port", str(_free_port()))
    assert message.startswith(f"cannot write to the data directory {blocker / 'data'}")
    assert "--data-dir" in message


async def test_a_corrupt_database_is_named_and_never_overwritten(tmp_path):
    database = tmp_path / "assistant.sqlite3"
    garbage = os.urandom(8192)
    database.write_bytes(garbage)
    message = await _failed_start(tmp_path, "--port", str(_free_port()))
    assert message.startswith(f"{database} is not a readable database")
    assert "left untouched" in message
    assert database.read_bytes() == garbage
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assistant.sqlite3"]


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "is full (No space left on device)"),
        (OSError(errno.EROFS, "Read-only file system"), "is on a read-only file system"),
        (OSError(errno.EACCES, "Permission denied"), "(Permission denied) — fix its permissions"),
    ],
)
def test_what_each_file_system_failure_says(error, says, tmp_path):
    """(Running as root, a test cannot make a folder read-only or a disk full; the errors the
    operating system gives then are mapped here.)"""
    message = str(_unavailable(error, tmp_path / "assistant.sqlite3"))
    assert says in message and "\n" not in message


async def test_allow_host_adds_a_name_and_nothing_else(tmp_path):
    server = await Server.start(tmp_path / "data", "--allow-host", "my.box")
    try:
        async with aiohttp.ClientSession() as session:
            statuses = []
            for host in ("my.box", "other.box", f"127.0.0.1:{server.port}", "localhost"):
                async with session.get(
                    server.base + "/api/assistant/provider", headers={"Host": host}
                ) as resp:
                    statuses.append(resp.status)
        assert statuses == [200, 403, 200, 200]
    finally:
        await server.stop()


async def test_kill_9_while_streaming_keeps_what_was_shown(tmp_path, provider):
    """The answer streams; the server dies with SIGKILL after the user saw its first words; the
    restarted server has them, marked interrupted."""
    provider.enqueue(
        Stream([chunk("The first words "), chunk("of a long answer"), Pause(60), chunk("never")])
    )
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "32768"}
    data = tmp_path / "data"
    server = await Server.start(data, env=env)
    shown = ""
    async with (
        aiohttp.ClientSession() as session,
        session.post(server.base + "/api/assistant/chat", json=chat_body(user("hi"))) as resp,
    ):
        async for line in resp.content:
            if line.startswith(b"data: {"):
                event = json.loads(line[6:])
                if event["type"] == "text-delta":
                    shown += event["delta"]
            if shown == "The first words of a long answer":
                break
        await asyncio.sleep(1.5)  # the answer so far is written once a second
        server.proc.send_signal(signal.SIGKILL)
        await server.proc.wait()
    restarted = await Server.start(data, env=env)
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(restarted.base + "/api/assistant/threads/thread-1") as resp,
        ):
            thread = await resp.json()
    finally:
        await restarted.stop()
    answer = thread["messages"][-1]
    assert answer["role"] == "assistant"
    texts = [p["text"] for p in answer["parts"] if p["type"] == "text"]
    assert texts == ["The first words of a long answer"]
    assert answer["metadata"]["status"] == "interrupted"


SECRET = "s3cr3t-TOKEN"
REFUSED_URLS = {  # each refused LLM_BASE_URL form, with a secret where it may be written
    "wrong scheme": (f"ftp://llm.example/v1/{SECRET}", "must be an http(s) URL such as "
                     "http://127.0.0.1:11434/v1 (got ftp://llm.example)"),
    "port out of range": (f"http://127.0.0.1:99999/v1/{SECRET}",
                          "port must be between 1 and 65535 (got 99999)"),
    "port not a number": (f"http://127.0.0.1:{SECRET}/v1", "is not a URL the HTTP client "
                          "accepts (Invalid port)"),
    "no scheme": (f"127.0.0.1:8080/v1/{SECRET}", "must start with http:// or https://"),
    "query": (f"http://127.0.0.1:8080/v1?key={SECRET}", "must not have a query string"),
    "userinfo": (f"http://user:{SECRET}@127.0.0.1:8080/v1", "must not contain a user name"),
}  # fmt: skip


@pytest.mark.parametrize("form", list(REFUSED_URLS))
async def test_a_refused_base_url_is_named_never_quoted(tmp_path, form):
    """The start-up line and Settings' problem text say what is wrong with LLM_BASE_URL, never
    its path, query or password (at most its scheme and host)."""
    url, says = REFUSED_URLS[form]
    server = await Server.start(tmp_path, env={"LLM_BASE_URL": url, "LLM_API_KEY": "sk-k"})
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(server.base + "/api/assistant/provider") as resp,
        ):
            settings = await resp.text()
    finally:
        await server.stop()
    assert server.proc.stdout is not None and server.proc.stderr is not None
    console = (await server.proc.stdout.read() + await server.proc.stderr.read()).decode()
    (problem,) = json.loads(settings)["problems"]
    assert problem.startswith("LLM_BASE_URL is ignored: the value") and says in problem, problem
    warned = [line for line in console.splitlines() if "LLM_BASE_URL is ignored" in line]
    assert len(warned) == 1 and says in warned[0], console
    assert SECRET not in console and SECRET not in settings
