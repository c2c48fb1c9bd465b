"""Write a chunk iterator as SSE: keep-alive comments while the source is silent, and stop the
source at once when the client goes away.

The next chunk is awaited in a task so the loop can wake up every `poll_seconds` to check the
connection and send a `: ping` comment after `keepalive_seconds` of silence (a local model
loading can take minutes before its first token). When the client is gone, the pending task
is cancelled and the source generator closed, which closes the provider's stream with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from . import ui_stream as ui


class ClientGone(Exception):
    """The browser disconnected (closed tab, stop button)."""


@dataclass(frozen=True)
class PumpOptions:
    keepalive_seconds: float = 10.0
    poll_seconds: float = 0.1


async def pump(
    chunks: AsyncIterator[ui.Chunk],
    write: Callable[[bytes], Awaitable[None]],
    connected: Callable[[], bool],
    options: PumpOptions,
) -> None:
    """Write every chunk, then `[DONE]`. Raises ClientGone if the client disconnects."""

    async def send(data: bytes) -> None:
        try:
            await write(data)
        except (ConnectionError, RuntimeError) as exc:
            # aiohttp raises ClientConnectionResetError (a ConnectionError) or RuntimeError
            # ("Cannot write to closing transport") once the client is gone.
            raise ClientGone from exc

    loop = asyncio.get_running_loop()
    pending: asyncio.Future[ui.Chunk] | None = None
    last_write = loop.time()
    try:
        while True:
            pending = asyncio.ensure_future(anext(chunks))
            while True:
                done, _ = await asyncio.wait({pending}, timeout=options.poll_seconds)
                if done:
                    break
                if not connected():
                    raise ClientGone
                if loop.time() - last_write >= options.keepalive_seconds:
                    await send(ui.KEEPALIVE)
                    last_write = loop.time()
            try:
                chunk = pending.result()
            except StopAsyncIteration:
                pending = None
                break
            pending = None
            await send(chunk.encode())
            last_write = loop.time()
        await send(ui.DONE)
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
