"""The answer so far, written while it streams, so that a crash (`kill -9`, a power cut) keeps
what the user already saw. A change is written as soon as it is seen (the saver looks every
LOOK seconds) unless the last write was less than `every` seconds ago, then once those are up:
text that follows a pause (the first words, the answer after a tool call) is written within
LOOK, and a steady stream every `every`. So a crash loses at most the last `every` + LOOK
seconds of a steady stream (0.3 s with the default `every` of 0.25 s), and LOOK (50 ms) of what
follows a pause, plus the time a write takes. Written with the status "streaming"; the final
save (`save_final`, before the stream ends) replaces it, and a store opened after a crash marks
what was left "streaming" as interrupted (`Store.open`). A final save that fails is logged with
its traceback, and told in the stream when no partial save holds the answer either."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

from ..base import Coded, UIMessage, coded, compact_json
from ..store import Threads
from .chat_outcome import ChatOutcome

log = logging.getLogger("comfyui_assistant")

STREAMING = "streaming"
LOOK = 0.05  # seconds between looks at the answer (a comparison of two numbers)


class AnswerSaver:
    def __init__(
        self, threads: Threads, thread_id: str, position: int, outcome: ChatOutcome, every: float
    ) -> None:
        self.threads, self.thread_id, self.position = threads, thread_id, position
        self.outcome, self.every = outcome, every
        self._saved_revision = 0
        self._stored: UIMessage | None = None  # the last write that succeeded
        self._failed = False
        self._stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop saving, after a write in progress (so the final save is the last one)."""
        self._stopped.set()
        if self._task is not None:
            await self._task

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        saved_at = -self.every
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), min(LOOK, self.every))
                return
            revision, message = self.outcome.revision, self.outcome.message
            if revision == self._saved_revision or message is None or not has_content(message):
                continue
            if loop.time() - saved_at < self.every:
                continue
            saved_at = loop.time()
            # a snapshot: the stream goes on changing the message while the database writes
            snapshot = json.loads(compact_json(message))
            try:
                await self.threads.save_answer(self.thread_id, snapshot, self.position, STREAMING)
                self._stored = snapshot
            except Exception as exc:  # the final save still runs; a partial one may fail
                if not self._failed:  # (said once: a full disk fails them all)
                    log.warning("saving the partial answer failed: %s", exc)
                self._failed = True
            self._saved_revision = revision

    def holds(self, message: UIMessage) -> bool:
        """Whether a partial save stored all that `message` shows (its parts, each perhaps
        still in a streaming state)."""
        stored = self._stored
        return stored is not None and _shown(stored) == _shown(message)

    async def save_final(self, message: UIMessage, status: str) -> Coded | None:
        """The answer's last save (after the partial ones). None when stored; else, logged
        with its traceback, what to tell the user when the answer is stored nowhere (a partial
        save holding all of it is kept, as "streaming": Store.open marks it interrupted)."""
        await self.stop()
        try:
            await self.threads.save_answer(self.thread_id, message, self.position, status)
        except Exception as exc:
            log.error("saving the answer failed", exc_info=exc)
            lost = not self.holds(message)
            return coded("stream.not_saved", error=type(exc).__name__) if lost else None
        return None


def _shown(message: UIMessage) -> list[dict[str, object]]:
    return [{k: v for k, v in part.items() if k != "state"} for part in message.get("parts", ())]


def has_content(message: UIMessage | None) -> bool:
    """Whether an answer shows anything (more than step markers and the context report)."""
    return message is not None and any(
        part.get("type") not in ("step-start", "data-context") for part in message.get("parts", ())
    )
