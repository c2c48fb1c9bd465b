"""What a download job shows while it runs: bytes done, the total, the speed, the time left."""

from __future__ import annotations

import time
from collections import deque

SPEED_WINDOW = 3.0  # seconds of samples behind the speed shown


def human_size(size: int) -> str:
    """ "2.1 GB", "340 MB", "12 KB", "300 bytes"."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


class Progress:
    """Bytes in the part, the total when the server said it, the speed over the last seconds."""

    def __init__(self) -> None:
        self.done = 0
        self.total: int | None = None
        self.verifying = False
        self.received = 0  # bytes received over the network by this job
        self._samples: deque[tuple[float, int]] = deque()

    def restart(self, done: int) -> None:
        self.done = done
        self._samples.clear()

    def advance(self, count: int) -> None:
        self.done += count
        self.received += count
        now = time.monotonic()
        self._samples.append((now, self.received))
        while len(self._samples) > 2 and now - self._samples[0][0] > SPEED_WINDOW:
            self._samples.popleft()

    def speed(self) -> float:
        """Bytes per second over the last SPEED_WINDOW seconds (0 before two samples)."""
        if len(self._samples) < 2:
            return 0.0
        (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
        stalled = time.monotonic() - t1 > SPEED_WINDOW
        return 0.0 if stalled or t1 <= t0 else (b1 - b0) / (t1 - t0)

    def eta(self) -> float | None:
        speed = self.speed()
        if self.total is None or speed <= 0:
            return None
        return max(0.0, (self.total - self.done) / speed)
