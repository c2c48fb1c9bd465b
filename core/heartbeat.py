"""A visible sign of life while the model is silent.

A local model reading a long prompt on a CPU can take a minute before its first token, and
only llama.cpp reports its progress (`stream_translate`); Ollama and others send nothing. So
while the provider's stream gives nothing for `WAIT_AFTER` seconds, the answer shows a status
("Waiting for the model… (N s)", a `data-status` part the panel shows), updated every
`WAIT_EVERY` seconds and cleared when the stream speaks again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import TypeVar

from . import ui_stream as ui

WAIT_AFTER = 8.0  # seconds of silence before the status shows
WAIT_EVERY = 5.0  # seconds between its updates

T = TypeVar("T")


def waiting(seconds: float) -> ui.Data:
    return ui.Data(
        "status", {"text": f"Waiting for the model… ({seconds:.0f} s)", "done": False}, id="status"
    )


CLEARED = ui.Data("status", {"text": "", "done": True}, id="status")


async def with_heartbeat(items: AsyncIterable[T]) -> AsyncIterator[T | ui.Data]:
    """The items of `items`, with a waiting status while none comes (see above)."""
    source = aiter(items)
    since, shown = time.monotonic(), False
    pending: asyncio.Future[T] = asyncio.ensure_future(anext(source))
    try:
        while True:
            done, _ = await asyncio.wait({pending}, timeout=WAIT_EVERY if shown else WAIT_AFTER)
            if not done:
                shown = True
                yield waiting(time.monotonic() - since)
                continue
            try:
                item = pending.result()
            except StopAsyncIteration:
                break
            if shown:
                shown = False
                yield CLEARED
            yield item
            since = time.monotonic()
            pending = asyncio.ensure_future(anext(source))
    finally:
        if not pending.done():  # the answer was stopped while the model was silent
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
