"""Summaries made after the answer, in the background (as Onyx does): the user never waits for
one in front of a response. After a turn ends, the thread with its answer is assembled again;
if the next turn would cross the high watermark, the oldest stretch is summarized down to the
low one while the user reads and types; it is sent once a request no longer fits without it.
A request that needs it while it is still being made waits for it, with a visible status in
its response; one that does not need it yet, on a llama.cpp server (whose slot the summary
holds), stops it instead: made again after that answer."""

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

    async def cancel(self, thread_id: str) -> None:
        """Stop the summary being made for this thread, if one is (made again later)."""
        task = self.running(thread_id)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
