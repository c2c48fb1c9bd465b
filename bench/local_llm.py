"""What a local-model user waits for: a 30-turn session through our server against a real
llama.cpp `llama-server`, measured per turn from the server's own timings.

    .venv/bin/python bench/local_llm.py [--llama URL | --local-llm PATH] [--tools] [--turns 30]
        [--servers defaults,one-slot,swa-full] [--ctx 8192] [--max-output 96] [--json FILE]
        [--quick]

With `--llama URL` it uses a running llama-server; else it starts one per configuration with
the `local-llm` tool (`--local-llm`, default `$LOCAL_LLM` or `../shared/tools/local-llm` beside
the project; `--tools` serves a chat template that renders tools), on a free port of 8080-8089:
its defaults (`-np` unset: 4 slots sharing one cache of `-c` tokens), one slot (`-np 1`) and
`--swa-full` (Gemma's sliding-window cache kept whole). Each session prints the turns that
failed, were retried (the context report's "retried: ...") or planned with another window than
the first turn's (TARGET: none; issue 36: the shared cache filled once and a 6,144 window was
learned for good). Between our server and llama-server
sits a recording proxy: for every model call it keeps what llama-server reported —
`timings.prompt_n` (tokens it had to process: what the user waits for), `timings.cache_n`
(tokens reused from its prefix cache), `usage.prompt_tokens` — and whether it was the
summarizer (a non-streamed call).

The session: short requests, a long paste every few turns (so an 8K window needs compaction),
each request the whole thread so far as the panel sends it. Per turn it prints the prompt
size, the tokens re-processed, the new user message's own size (llama-server's /tokenize),
time to the first byte and to the first text, the longest silence in the stream, and whether a
summary was made. Every `--run-every` turns the answer ends with a queueWorkflow call and the
panel sends the thread again with its result (issue 25): that request's "new message" is what it
added to the one before (the call and its result, rendered and tokenized by the server).
TARGET lines (from issue 12): a steady turn re-processes at most its new user
message plus what the turn adds (the reminder block) plus 40 tokens (a run result: at most what
it added plus 40); a compaction turn never
re-processes the system prompt and tools; the first byte of every response within 1 s; no
stretch over 15 s without a visible part. Exit code 0 even when a target is missed.

`--quick` (what CI runs, about 15 s): 12 turns, and without `--llama` or `--local-llm` the
llama-server stand-in (tests/llama_standin.py: no model, a short fixed answer, ChatML, a
tokenizer of its own and a prefix cache per slot; 4 slots sharing its cache, requests that take
time and overlap, then one slot) in place of a real server; the output says so. Its
re-processed and reused tokens are honest prefix-cache arithmetic, its times are not a model's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from comfyui_assistant.bench.lib.chat_drive import KNOBS
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.standalone import WARMING, create_app
from comfyui_assistant.tests.llama_standin import LlamaStandin

ROOT = Path(__file__).resolve().parent.parent
PASTE = "Here is the log of my last run, for reference:\n" + "".join(
    f"[{i:03d}] KSampler step {i}/30 seed=1234 cfg=7.0 sampler=euler scheduler=normal "
    f"denoise=1.0 latent=1024x1024 vram=5.2GB elapsed={i * 0.8:.1f}s\n"
    for i in range(60)
)
REQUESTS = [
    "Make the image a bit warmer.",
    "Which sampler would you use for portraits?",
    "Set the steps to 28.",
    "What does the scheduler change?",
    "Use seed 42 from now on.",
    "Can you explain CFG in one sentence?",
    "Switch to the karras scheduler.",
]


@dataclass
class Call:
    """One model call as llama-server reported it."""

    stream: bool
    messages: int
    last_user: str = ""  # the request's last user message as sent (reminder block included)
    prompt_tokens: int | None = None
    prompt_n: int | None = None
    cache_n: int | None = None


@dataclass
class Turn:
    turn: int
    paste: bool
    new_message_tokens: int
    calls: list[Call] = field(default_factory=list)
    ttfb_ms: float = 0.0
    ttft_ms: float | None = None
    longest_silence_s: float = 0.0
    error: str | None = None
    head_tokens: int = 0  # the chat request's system message and tools, as the server renders
    dropped: int = 0  # blocks the priority window left out (the context report)
    summarized: int = 0  # UI messages under the running summary (the context report)
    run: bool = False  # the panel's request after a run: the answer goes on with its result
    window: int = 0  # the window the turn planned with (the context report) ...
    window_source: str = ""  # ... and where it came from ("provider", "provider error", ...)
    retried: list[str] = field(default_factory=list)  # the report's "retried: ..." limits

    @property
    def chat(self) -> Call | None:
        streamed = [c for c in self.calls if c.stream]
        return streamed[0] if streamed else None

    @property
    def made_summary(self) -> bool:
        return any(not c.stream for c in self.calls)


class Proxy:
    """Forwards everything to llama-server and records each chat completion's timings."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.calls: list[Call] = []
        self.heads: dict[int, tuple[Any, Any]] = {}  # call index -> its system message, tools
        self.last_chat: tuple[Any, Any] = (
            [],
            None,
        )  # the latest streamed request's messages, tools
        self.session: aiohttp.ClientSession | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        assert self.session is not None
        body = await request.read()
        url = self.upstream + request.rel_url.path_qs
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type",)}
        call = None
        if request.path.endswith("/chat/completions"):
            sent = json.loads(body)
            messages = sent.get("messages", [])
            last = messages[-1] if messages else {}
            content = last.get("content") if last.get("role") == "user" else ""
            call = Call(
                bool(sent.get("stream")), len(messages), content if isinstance(content, str) else ""
            )
            self.heads[len(self.calls)] = (messages[0] if messages else None, sent.get("tools"))
            if call.stream:
                self.last_chat = (messages, sent.get("tools"))
            self.calls.append(call)
        async with self.session.request(request.method, url, data=body, headers=headers) as up:
            with contextlib.suppress(ConnectionResetError):  # our server gave up on the call
                return await self._relay(request, up, call)
            return web.Response(status=499)

    async def _relay(
        self, request: web.Request, up: aiohttp.ClientResponse, call: Call | None
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=up.status,
            headers={"Content-Type": up.headers.get("Content-Type", "application/json")},
        )
        await response.prepare(request)
        tail = b""
        async for piece in up.content.iter_any():
            await response.write(piece)
            tail = (tail + piece)[-8192:]
            if call is not None:
                _note_timings(call, tail)
        await response.write_eof()
        return response


def _note_timings(call: Call, tail: bytes) -> None:
    """The timings and usage in the last chunk (or the whole JSON answer) seen so far."""
    text = tail.decode("utf-8", "replace")
    for line in reversed(text.replace("data: ", "\n").splitlines()):
        line = line.strip()
        if '"timings"' not in line:
            continue
        with contextlib.suppress(ValueError):
            found = json.loads(line)
            timings, usage = found.get("timings") or {}, found.get("usage") or {}
            call.prompt_n, call.cache_n = timings.get("prompt_n"), timings.get("cache_n")
            call.prompt_tokens = usage.get("prompt_tokens")
            return


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_for(url: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(url + "/health") as r:
                    if r.status == 200:
                        return
            await asyncio.sleep(0.5)
    raise SystemExit(f"llama-server at {url} did not become healthy")


async def tokens_of(session: aiohttp.ClientSession, llama: str, text: str) -> int:
    async with session.post(llama + "/tokenize", json={"content": text}) as r:
        return len((await r.json())["tokens"])


async def head_tokens(session: aiohttp.ClientSession, llama: str, head: tuple[Any, Any]) -> int:
    """What the system message and the tools of a request take as the server renders them,
    with the opening of the next turn: the tokens two requests that differ only after them
    share (rendered and tokenized by the server, the common prefix of two such requests)."""
    system, tools = head
    if system is None:
        return 0
    rendered = []
    for text in ("a", "b"):
        body: dict[str, Any] = {"messages": [system, {"role": "user", "content": text}]}
        if tools:
            body["tools"] = tools
        async with session.post(llama + "/apply-template", json=body) as r:
            prompt = (await r.json())["prompt"]
        async with session.post(llama + "/tokenize", json={"content": prompt}) as r:
            rendered.append((await r.json())["tokens"])
    first, second = rendered
    pairs = enumerate(zip(first, second, strict=False))
    return next((i for i, (x, y) in pairs if x != y), len(first))


async def rendered_tokens(
    session: aiohttp.ClientSession, llama: str, messages: list[Any], tools: Any
) -> list[int]:
    body: dict[str, Any] = {"messages": messages, **({"tools": tools} if tools else {})}
    async with session.post(llama + "/apply-template", json=body) as r:
        prompt = (await r.json())["prompt"]
    async with session.post(llama + "/tokenize", json={"content": prompt}) as r:
        tokens: list[int] = (await r.json())["tokens"]
        return tokens


async def added_tokens(
    session: aiohttp.ClientSession, llama: str, before: list[Any], after: list[Any], tools: Any
) -> int:
    """The tokens of `after` past what it shares with `before` (both as the server renders and
    tokenizes them): what a request added to the one before it."""
    old = await rendered_tokens(session, llama, before, tools)
    new = await rendered_tokens(session, llama, after, tools)
    pairs = enumerate(zip(old, new, strict=False))
    return len(new) - next((i for i, (x, y) in pairs if x != y), min(len(old), len(new)))


VISIBLE = (
    "text-delta",
    "reasoning-delta",
    "tool-input-start",
    "tool-output-available",
    "data-status",
    "error",
)  # chunks the panel shows


async def one_turn(
    session: aiohttp.ClientSession, app: str, thread: list[dict[str, Any]], turn: Turn
) -> str:
    """POST /api/assistant/chat; the answer's text. Sets the turn's times (to the first byte, to
    the first text, the longest stretch without a visible part from the request on), its error
    and what its context report says was left out or summarized."""
    start = time.monotonic()
    body = {"id": "bench-thread", "messages": thread, "trigger": "submit-message"}
    text, error, first_text, first = "", None, None, None
    last_visible, silence = start, 0.0
    async with session.post(app + "/api/assistant/chat", json=body) as response:
        buffer = b""
        async for piece in response.content.iter_any():
            now = time.monotonic()
            first = first or now
            buffer += piece
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                data = event.decode()
                if not data.startswith("data: ") or data == "data: [DONE]":
                    continue  # (keep-alive comments, the end)
                chunk = json.loads(data.removeprefix("data: "))
                if chunk["type"] in VISIBLE:
                    silence = max(silence, now - last_visible)
                    last_visible = now
                if chunk["type"] == "text-delta":
                    first_text = first_text or now
                    text += chunk["delta"]
                elif chunk["type"] == "error":
                    error = chunk["errorText"]
                elif chunk["type"] == "data-context":
                    report = chunk["data"]
                    counts = report["counts"]
                    turn.dropped, turn.summarized = counts["dropped"], counts["summarized"]
                    turn.window = report["window"]["tokens"]
                    turn.window_source = report["window"]["source"]
                    retried = [x for x in report["limits"] if x.startswith("retried")]
                    turn.retried = sorted({*turn.retried, *retried})
    turn.ttfb_ms = ((first or time.monotonic()) - start) * 1000
    turn.ttft_ms = None if first_text is None else (first_text - start) * 1000
    turn.longest_silence_s, turn.error = silence, error
    return text


async def session_run(args: argparse.Namespace, llama: str) -> list[Turn]:
    proxy = Proxy(llama)
    proxy.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
    server = web.Application()
    server.router.add_route("*", "/{tail:.*}", proxy.handle)
    proxy_runner = web.AppRunner(server)
    await proxy_runner.setup()
    proxy_port = free_port()
    await web.TCPSite(proxy_runner, "127.0.0.1", proxy_port).start()
    data = Path(tempfile.mkdtemp(prefix="bench-local-llm-"))
    environ = {
        "LLM_BASE_URL": f"http://127.0.0.1:{proxy_port}/v1",
        "LLM_MAX_OUTPUT_TOKENS": str(args.max_output),
        "LLM_TIMEOUT_SECONDS": "600",
        "LLM_SYSTEM_PROMPT_MODE": args.mode,
        # (the engine's knobs, from the bench's environment: to compare settings)
        **{k: v for k, v in os.environ.items() if k.startswith(KNOBS)},
    }
    app = create_app(ServiceOptions(data_dir=data, environ=environ))
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    # the start-up warm-up (tokenizer tables, node data) finishes before the first message,
    # as when a person opens the panel after ComfyUI has started
    await app[WARMING]
    base = f"http://127.0.0.1:{port}"
    turns: list[Turn] = []
    thread: list[dict[str, Any]] = []
    mark = 0
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
            for i in range(args.turns):
                paste = i % args.paste_every == args.paste_every - 1
                request = REQUESTS[i % len(REQUESTS)]
                text = f"{PASTE}\n{request}" if paste else request
                thread.append(
                    {"id": f"u{i}", "role": "user", "parts": [{"type": "text", "text": text}]}
                )
                turn = Turn(i + 1, paste, 0)
                before = mark  # (a summary made after the last answer belongs to this turn)
                answer = await one_turn(session, base, thread, turn)
                turn.calls = proxy.calls[before:]
                chat = turn.chat
                if chat is not None:
                    head = proxy.heads[before + turn.calls.index(chat)]
                    turn.head_tokens = await head_tokens(session, llama, head)
                mark = len(proxy.calls)
                sent_text = chat.last_user if chat and chat.last_user else text
                turn.new_message_tokens = await tokens_of(session, llama, sent_text)
                turns.append(turn)
                parts = [{"type": "step-start"}, {"type": "text", "text": answer or "(no answer)"}]
                if answer:
                    thread.append({"id": f"a{i}", "role": "assistant", "parts": parts})
                print(row(turn), flush=True)
                if answer and args.run_every and i % args.run_every == RUN_AT:
                    run = await run_turn(session, base, llama, thread, proxy, i)
                    mark = len(proxy.calls)
                    turns.append(run)
                    print(row(run), flush=True)
    finally:
        await runner.cleanup()
        await proxy_runner.cleanup()
        await proxy.session.close()
    return turns


RUN_AT = 3  # the turns (modulo --run-every) after which the model "ran the workflow"


def run_result(i: int) -> dict[str, Any]:
    """A queueWorkflow result as the panel returns it (ui/src/tools/queueWorkflow.ts)."""
    names = [f"ComfyUI_{i:05d}_{k}.png [output]" for k in range(2)]
    return {
        "ok": True,
        "promptId": f"5d2c1f0e-{i:04d}-4b7a-9c3e-2f1a0b9d8c7e",
        "seconds": 41.3,
        "outputs": {"9": {"images": names}},
        "cachedNodes": 3,
        "looked": [f"{n}: PNG 1024×1024, 1 frame, pixels checked" for n in names],
    }


async def run_turn(
    session: aiohttp.ClientSession,
    base: str,
    llama: str,
    thread: list[dict[str, Any]],
    proxy: Proxy,
    i: int,
) -> Turn:
    """The model's last answer ends with a queueWorkflow call; the panel ran it and sends the
    thread again with the result (the answer goes on): what the server re-processes then. Its
    "new message" is what the request added to the one before and the answer to it (the call
    and its result, as the server renders and tokenizes them)."""
    earlier, tools = proxy.last_chat
    answered = [*earlier, {"role": "assistant", "content": thread[-1]["parts"][-1]["text"]}]
    result, call = run_result(i), f"call_run_{i}"
    part = {"type": "tool-queueWorkflow", "toolCallId": call, "state": "output-available",
            "input": {"waitForResult": True}, "output": result}  # fmt: skip
    thread[-1]["parts"].append(part)
    turn = Turn(i + 1, False, 0, run=True)
    before = len(proxy.calls)
    answer = await one_turn(session, base, thread, turn)
    turn.calls = proxy.calls[before:]
    now, _ = proxy.last_chat
    turn.new_message_tokens = await added_tokens(session, llama, answered, now, tools)
    thread[-1]["parts"] += [
        {"type": "step-start"},
        {"type": "text", "text": answer or "(no answer)"},
    ]
    return turn


HEADER = (
    f"{'turn':>4} {'paste':>5} {'new msg':>7} {'prompt':>7} {'re-proc':>7} {'reused':>7} "
    f"{'ttfb ms':>8} {'ttft ms':>8} {'silence s':>9}  notes"
)


def row(t: Turn) -> str:
    c = t.chat
    cells = [c.prompt_tokens, c.prompt_n, c.cache_n] if c else [None] * 3
    shown = [f"{x:>7}" if x is not None else f"{'-':>7}" for x in cells]
    ttft = f"{t.ttft_ms:>8.0f}" if t.ttft_ms is not None else f"{'-':>8}"
    notes = []
    if t.made_summary:
        s = [x for x in t.calls if not x.stream]
        notes.append(f"summary ({sum(x.prompt_n or 0 for x in s)} tokens processed)")
    if len([x for x in t.calls if x.stream]) > 1:
        notes.append(f"{len([x for x in t.calls if x.stream])} chat calls (retry)")
    if t.run:
        notes.append("run result (the answer goes on)")
    if t.retried:
        notes.append("; ".join(t.retried))
    if t.window_source == "provider error":
        notes.append(f"window {t.window} (learned from an error)")
    if t.error:
        notes.append(f"error: {t.error[:80]}")
    return (
        f"{t.turn:>4} {'yes' if t.paste else '':>5} {t.new_message_tokens:>7} {' '.join(shown)} "
        f"{t.ttfb_ms:>8.0f} {ttft} {t.longest_silence_s:>9.1f}  {'; '.join(notes)}"
    )


def moved(turns: list[Turn], i: int) -> bool:
    """Whether turn i's history start moved: a summary made for it, or the priority window
    leaving out more (a long paste pushed old messages out): the prompt changes from there."""
    t, before = turns[i], turns[i - 1]
    return t.made_summary or t.summarized != before.summarized or t.dropped > before.dropped


def incidents(turns: list[Turn], server: str) -> list[str]:
    """The turns that failed, were retried or planned with another window than the first
    turn's (TARGET: none)."""
    failed = [t.turn for t in turns if t.error]
    retried = [t.turn for t in turns if t.retried or len([c for c in t.calls if c.stream]) > 1]
    first = turns[0].window if turns else 0
    changed = [f"{t.turn}: {t.window} ({t.window_source})" for t in turns if t.window != first]
    ok = not (failed or retried or changed)
    return [
        f"turns that failed: {failed}; retried: {retried}; planned with another window than "
        f"{first}: {changed}",
        f"TARGET server={server} no_turn_failed_retried_or_changed_window: "
        f"{'PASS' if ok else 'FAIL'} ({len(failed)} failed, {len(retried)} retried, "
        f"{len(changed)} with another window)",
    ]


def verdicts(turns: list[Turn], slack: int, server: str = "given") -> list[str]:
    """The session's figures and TARGET lines (named `server=<configuration>`)."""
    lines = _verdicts(turns, slack) + incidents(turns, server)
    return [
        line.replace("TARGET ", f"TARGET server={server} ", 1)
        if line.startswith("TARGET ") and not line.startswith("TARGET server=")
        else line
        for line in lines
    ]


def _verdicts(turns: list[Turn], slack: int) -> list[str]:
    steady = [
        t
        for i, t in enumerate(turns)
        if i and t.chat and t.chat.prompt_n is not None and not moved(turns, i)
    ]
    pushed = [t.turn for i, t in enumerate(turns) if i and not t.made_summary and moved(turns, i)]
    over = [
        t.turn
        for t in steady
        if (t.chat.prompt_n or 0) > t.new_message_tokens + slack  # type: ignore[union-attr]
    ]
    excess = [(t.chat.prompt_n or 0) - t.new_message_tokens for t in steady]  # type: ignore[union-attr]
    compaction = [t for t in turns if t.made_summary and t.chat and t.chat.prompt_n is not None]
    # (a server resumes from a prompt checkpoint a few tokens before where the requests part:
    # Gemma 3's sliding-window attention cannot cut its cache anywhere; CHECKPOINT_SLACK)
    kept = [(t.turn, t.chat.cache_n or 0, t.head_tokens) for t in compaction]  # type: ignore[union-attr]
    whole = [turn for turn, reused, head in kept if reused < head - CHECKPOINT_SLACK]
    slow = [t.turn for t in turns if t.ttfb_ms > 1000]
    silent = [t.turn for t in turns if t.longest_silence_s > 15]
    median = statistics.median(excess) if excess else 0
    runs = [t for t in steady if t.run]
    runs_over = [t.turn for t in runs if t.turn in over]
    return [
        f"steady turns: {len(steady)}, re-processed beyond the new message: median {median:.0f}, "
        f"max {max(excess, default=0)} tokens; turns whose new message pushed old ones out of "
        f"the window (re-processed from there): {pushed}",
        f"TARGET steady_reprocess_within_new_message_plus_{slack}: "
        f"{'PASS' if not over else 'FAIL'} (over on turns {over})",
        f"TARGET run_result_reprocess_within_result_plus_{slack}: "
        f"{'PASS' if runs and not runs_over else 'FAIL'} ({len(runs)} run results: re-processed "
        + ", ".join(f"{t.chat.prompt_n}/{t.new_message_tokens}" for t in runs if t.chat)
        + f" of call and result; over on {runs_over})",
        f"TARGET compaction_keeps_system_prompt_cached: {'PASS' if not whole else 'FAIL'} "
        f"({len(compaction)} compaction turns; reused of the system prompt and tools: "
        f"{', '.join(f'{r}/{h}' for _, r, h in kept) or '-'}; re-processed on {whole})",
        *session_lines(turns),
        f"TARGET first_byte_within_1s: {'PASS' if not slow else 'FAIL'} (slower on {slow})",
        f"TARGET no_silence_over_15s: {'PASS' if not silent else 'FAIL'} (on turns {silent})",
    ]


CHECKPOINT_SLACK = 32  # tokens before the parting point a server may resume from
SESSION_SHARE = 0.15  # of the tokens sent, at most re-processed over the session (issue 23)


def session_lines(turns: list[Turn]) -> list[str]:
    """The whole session, every turn and every call counted (summaries included): tokens
    sent (prompt tokens), tokens the server processed (`timings.prompt_n`, the new messages
    included) and of those what it had read before (processed less each turn's new message)."""
    calls = [c for t in turns for c in t.calls if c.prompt_tokens is not None]
    sent = sum(c.prompt_tokens or 0 for c in calls)
    processed = sum(c.prompt_n or 0 for c in calls)
    new = sum(min(t.new_message_tokens, t.chat.prompt_n or 0) for t in turns if t.chat)
    chat = [c for c in calls if c.stream]
    summary = [c for c in calls if not c.stream]
    share = processed / sent if sent else 0.0
    reread = (processed - new) / sent if sent else 0.0
    waits = [t.ttft_ms / 1000 for t in turns if t.ttft_ms is not None]

    def of(some: list[Call]) -> str:
        done = sum(c.prompt_n or 0 for c in some)
        return f"{done:,} of {sum(c.prompt_tokens or 0 for c in some):,}"

    wait = statistics.median(waits) if waits else 0.0
    return [
        f"session: {len(turns)} turns, {sent:,} tokens sent, {processed:,} processed "
        f"({share:.1%}; the new messages {new:,}, read before {processed - new:,}: "
        f"{reread:.1%}); chat calls {of(chat)}, summary calls "
        f"{of(summary)} ({len(summary)} calls); first text median {wait:.1f} s, max "
        f"{max(waits, default=0):.1f} s",
        f"TARGET session_reprocessed_at_most_{SESSION_SHARE:.0%}: "
        f"{'PASS' if share <= SESSION_SHARE else 'FAIL'} ({share:.1%} of {sent:,} tokens "
        "processed, the new messages included, every turn counted)",
        f"TARGET session_reread_at_most_{SESSION_SHARE:.0%}: "
        f"{'PASS' if reread <= SESSION_SHARE else 'FAIL'} ({reread:.1%}: processed less the "
        "new messages, every turn and summary counted)",
    ]


# What a full run measures (issue 36): llama-server's defaults (`-np` unset: 4 slots sharing one
# cache of n_ctx tokens, `kv_unified`), one slot, and Gemma's sliding-window cache kept whole
# (its prompt checkpoints are not lost).
SERVERS: dict[str, list[str]] = {
    "defaults": [],
    "one-slot": ["-np", "1"],
    "swa-full": ["--swa-full"],
}
# The stand-in's (--quick): 4 slots sharing the cache, whose requests take time and overlap as a
# real server's do (a summary still decoding when the next turn comes); one slot.
STANDINS: dict[str, int] = {"defaults": 4, "one-slot": 1}
STANDIN_SECONDS_PER_TOKEN = 0.00005
PORTS = range(8080, 8090)  # where llama-server may listen on this machine


def llama_port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port for llama-server in {PORTS.start}-{PORTS.stop - 1}")


def start_llama(args: argparse.Namespace, server: list[str]) -> tuple[str, subprocess.Popen[bytes]]:
    tool = (
        args.local_llm or os.environ.get("LOCAL_LLM") or str(ROOT.parent / "shared/tools/local-llm")
    )
    if not Path(tool).exists():
        raise SystemExit(
            f"no llama-server: pass --llama URL or --local-llm PATH ({tool} is missing)"
        )
    port = llama_port()
    extra = (["--tools"] if args.tools else []) + server + args.server_arg
    command = [tool, "serve", str(port), str(args.ctx)] + (["--", *extra] if extra else [])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"http://127.0.0.1:{port}", process


async def one_server(args: argparse.Namespace, name: str) -> list[Turn]:
    """The session against one server configuration, with its figures and TARGET lines."""
    process, standin, llama = None, None, args.llama
    if llama is None and args.quick and not args.local_llm:
        standin = await LlamaStandin(
            args.ctx, STANDINS[name], args.tools, seconds_per_token=STANDIN_SECONDS_PER_TOKEN
        ).start()
        llama = standin.url
    elif llama is None:
        llama, process = start_llama(args, SERVERS[name])
    try:
        await wait_for(llama)
        what = "llama-server"
        if standin is not None:
            what = "a llama-server STAND-IN (tests/llama_standin.py: no model, not a real server)"
        given = " ".join(SERVERS.get(name, []) + (args.server_arg if args.llama is None else []))
        print(
            f"\n== server={name}: {what} {llama}, n_ctx {args.ctx}, args [{given}], "
            f"tools template: {args.tools}, mode {args.mode}"
        )
        print(HEADER)
        turns = await session_run(args, llama)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        if standin is not None:
            await standin.stop()
    for line in verdicts(turns, args.slack, name):
        print(line, flush=True)
    return turns


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama", help="a running llama-server (else one is started)")
    parser.add_argument("--local-llm", help="the local-llm tool that starts llama-server")
    parser.add_argument("--tools", action="store_true", help="serve a template that renders tools")
    parser.add_argument(
        "--servers", default="",
        help=f"the configurations to run, of {', '.join(SERVERS)} (default: all; --quick: "
        f"{', '.join(STANDINS)}; with --llama: `given`, or the one it runs)",
    )  # fmt: skip
    parser.add_argument(
        "--server-arg", action="append", default=[], metavar="ARG",
        help="pass ARG to each llama-server the bench starts (e.g. --server-arg=-c)",
    )  # fmt: skip
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--paste-every", type=int, default=5)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--max-output", type=int, default=96, help="LLM_MAX_OUTPUT_TOKENS")
    parser.add_argument("--slack", type=int, default=40, help="tokens a turn may add (issue 12)")
    parser.add_argument(
        "--mode", choices=("full", "continuation"), default="full",
        help="LLM_SYSTEM_PROMPT_MODE: the whole system prompt every turn, or a short one later",
    )  # fmt: skip
    parser.add_argument(
        "--run-every", type=int, default=7,
        help="every N turns the answer ends with a queueWorkflow call and its result (0: none)",
    )  # fmt: skip
    parser.add_argument("--json", help="write every turn's figures to this file")
    parser.add_argument("--quick", action="store_true", help="12 turns; the stand-in, no --llama")
    args = parser.parse_args()
    if args.quick:  # (two pastes, and the compaction they cause on the turn after)
        args.turns = 12
    standin = args.quick and not (args.llama or args.local_llm)
    names = [n for n in args.servers.split(",") if n] or (
        ["given"] if args.llama else list(STANDINS if standin else SERVERS)
    )
    # (with --llama, one name of SERVERS may say what the given server runs)
    known = {"given", *SERVERS} if args.llama else set(STANDINS if standin else SERVERS)
    if set(names) - known:
        raise SystemExit(f"--servers: one of {', '.join(sorted(known))}")
    runs = {name: await one_server(args, name) for name in names}
    if args.json:
        figures = {name: [asdict(t) for t in turns] for name, turns in runs.items()}
        await asyncio.to_thread(Path(args.json).write_text, json.dumps(figures, indent=1))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
