"""Several people on one ComfyUI (issue 39): 20 users, each chatting in 3 threads at once, every
turn through the real server to the scripted provider over real sockets.

    .venv/bin/python bench/teams_load.py [--users 20] [--threads 3] [--turns 6] [--quick]

The assistant runs as its own process (`python -m comfyui_assistant serve`, a data folder of its
own, as inside ComfyUI: one process for everybody), warmed by one turn before the clock starts;
this process is the provider (the scripted OpenAI-compatible server of tests/, answering each
turn in 8 pieces 15 ms apart) and the users.
Each user sends ComfyUI's `comfy-user` header with every request, as ComfyUI's frontend does (one
store for all until the server keys data by user; then each user's own). Each of a user's threads
is one tab: a turn at a time, each turn only what is new (`parentId`, as the panel sends it), so
all users' threads are answered at once.

Printed: first byte (the first answer text, from sending the request) p50/p95/max, whole turns
p95, errors (a status other than 200, an `error` chunk, a stream without its end, a wrong
answer), SQLite busy or locked errors (in the server's log or in any answer), and whether every
thread holds exactly its turns in order afterwards (GET each thread: no message lost, none
interleaved). Exit code 0 even when a target is missed; non-zero only on a crash. `--quick` (CI:
4 users, 3 threads, 2 turns) takes a few seconds; its figures are rough.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
from comfyui_assistant.tests.scripted_provider import Pause, ScriptedProvider, Stream, chunk

ROOT = Path(__file__).resolve().parent.parent
PIECES = 8
GAP = 0.015  # seconds between the provider's pieces
P95_FIRST_BYTE_MS = 500.0  # the target, at 20 users x 3 threads on two cores
SQLITE_TROUBLE = re.compile(r"database is locked|database table is locked|SQLITE_BUSY", re.I)


class Turn(NamedTuple):
    first_byte: float  # ms to the first answer text
    total: float  # ms to [DONE]
    error: str | None = None


def answer_for(body: dict[str, Any]) -> Stream:
    """The provider's answer: names the user's latest words, so a mixed-up answer shows."""
    last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    words = last if isinstance(last, str) else " ".join(p.get("text", "") for p in last)
    said = words.split("<system-reminder>")[0].strip()
    items: list[object] = []
    for i in range(PIECES):
        if i:
            items.append(Pause(GAP))
        items.append(chunk(f"[{said}] " if i == 0 else f"piece{i} "))
    return Stream([*items, chunk(finish_reason="stop")])


def expected_answer(said: str) -> str:
    return f"[{said}] " + "".join(f"piece{i} " for i in range(1, PIECES))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def turn(
    session: aiohttp.ClientSession, base: str, user: str, body: dict[str, Any], said: str
) -> tuple[Turn, str | None]:
    """One turn, read as the browser reads it (to the end of the body, which comes once the
    server has saved the turn: the AI SDK reads to it, not to `[DONE]`); the answer's message id
    (for the next turn)."""
    t0 = time.perf_counter()
    first: float | None = None
    text: list[str] = []
    answer_id = None
    ended: Turn | None = None
    headers = {"Content-Type": "application/json", "comfy-user": user}
    try:
        async with session.post(
            base + "/api/assistant/chat", data=json.dumps(body), headers=headers
        ) as resp:
            if resp.status != 200:
                return Turn(0, 0, f"HTTP {resp.status}: {(await resp.text())[:200]}"), None
            async for raw in resp.content:
                line = raw.decode().rstrip("\r\n")
                if line == "data: [DONE]":
                    total = (time.perf_counter() - t0) * 1000
                    if first is None or "".join(text) != expected_answer(said):
                        return Turn(0, 0, f"wrong answer: {''.join(text)[:80]!r}"), None
                    ended = Turn(first, total)
                if ended is not None or not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                kind = event.get("type")
                if kind == "start":
                    answer_id = event.get("messageId")
                elif kind == "error":
                    return Turn(0, 0, f"error chunk: {event.get('errorText')}"), None
                elif kind == "text-delta":
                    first = (time.perf_counter() - t0) * 1000 if first is None else first
                    text.append(event["delta"])
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        return Turn(0, 0, f"{type(exc).__name__}: {exc}"), None
    return (ended, answer_id) if ended else (Turn(0, 0, "stream ended without [DONE]"), None)


async def tab(
    session: aiohttp.ClientSession, base: str, user: str, thread: str, turns: int
) -> list[Turn]:
    """One thread in one tab: its turns one after the other, each sending what is new."""
    out: list[Turn] = []
    parent: str | None = None
    for n in range(turns):
        said = f"{user} {thread} turn {n}"
        parts = [{"type": "text", "text": said}]
        message = {"id": f"{thread}-u{n}", "role": "user", "parts": parts}
        body: dict[str, Any] = {"id": thread, "messages": [message], "trigger": "submit-message"}
        if parent is not None:
            body.update(parentId=parent, parentIndex=2 * n - 1)
        result, parent = await turn(session, base, user, body, said)
        out.append(result)
        if result.error is not None:
            break
    return out


async def whole(
    session: aiohttp.ClientSession, base: str, user: str, thread: str, turns: int
) -> bool:
    """Whether the stored thread holds exactly its turns, in order."""
    url = f"{base}/api/assistant/threads/{thread}"
    async with session.get(url, headers={"comfy-user": user}) as r:
        if r.status != 200:
            return False
        stored = (await r.json())["messages"]
    texts = ["".join(p.get("text", "") for p in m["parts"] if p["type"] == "text") for m in stored]
    want: list[str] = []
    for n in range(turns):
        said = f"{user} {thread} turn {n}"
        want += [said, expected_answer(said)]
    return texts == want


async def wait_up(
    session: aiohttp.ClientSession, base: str, server: subprocess.Popen[bytes]
) -> None:
    for _ in range(300):
        if server.poll() is not None:
            raise RuntimeError(f"the assistant's server exited with {server.returncode}")
        with contextlib.suppress(aiohttp.ClientError):
            async with session.get(base + "/api/assistant/tools") as r:
                if r.status == 200:
                    return
        await asyncio.sleep(0.1)
    raise RuntimeError("the assistant's server did not answer within 30 s")


def pct(xs: list[float], q: int) -> float:
    if not xs:
        return float("nan")
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


async def run(args: argparse.Namespace) -> None:
    provider = await ScriptedProvider().start()
    provider.responder = answer_for
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryFile() as log:
        env = {
            **os.environ,
            "LLM_BASE_URL": provider.base_url,
            "LLM_MODEL": "scripted-model",
            "LLM_CONTEXT_WINDOW": "32768",
            "COMFY_ASSISTANT_OFFLINE": "1",
        }
        command = [sys.executable, "-m", "comfyui_assistant", "serve", "--port", str(port)]
        server = subprocess.Popen(  # noqa: ASYNC220 (started once; its log goes to a file)
            [*command, "--data-dir", data_dir], env=env, stdout=log, stderr=log, cwd=ROOT.parent
        )
        try:
            connector = aiohttp.TCPConnector(limit=0)
            timeout = aiohttp.ClientTimeout(total=300)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
                await wait_up(session, base, server)
                # warm: the first turn loads the token counter, the node list, the prompt
                warm = await tab(session, base, "warmup", "warmup-t0", 1)
                if warm[0].error is not None:
                    raise RuntimeError(f"the warm-up turn failed: {warm[0].error}")
                tabs = [
                    (f"user{u:02d}", f"user{u:02d}-t{t}")
                    for u in range(args.users)
                    for t in range(args.threads)
                ]
                t0 = time.perf_counter()
                results = await asyncio.gather(
                    *(tab(session, base, user, thread, args.turns) for user, thread in tabs)
                )
                wall = time.perf_counter() - t0
                kept = await asyncio.gather(
                    *(whole(session, base, user, thread, args.turns) for user, thread in tabs)
                )
        finally:
            server.terminate()
            server.wait(10)
            await provider.stop()
        log.seek(0)
        server_log = log.read().decode(errors="replace")
    report(args, [r for rs in results for r in rs], sum(kept), len(tabs), wall, server_log)


def report(
    args: argparse.Namespace, turns: list[Turn], kept: int, threads: int, wall: float, log: str
) -> None:
    done = [t for t in turns if t.error is None]
    errors = [t.error for t in turns if t.error is not None]
    missing = threads * args.turns - len(turns)  # (a tab stops at its first error)
    busy = len(SQLITE_TROUBLE.findall(log)) + sum(bool(SQLITE_TROUBLE.search(e)) for e in errors)
    first = [t.first_byte for t in done]
    print(
        f"{args.users} users x {args.threads} threads x {args.turns} turns: {len(turns)} turns "
        f"in {wall:.1f} s ({len(turns) / wall:.0f} turns/s), the answer {PIECES} pieces "
        f"{GAP * 1000:.0f} ms apart"
    )
    print(
        f"first byte ms: p50 {pct(first, 50):.0f}, p95 {pct(first, 95):.0f}, "
        f"max {max(first, default=float('nan')):.0f}; whole turn ms p95 "
        f"{pct([t.total for t in done], 95):.0f}"
    )
    print(f"errors: {len(errors)} (turns not sent after one: {missing})")
    for error in sorted(set(errors))[:5]:
        print(f"  {error}")
    print(f"SQLite busy/locked: {busy}; threads holding exactly their turns: {kept}/{threads}")
    p95 = pct(first, 95)
    verdict = "ok" if p95 < P95_FIRST_BYTE_MS else "MISSED"
    print(f"TARGET p95_first_byte_ms={p95:.0f} (< {P95_FIRST_BYTE_MS:.0f}) {verdict}")
    failed = len(errors) + missing
    print(f"TARGET errors={failed} (0) {'ok' if failed == 0 else 'MISSED'}")
    print(f"TARGET sqlite_busy={busy} (0) {'ok' if busy == 0 else 'MISSED'}")
    print(f"TARGET threads_whole={kept}/{threads} {'ok' if kept == threads else 'MISSED'}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--threads", type=int, default=3, help="threads (tabs) per user")
    parser.add_argument("--turns", type=int, default=6, help="turns in each thread")
    parser.add_argument("--quick", action="store_true", help="4 users, 3 threads, 2 turns (CI)")
    args = parser.parse_args(argv)
    if args.quick:
        args.users, args.threads, args.turns = 4, 3, 2
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
