"""How many tool calls MCP clients may make: at most `CALLS_PER_MINUTE` in any 60 seconds, for
all of one user's MCP connections together (two clients do not get twice as many), counted
when a call is accepted. (A chat step is capped too: `MAX_TOOL_CALLS_PER_STEP` calls, in
core/stream/stream_translate.py; an MCP client has no steps, so the cap is per minute.) A call
past it is not run, and its tool error says when the next one may be made. Calls refused for
any other reason do not count."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

CALLS_PER_MINUTE = 32
WINDOW_SECONDS = 60.0


class CallRate:
    """A sliding window of accepted calls; `clock` is monotonic seconds."""

    def __init__(
        self,
        limit: int = CALLS_PER_MINUTE,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._accepted: deque[float] = deque()

    def take(self) -> float | None:
        """Count one call and return None, or (over the limit) the seconds until one may be
        made, without counting it."""
        now = self.clock()
        while self._accepted and now - self._accepted[0] >= self.window:
            self._accepted.popleft()
        if len(self._accepted) >= self.limit:
            return self._accepted[0] + self.window - now
        self._accepted.append(now)
        return None


def over_limit_message(wait: float, limit: int = CALLS_PER_MINUTE) -> str:
    seconds = max(1, math.ceil(wait))
    return (
        f"Too many tool calls: MCP clients may make at most {limit} a minute. This call did "
        f"not run; try again in {seconds} s."
    )
