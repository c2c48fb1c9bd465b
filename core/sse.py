"""Write a chunk iterator as SSE: keep-alive comments while the source is silent, and stop the
source at once when the client goes away.

One task writes the chunks as they come (no per-chunk overhead). Beside it, a watch wakes every
`poll_seconds`: it sends a `: ping` comment after `keepalive_seconds` of silence (a local model
loading can take minutes before its first token) and, when the client is gone, cancels the
writer and closes the source generator, which closes the provider's stream with it.
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
    loop = asyncio.get_running_loop()
    last_write = loop.time()

    async def send(data: bytes) -> None:
        nonlocal last_write
        try:
            await write(data)
        except (ConnectionError, RuntimeError) as exc:
            # aiohttp raises ClientConnectionResetError (a ConnectionError) or RuntimeError
            # ("Cannot write to closing transport") once the client is gone.
            raise ClientGone from exc
        last_write = loop.time()

    async def write_all() -> None:
        async for chunk in chunks:
            await send(chunk.encode())
        await send(ui.DONE)

    writer = asyncio.ensure_future(write_all())
    try:
        while True:
            done, _ = await asyncio.wait({writer}, timeout=options.poll_seconds)
            if done:
                writer.result()
                return
            if not connected():
                raise ClientGone
            if loop.time() - last_write >= options.keepalive_seconds:
                await send(ui.KEEPALIVE)
    finally:
        if not writer.done():
            writer.cancel()
            with contextlib.suppress(BaseException):
                await writer
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
