"""Summaries made after the answer, in the background (as Onyx does): the user never waits for
one in front of a response. After a turn ends, the thread with its answer is assembled again;
if the next turn would cross the high watermark, the oldest stretch is summarized down to the
low one while the user reads and types. A request that arrives while a summary of its thread
is still being made waits for it, with a visible status in its response."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("comfyui_assistant")


class Compactor:
    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def running(self, thread_id: str) -> asyncio.Task[None] | None:
        task = self._tasks.get(thread_id)
        return task if task is not None and not task.done() else None

    def start(self, thread_id: str, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` for this thread unless one runs already (then `work` is dropped)."""
        if self.running(thread_id) is not None:
            work.close()
            return
        self._tasks[thread_id] = asyncio.ensure_future(self._run(thread_id, work))

    async def _run(self, thread_id: str, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a summary that cannot be made is made on a later turn
            log.warning("summarizing thread %s failed: %r", thread_id, exc)
        finally:
            if self._tasks.get(thread_id) is asyncio.current_task():
                del self._tasks[thread_id]

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
