"""What the memory benches (bench/fidelity.py, bench/memory_prose.py) share: our real server
on 127.0.0.1 (`standalone.create_app`, as tests/conftest.py starts it) against a scripted
OpenAI-compatible provider, driven as the panel drives it, and the newest-first baseline.

The provider answers streamed requests from its queue (the turn's scripted answer); the
summarizer's non-streamed requests fail with HTTP 500 (`summary_mode = "fallback"`: the
engine's deterministic digest stands in) or get `summarize(body)` (`"model"`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.core.stream.sse import PumpOptions
from comfyui_assistant.core.tokens.tokens import counter_for
from comfyui_assistant.standalone import create_app
from comfyui_assistant.tests.helpers import assemble, sse_events
from comfyui_assistant.tests.scripted_provider import ScriptedProvider, error_body

MODEL = "scripted-model"
Msg = dict[str, Any]
Summarize = Callable[[Msg], str]


class SummaryProvider(ScriptedProvider):
    """Streamed requests take the enqueued replies; summary requests (non-streamed) fail
    (`summary_mode = "fallback"`) or get `summarize(body)` (`"model"`)."""

    def __init__(self, summarize: Summarize) -> None:
        super().__init__(models=[MODEL])
        self.summarize = summarize
        self.summary_mode = "fallback"
        self.summary_calls = 0

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if body.get("stream"):
            return await super()._chat(request)
        self.requests.append(body)
        self.summary_calls += 1
        if self.summary_mode == "fallback":
            return web.json_response(
                error_body("summarizer down", type_="server_error"), status=500
            )
        message = {"role": "assistant", "content": self.summarize(body)}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return web.json_response({"id": "s", "object": "chat.completion", "choices": [choice]})


KNOBS = ("LLM_HISTORY_", "LLM_RECALL_", "LLM_MAX_OUTPUT_TOKENS", "COMFY_ASSISTANT_NO_")


class ChatServer:
    """Our standalone app for one window (`LLM_CONTEXT_WINDOW`), with its provider."""

    def __init__(self, window: int, summarize: Summarize) -> None:
        self.window = window
        self.summarize = summarize

    async def __aenter__(self) -> Any:
        self.provider = await SummaryProvider(self.summarize).start()
        self.tmp = tempfile.TemporaryDirectory()
        env = {
            "LLM_BASE_URL": self.provider.base_url,
            "LLM_MODEL": MODEL,
            "LLM_CONTEXT_WINDOW": str(self.window),
            # (the engine's knobs, from the bench's environment: to compare settings)
            **{k: v for k, v in os.environ.items() if k.startswith(KNOBS)},
        }
        pump = PumpOptions(keepalive_seconds=5.0, poll_seconds=0.02)
        options = ServiceOptions(data_dir=Path(self.tmp.name), environ=env, pump=pump)
        self.runner = web.AppRunner(create_app(options))
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"
        self.session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.session.close()
        await self.runner.cleanup()
        await self.provider.stop()
        self.tmp.cleanup()

    async def post(self, thread: str, messages: list[Msg], base: Msg | None) -> Msg:
        """One `POST /api/assistant/chat`; the streamed answer assembled as the panel does."""
        body = {"id": thread, "messages": messages, "trigger": "submit-message"}
        async with self.session.post(self.base + "/api/assistant/chat", json=body) as resp:
            text = await resp.text()
            if resp.status != 200:
                raise RuntimeError(f"/api/assistant/chat answered {resp.status}: {text[:300]}")
        events = sse_events(text)
        errors = [e for e in events if e["type"] == "error"]
        if errors:
            raise RuntimeError(f"/api/assistant/chat streamed an error: {errors[0]}")
        return assemble(events, base)


def context_report(message: Msg) -> Msg | None:
    """The context report (`data-context` part) of an answer: its first request's."""
    return next((p["data"] for p in message["parts"] if p["type"] == "data-context"), None)


def first_streamed(requests: Sequence[Msg]) -> Msg:
    """The first chat request (not a summary call) among `requests`."""
    return next(r for r in requests if r.get("stream"))


def text_of(messages: Sequence[Msg]) -> str:
    out = []
    for m in messages:
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"text": content or ""}]
        out += [str(p.get("text", "")) for p in parts if isinstance(p, dict)]
        out += [c["function"]["arguments"] for c in m.get("tool_calls") or []]
    return "\n".join(out)


def newest_first(history: Sequence[Msg], room: int, *, skip: bool = False) -> list[Msg]:
    """Whole messages of `history`, newest first, in `room` tokens (counted as the engine
    counts them), returned in order; the latest is always taken. The first message that does
    not fit ends it; `skip`: it is passed over and older ones that fit are still taken."""
    counter = counter_for(MODEL)
    kept: list[Msg] = []
    for message in reversed(history):
        cost = counter.message(message)
        if kept and cost > room:
            if skip:
                continue
            break
        kept.append(message)
        room -= cost
    return kept[::-1]


@contextlib.contextmanager
def quiet_engine_logs() -> Iterator[None]:
    """Errors only from our logger: the fallback variant fails every summary on purpose."""
    log = logging.getLogger("comfyui_assistant")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def bench_arguments(doc: str, seeds_help: str) -> argparse.ArgumentParser:
    """A memory bench's options parser with the options they share."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help=seeds_help)
    parser.add_argument("--seed", type=int, default=1, help="the first seed")
    parser.add_argument("--windows", default="4096,8192,32768")
    parser.add_argument("--variants", default="fallback,model", help="summaries: fallback,model")
    return parser
