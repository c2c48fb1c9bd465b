"""A model host on 127.0.0.1 for the downloader's tests and bench: serves a generated file with
HTTP Range support, with knobs for what real hosts do (slow, a dropped connection, Range
ignored, wrong bytes, a redirect, an error status, a huge Content-Length, a login page). A HEAD
answers the headers alone (slowly if asked), and the redirect can carry Hugging Face's
X-Linked-Size."""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

SEND = 1 << 16  # bytes per write


def model_bytes(size: int, seed: int = 28) -> bytes:
    """`size` random bytes, no block repeated (randbytes takes at most 256 MB at a time)."""
    block = 64 << 20
    return b"".join(
        random.Random(seed + at).randbytes(min(block, size - at)) for at in range(0, size, block)
    )


@dataclass
class Knobs:
    delay: float = 0.0  # seconds after each SEND bytes
    drop_at: int | None = None  # the offset in the file where a body's connection is cut
    drops: int = 0  # how many responses are cut so
    ignore_range: bool = False
    corrupt: bool = False  # one byte of the body changed
    redirect_to: str | None = None  # a 302 to there, for /moved
    linked_size: int | None = None  # the X-Linked-Size the 302 carries (Hugging Face's, for LFS)
    head_delay: float = 0.0  # seconds before a HEAD is answered
    status: int | None = None  # answer this status, no body
    content_length: int | None = None  # the Content-Length to claim
    chunked: bool = False  # no Content-Length: the size is not known before the end
    content_type: str = "application/octet-stream"


@dataclass
class ModelServer:
    data: bytes
    knobs: Knobs = field(default_factory=Knobs)
    requests: list[dict[str, Any]] = field(default_factory=list)
    origin: str = ""

    _hashed: tuple[bytes, str] | None = None

    @property
    def sha256(self) -> str:
        if self._hashed is None or self._hashed[0] is not self.data:
            self._hashed = (self.data, hashlib.sha256(self.data).hexdigest())
        return self._hashed[1]

    @property
    def etag(self) -> str:
        return f'"{self.sha256[:16]}"'  # (another file, another ETag)

    def url(self, path: str = "/file/model.safetensors") -> str:
        return self.origin + path

    async def start(self, port: int = 0) -> ModelServer:
        app = web.Application()
        app.router.add_get("/moved", self._moved, allow_head=False)
        app.router.add_head("/moved", self._moved)
        app.router.add_get("/file/{name:.+}", self._file, allow_head=False)
        app.router.add_head("/file/{name:.+}", self._head)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.origin = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        await self._runner.cleanup()

    def ranges(self) -> list[str | None]:
        """The Range header of each request, in order."""
        return [r["headers"].get("Range") for r in self.requests]

    def heads(self) -> list[str]:
        """The path of each HEAD request, in order."""
        return [r["path"] for r in self.requests if r["method"] == "HEAD"]

    async def _moved(self, request: web.Request) -> web.StreamResponse:
        self._record(request)
        linked = self.knobs.linked_size
        headers = {"X-Linked-Size": str(linked)} if linked is not None else None
        raise web.HTTPFound(self.knobs.redirect_to or "/file/model.safetensors", headers=headers)

    async def _head(self, request: web.Request) -> web.StreamResponse:
        self._record(request)
        knobs = self.knobs
        await asyncio.sleep(knobs.head_delay)
        if knobs.status is not None:
            return web.Response(status=knobs.status, text="no")
        headers = {"Content-Type": knobs.content_type, "ETag": self.etag}
        if not knobs.chunked:
            headers["Content-Length"] = str(knobs.content_length or len(self.data))
        resp = web.StreamResponse(headers=headers)
        await resp.prepare(request)
        return resp

    async def _file(self, request: web.Request) -> web.StreamResponse:
        self._record(request)
        knobs = self.knobs
        if knobs.status is not None:
            return web.Response(status=knobs.status, text="no")
        data, start, status, headers = self.data, 0, 200, {}
        wanted = request.headers.get("Range")
        if request.headers.get("If-Range", self.etag) != self.etag:
            wanted = None  # the file changed since: all of it
        if wanted and not knobs.ignore_range:
            start = int(wanted.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                return web.Response(status=416, headers={"Content-Range": f"bytes */{len(data)}"})
            status = 206
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        if knobs.corrupt:
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        if not knobs.chunked:
            headers["Content-Length"] = str(knobs.content_length or len(body))
        headers["Content-Type"] = knobs.content_type
        headers["ETag"] = self.etag
        resp = web.StreamResponse(status=status, headers=headers)
        await resp.prepare(request)
        cut = None
        if knobs.drop_at is not None and knobs.drops > 0:
            cut = max(0, knobs.drop_at - start)  # (where this body reaches the cut)
        for offset in range(0, len(body), SEND):
            if cut is not None and offset + SEND > cut:
                await resp.write(body[offset:cut])
                await asyncio.sleep(0.1)  # (read by the client: what it got before the cut)
                knobs.drops -= 1
                assert request.transport is not None
                request.transport.close()  # the connection cut mid-body (once sent)
                return resp
            await resp.write(body[offset : offset + SEND])
            if knobs.delay:
                await asyncio.sleep(knobs.delay)
        await resp.write_eof()
        return resp

    def _record(self, request: web.Request) -> None:
        self.requests.append(
            {"method": request.method, "path": request.path_qs, "headers": dict(request.headers)}
        )


def host_and_app(size: int) -> tuple[Any, Any]:
    """pytest fixtures `host` (a model host serving `size` bytes) and `app` (our server, allowed
    to download from it): `host, app = host_and_app(SIZE)` in a test module."""
    import pytest

    from .conftest import start_app

    @pytest.fixture
    async def host() -> AsyncIterator[ModelServer]:
        server = await ModelServer(model_bytes(size)).start()
        yield server
        await server.stop()

    @pytest.fixture
    async def app(host: ModelServer, tmp_path: Path) -> AsyncIterator[Any]:
        started = await start_app(tmp_path / "data", {"COMFY_ASSISTANT_MODEL_ORIGINS": host.origin})
        yield started
        await started.close()

    return host, app
