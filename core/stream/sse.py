"""Write a chunk iterator as SSE: keep-alive comments while the source is silent, and stop the
source at once when the client goes away.

One task writes the chunks as they come (no per-chunk overhead). Beside it, a watch wakes every
`poll_seconds`: it sends a `: ping` comment after `keepalive_seconds` of silence (a local model
loading can take minutes before its first token), asks the source's `idle` callback for a chunk
the user sees after `idle_seconds` without one ("Waiting for the model… (N s)"), and, when the
client is gone, cancels the writer and closes the source generator, which closes the
provider's stream with it. The source is read by the writer task alone: the watch never reads
it (a provider stream read from two tasks reports a cut connection wrongly).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from ..base import coded, stream_error_text
from . import ui_stream as ui

log = logging.getLogger("comfyui_assistant")


class ClientGone(Exception):
    """The browser disconnected (closed tab, stop button)."""


class StreamFailed(Exception):
    """The source failed after the response had started; the stream was ended with an
    `error` chunk (a second HTTP response can no longer be written)."""


FAILED = coded("stream.failed")
FAILED_TEXT = str(FAILED)


@dataclass(frozen=True)
class PumpOptions:
    keepalive_seconds: float = 10.0
    poll_seconds: float = 0.1
    idle_seconds: float = 5.0  # without a chunk: ask the source's `idle` for one to show


async def pump(
    chunks: AsyncIterator[ui.Chunk],
    write: Callable[[bytes], Awaitable[None]],
    connected: Callable[[], bool],
    options: PumpOptions,
    idle: Callable[[], ui.Chunk | None] | None = None,
) -> None:
    """Write every chunk, then `[DONE]`. Raises ClientGone if the client disconnects. `idle`
    gives a chunk to write when the source has given none for `options.idle_seconds` (or
    None: nothing to say); it must not read the source."""
    loop = asyncio.get_running_loop()
    last_write = last_chunk = loop.time()

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
        nonlocal last_chunk
        try:
            async for chunk in chunks:
                last_chunk = loop.time()
                await send(chunk.encode())
        except (ClientGone, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("the answer failed while streaming")
            await send(ui.Error(stream_error_text(FAILED)).encode())
            await send(ui.DONE)
            raise StreamFailed from exc
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
            if idle is not None and loop.time() - last_chunk >= options.idle_seconds:
                last_chunk = loop.time()
                shown = idle()
                if shown is not None:
                    await send(shown.encode())
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
