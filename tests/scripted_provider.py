"""A real OpenAI-compatible HTTP server on 127.0.0.1, scripted per test.

The one stand-in of the suite: the real `openai` client and our real streaming code talk to it
over a socket. A test enqueues replies; each `/v1/chat/completions` request takes the next
one, and every request body is recorded so tests can assert exactly what the model received.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Pause:
    """Wait this long before the next chunk (a slow model, a model loading)."""

    seconds: float


@dataclass
class Gate:
    """Wait until the test opens this gate (`gate.open.set()`): an answer held open for as
    long as a test needs another request to overlap it. `reached` is set when the stream
    gets here."""

    open: asyncio.Event = field(default_factory=asyncio.Event)
    reached: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Raw:
    """Bytes written as they are (a malformed chunk)."""

    data: bytes


@dataclass
class Cut:
    """Drop the connection mid-stream, without finishing the chunked body."""


@dataclass
class Stream:
    chunks: list[Any]
    done: bool = True
    status: int = 200
    before: float = 0.0  # seconds before the response starts (a server reading the prompt)


@dataclass
class Status:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Completion:
    """A non-streamed answer (the summarizer asks for one), after `delay` seconds."""

    text: str
    delay: float = 0.0
    finish_reason: str = "stop"


@dataclass
class Hang:
    """Accept the request and never answer."""


@dataclass
class Counted:
    """A streamed answer whose usage reports the request's prompt as this server counts it
    (`ScriptedProvider.prompt_tokens`), as llama-server does."""

    text: str


def chunk(
    content: str | None = None,
    *,
    reasoning_content: str | None = None,
    reasoning: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    model: str = "scripted-model",
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if reasoning_content is not None:
        delta["reasoning_content"] = reasoning_content
    if reasoning is not None:
        delta["reasoning"] = reasoning
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    out: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if usage is not None:
        out["choices"] = []
        out["usage"] = usage
    return out


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    return chunk(
        usage={
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    )


def text_reply(*pieces: str, finish: str = "stop", usage: tuple[int, int] | None = None) -> Stream:
    chunks: list[Any] = [chunk(role_piece) for role_piece in pieces]
    chunks.append(chunk(finish_reason=finish))
    if usage:
        chunks.append(usage_chunk(*usage))
    return Stream(chunks)


def call_piece(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> dict[str, Any]:
    piece: dict[str, Any] = {"index": index}
    if id is not None:
        piece["id"] = id
        piece["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        piece["function"] = function
    return piece


def searches_reply(queries: dict[str, str]) -> Stream:
    """One step calling `searchInstalledNodes` once per query, by call id, in one chunk."""
    pieces = [
        call_piece(i, id=id, name="searchInstalledNodes", arguments=json.dumps({"query": query}))
        for i, (id, query) in enumerate(queries.items())
    ]
    return Stream([chunk(tool_calls=pieces), chunk(finish_reason="tool_calls")])


def error_body(message: str, code: str | None = None, type_: str = "invalid_request_error") -> Any:
    return {"error": {"message": message, "type": type_, "code": code}}


class ScriptedProvider:
    def __init__(self, models: list[str] | None = None, api_key: str | None = None) -> None:
        self.models = ["scripted-model"] if models is None else models
        self.api_key = api_key
        self.replies: deque[Any] = deque()
        # answers to non-streamed requests (the summarizer's), each used as often as asked
        # while it is the only one left; empty: they take from `replies` like the rest
        self.summaries: deque[Any] = deque()
        self.props: dict[str, Any] | None = None  # served at /props (llama.cpp) when set
        self.busy_slots: set[int] | None = None  # served at /slots (llama.cpp) when set
        # llama.cpp's /apply-template and /tokenize (see `render` and `tokenize`), when set
        self.counts = False
        self.counts_delay = 0.0  # seconds each /tokenize takes (a busy server)
        self.renders_tools = True  # False: its template drops the `tools` array
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.disconnects: list[float] = []  # when a stream found its client gone
        self.finished_streams = 0
        self.models_status: int | None = None  # answer /models with this status instead
        self.model_metadata: dict[str, Any] = {}  # extra fields of each /models entry
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.seen: list[
            tuple[str, str, dict[str, str]]
        ] = []  # every request: method, path, headers
        self.redirect_to: str | None = None  # answer every request with a 307 to this origin
        # picks a reply from the request itself when none is enqueued (a bench playing several
        # roles: a parent and the children it delegates to, told apart by their prompts)
        self.responder: Callable[[dict[str, Any]], Any] | None = None

    def enqueue(self, *replies: Any) -> None:
        self.replies.extend(replies)

    async def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> ScriptedProvider:
        """Listen on 127.0.0.1 (a free port unless `port`; https with `tls`)."""
        app = web.Application(middlewares=[self._record], client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_get("/slots", self._slots)
        app.router.add_post("/apply-template", self._apply_template)
        app.router.add_post("/tokenize", self._tokenize)
        self._runner = web.AppRunner(app, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port, ssl_context=tls)
        try:
            await site.start()
        except OSError:
            await self._runner.cleanup()
            raise
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"{'https' if tls else 'http'}://127.0.0.1:{port}/v1"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.seen.append((request.method, request.path_qs, dict(request.headers)))
        if self.redirect_to is not None:
            raise web.HTTPTemporaryRedirect(self.redirect_to + request.path_qs)
        return await handler(request)  # type: ignore[no-any-return]

    def saw(self, secret: str) -> list[str]:
        """The requests whose headers or URL carried `secret`."""
        return [
            f"{method} {path}"
            for method, path, headers in self.seen
            if secret in path or any(secret in v for v in headers.values())
        ]

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        return web.json_response(
            error_body("Incorrect API key provided: sk-wro****", "invalid_api_key"), status=401
        )

    async def _props(self, request: web.Request) -> web.Response:
        """llama.cpp's server properties, when a test sets `props`."""
        if self.props is None:
            raise web.HTTPNotFound()
        return web.json_response(self.props)

    async def _slots(self, request: web.Request) -> web.Response:
        """llama.cpp's slots (`is_processing` per slot), when a test sets `busy_slots`."""
        if self.busy_slots is None or self.props is None:
            raise web.HTTPNotFound()
        total = int(self.props.get("total_slots", 1))
        return web.json_response(
            [{"id": i, "is_processing": i in self.busy_slots} for i in range(total)]
        )

    def render(self, body: dict[str, Any]) -> str:
        """A chat request as this server's template renders it (ChatML, tools as indented
        JSON in a block of their own, unless it drops them)."""
        out = ""
        if body.get("tools") and self.renders_tools:
            out += "<|im_start|>tools\n" + json.dumps(body["tools"], indent=2) + "<|im_end|>\n"
        for m in body.get("messages", []):
            content = m.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            calls = json.dumps(m["tool_calls"]) if m.get("tool_calls") else ""
            out += f"<|im_start|>{m['role']}\n{text or ''}{calls}<|im_end|>\n"
        return out + "<|im_start|>assistant\n"

    @staticmethod
    def tokenize(text: str, add_special: bool = True) -> list[int]:
        """This server's tokenizer: a token per word, per punctuation mark, per special token
        (`<|...|>`), and a BOS token."""
        pieces = re.findall(r"<\|\w+\|>|\w+|[^\w\s]", text)
        return [1] * add_special + [len(p) for p in pieces]

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        return len(self.tokenize(self.render(body)))

    async def _apply_template(self, request: web.Request) -> web.Response:
        if not self.counts:
            raise web.HTTPNotFound()
        return web.json_response({"prompt": self.render(await request.json())})

    async def _tokenize(self, request: web.Request) -> web.Response:
        if not self.counts:
            raise web.HTTPNotFound()
        body = await request.json()
        await asyncio.sleep(self.counts_delay)
        tokens = self.tokenize(body["content"], bool(body.get("add_special", False)))
        return web.json_response({"tokens": tokens})

    async def _models(self, request: web.Request) -> web.Response:
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        if self.models_status is not None:
            return web.json_response(error_body("no models here"), status=self.models_status)
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "me", **self.model_metadata}
            for m in self.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        if self.summaries and not body.get("stream"):
            reply = self.summaries.popleft() if len(self.summaries) > 1 else self.summaries[0]
        elif not self.replies and self.responder is not None:
            reply = self.responder(body)
        elif not self.replies:
            return web.json_response(error_body("the test enqueued no reply"), status=500)
        else:
            reply = self.replies.popleft()
        if isinstance(reply, Status):
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        if isinstance(reply, Completion):
            await asyncio.sleep(reply.delay)
            message = {"role": "assistant", "content": reply.text}
            choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
            return web.json_response({"id": "c", "object": "chat.completion", "choices": [choice]})
        if isinstance(reply, Counted):
            usage = usage_chunk(self.prompt_tokens(body), 1)
            reply = Stream([chunk(reply.text), chunk(finish_reason="stop"), usage])
        if isinstance(reply, Hang):
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.disconnects.append(time.monotonic())
                raise
        assert isinstance(reply, Stream), reply
        await asyncio.sleep(reply.before)
        response = web.StreamResponse(
            status=reply.status, headers={"Content-Type": "text/event-stream"}
        )
        await response.prepare(request)
        try:
            for item in reply.chunks:
                if isinstance(item, Pause):
                    await asyncio.sleep(item.seconds)
                elif isinstance(item, Gate):
                    item.reached.set()
                    await item.open.wait()
                elif isinstance(item, Raw):
                    await response.write(item.data)
                elif isinstance(item, Cut):
                    assert request.transport is not None
                    request.transport.abort()
                    return response
                else:
                    await response.write(f"data: {json.dumps(item)}\n\n".encode())
            if reply.done:
                await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            self.finished_streams += 1
        except (asyncio.CancelledError, ConnectionError):
            self.disconnects.append(time.monotonic())
            raise
        return response
