"""Memory a large request body took goes back to the system once the request is done.

glibc's malloc keeps what Python frees in its heaps for later allocations, and a 30 MB chat
body takes a few times that while it is parsed and stored: ten such chats at once left 270 MB
resident after they ended, though nothing referenced it any more. `malloc_trim(0)` hands the
free pages back. It runs in a worker thread (it releases page by page: about 70 ms for 800 MB),
after each request whose body was at least TRIM_FROM bytes, one at a time: a request that ends
while one runs has another run after it. Where there is no `malloc_trim` (macOS, Windows, musl)
nothing is done.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import sys
from collections.abc import Callable

log = logging.getLogger("comfyui_assistant")

TRIM_FROM = 1 << 20  # bytes of request body


def _find_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library the process runs on
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


class MemoryRelease:
    def __init__(self, trim: Callable[[int], int] | None) -> None:
        self._trim = trim
        self._task: asyncio.Task[None] | None = None
        self._again = False

    @property
    def available(self) -> bool:
        return self._trim is not None

    def after_request(self, body_bytes: int | None) -> None:
        """A request with a body of `body_bytes` ended (its objects are freed by now)."""
        if self._trim is None or body_bytes is None or body_bytes < TRIM_FROM:
            return
        task = self._task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._run(self._trim))

    async def _run(self, trim: Callable[[int], int]) -> None:
        while True:
            self._again = False
            try:
                await asyncio.to_thread(trim, 0)
            except Exception as exc:  # never the request's concern
                log.debug("malloc_trim failed: %r", exc)
                return
            if not self._again:
                return


RELEASE = MemoryRelease(_find_trim())
