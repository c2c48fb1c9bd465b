"""The bridge from an aiohttp request to an ASGI app (mcp_server/asgi.py), on a real socket:
the scope, a body read in pieces, headers and status as the app sends them, a response streamed
as it is written, and the client's leaving told to the app as `http.disconnect` (and, with the
request's body, to `on_left`; a complete response is not a leaving)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from comfyui_assistant.mcp_server.asgi import Receive, Send, serve_asgi

from .helpers import serve_app


class Probe:
    """An ASGI app that records what it got and does what the test asks."""

    def __init__(self) -> None:
        self.scope: MutableMapping[str, Any] = {}
        self.pieces: list[int] = []
        self.after_body: list[str] = []
        self.first_chunk_sent = asyncio.Event()
        self.go_on = asyncio.Event()
        self.left: list[bytes] = []  # the bodies `on_left` got

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        self.scope = scope
        body = b""
        while True:
            message = await receive()
            body += message["body"]
            self.pieces.append(len(message["body"]))
            if not message["more_body"]:
                break
        headers = [(b"content-type", b"text/plain"), (b"x-twice", b"1"), (b"x-twice", b"2")]
        await send({"type": "http.response.start", "status": 207, "headers": headers})
        await send({"type": "http.response.body", "body": b"%d|" % len(body), "more_body": True})
        self.first_chunk_sent.set()
        if scope["path"].endswith("/leave"):  # (the client goes: the app must hear it)
            self.after_body.append((await asyncio.wait_for(receive(), 10))["type"])
            return
        await self.go_on.wait()
        await send({"type": "http.response.body", "body": b"end", "more_body": False})


@pytest.fixture
async def served() -> AsyncIterator[tuple[Probe, str]]:
    probe = Probe()
    app = web.Application()

    async def handler(request: web.Request) -> web.StreamResponse:
        return await serve_asgi(probe, request, on_left=probe.left.append)

    app.router.add_route("*", "/asgi/{tail:.*}", handler)
    runner, base = await serve_app(app)
    yield probe, base
    await runner.cleanup()


async def test_a_request_and_a_streamed_response(served: tuple[Probe, str]) -> None:
    probe, base = served

    async def pieces() -> AsyncIterator[bytes]:
        for _ in range(3):
            yield b"x" * 70_000
            await asyncio.sleep(0.01)

    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/asgi/a%20b?q=1&q=2", data=pieces(), headers={"X-Mine": "yes"}) as r,
    ):
        assert (r.status, r.headers.getall("X-Twice")) == (207, ["1", "2"])
        assert await r.content.readexactly(7) == b"210000|"  # (before the app has finished)
        probe.go_on.set()
        assert await r.read() == b"end"
    scope = probe.scope
    assert sum(probe.pieces) == 210_000  # (in the pieces aiohttp read)
    assert {k: scope[k] for k in ("type", "method", "path", "raw_path", "query_string")} == {
        "type": "http",
        "method": "POST",
        "path": "/asgi/a b",
        "raw_path": b"/asgi/a%20b",
        "query_string": b"q=1&q=2",
    }
    assert (b"x-mine", b"yes") in scope["headers"]
    assert scope["client"][0] == "127.0.0.1" and scope["server"][1] == int(base.rsplit(":")[-1])
    assert probe.left == []


async def test_the_app_hears_the_client_leave(served: tuple[Probe, str]) -> None:
    probe, base = served
    async with aiohttp.ClientSession() as session:
        response = await session.post(f"{base}/asgi/leave", data=b"the call")
        assert await response.content.readexactly(2) == b"8|"
        response.close()  # (the connection goes, mid-response)
    for _ in range(100):
        if probe.after_body:
            break
        await asyncio.sleep(0.05)
    assert probe.after_body == ["http.disconnect"]
    assert (probe.pieces, probe.left) == ([8], [b"the call"])
