"""One turn at a time in a thread.

Two tabs showing one thread, or two requests sent at once, must not both answer it: each would
store its user message at the same place, build its answer on a history without the other's
turn, and the two answers would interleave in the stored thread. So a turn holds its thread from
before it reads the stored history (core/chat/thread_delta.py) until its answer is saved.

A request that finds its thread busy waits a moment (`wait` seconds: a stopped answer is still
being saved for a moment after the browser let go, and the panel may send the next message at
once), then gets the error `chat.thread_busy` instead of waiting for the other answer. It is not
queued behind a whole answer: that answer changes the thread, so the waiting turn would be
answered on a history its sender has not seen (or refused as stale after minutes). The panel
shows the error, puts the message back in the composer and loads the other turn's messages
(ui/src/runtime/threadSync.ts).

The holds live with the store (its `cache`), so they are per database: per user once each user
has their own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from ..store import Store

TURN_WAIT_SECONDS = 3.0  # how long a request waits for its thread before it is told it is busy


class TurnHolds:
    """The threads answering now, each with the event its end sets."""

    def __init__(self) -> None:
        self._held: dict[str, asyncio.Event] = {}

    def busy(self, thread_id: str) -> bool:
        return thread_id in self._held

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str, wait: float) -> AsyncIterator[bool]:
        """Hold `thread_id` for the body of `async with`; yields False (and holds nothing) when
        another turn still held it after `wait` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while (other := self._held.get(thread_id)) is not None:
            left = deadline - loop.time()
            if left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(other.wait(), left)
        if thread_id in self._held:
            yield False
            return
        done = self._held[thread_id] = asyncio.Event()
        try:
            yield True
        finally:
            del self._held[thread_id]
            done.set()


def turn_holds(store: Store) -> TurnHolds:
    """The store's holds (made on first use)."""
    holds: TurnHolds = store.cache.setdefault("turn holds", TurnHolds())
    return holds
