"""Serve one aiohttp request with an ASGI application (the MCP SDK's Streamable HTTP transport
is ASGI, our servers are aiohttp; the SDK offers no other way in).

`serve_asgi(app, request)` builds the request's ASGI scope, hands the app the body as aiohttp
reads it, and writes what the app sends as a streamed aiohttp response (an SSE stream stays
open as long as the app keeps writing). After the body, `receive()` waits for the end: the
client gone (its socket closed, or a write that fails) or the response complete; then it says
`http.disconnect`, which is how an ASGI app learns to stop a stream. A client gone before the
response was complete is told to `on_left` (with the request's body): the SDK does not take a
dropped stream for a cancelled request.

Only what the SDK uses is bridged: HTTP (not websockets, not lifespan: the owner of the app
runs its lifespan itself), one response per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

log = logging.getLogger("comfyui_assistant")

# How often a waiting receive() looks whether the client's socket closed (aiohttp does not
# cancel a handler whose client left).
DISCONNECT_POLL_SECONDS = 0.25
# Set by aiohttp itself; the ASGI app's own value for these would contradict how we send.
_HOP_BY_HOP = frozenset({"transfer-encoding", "connection", "keep-alive"})


def scope_of(request: web.Request) -> dict[str, Any]:
    """The ASGI HTTP scope of an aiohttp request."""
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport is not None else None
    sock = transport.get_extra_info("sockname") if transport is not None else None
    path, _, _ = request.raw_path.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": path.encode("latin-1", "replace"),
        "query_string": request.query_string.encode("latin-1", "replace"),
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "server": tuple(sock[:2]) if isinstance(sock, tuple) else None,
        "state": {},
    }


class _Exchange:
    """One request's receive and send, and the response they make."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.response: web.StreamResponse | None = None
        self.ended = asyncio.Event()  # the client left, or the response is complete
        self.left = False  # the client left before the response was complete
        self.body = bytearray()
        self._body_read = False

    def _client_gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    async def receive(self) -> Message:
        if not self._body_read:
            chunk = await self.request.content.readany()
            self.body += chunk
            more = bool(chunk) and not self.request.content.at_eof()
            self._body_read = not more
            return {"type": "http.request", "body": chunk, "more_body": more}
        while not self.ended.is_set():
            if self._client_gone():
                self.left = True
                self.ended.set()
                break
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.ended.wait(), DISCONNECT_POLL_SECONDS)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            response = web.StreamResponse(status=int(message["status"]))
            for name, value in message.get("headers", ()):
                key = bytes(name).decode("latin-1")
                if key.lower() not in _HOP_BY_HOP:
                    response.headers.add(key, bytes(value).decode("latin-1"))
            self.response = response
            await self._io(response.prepare(self.request))
        elif kind == "http.response.body":
            if self.response is None:
                raise RuntimeError("ASGI app sent a body before http.response.start")
            body = bytes(message.get("body", b""))
            if body:
                await self._io(self.response.write(body))
            if not message.get("more_body", False):
                await self._io(self.response.write_eof())
                self.ended.set()

    async def _io(self, step: Awaitable[Any]) -> None:
        """A write to the client; one that finds it gone ends the exchange (the app's next
        receive() says so) and raises OSError, as a server's send does."""
        try:
            await step
        except (ConnectionError, RuntimeError) as exc:  # (aiohttp: a closed transport)
            self.left = True
            self.ended.set()
            raise OSError(f"the client disconnected: {exc}") from exc


async def serve_asgi(
    app: ASGIApp, request: web.Request, on_left: Callable[[bytes], None] | None = None
) -> web.StreamResponse:
    """The response of the ASGI `app` to `request` (already sent when it streams); `on_left`
    gets the request's body when the client left before the response was complete."""
    exchange = _Exchange(request)
    try:
        await app(scope_of(request), exchange.receive, exchange.send)
    except OSError:
        if exchange.response is None:
            raise
        log.debug("MCP: the client left during a response")
    finally:
        exchange.ended.set()
        if exchange.left and on_left is not None:
            on_left(bytes(exchange.body))
    if exchange.response is None:  # (the app answered nothing: its bug, said as such)
        raise RuntimeError("ASGI app returned without a response")
    return exchange.response
