"""One chat turn, from a parsed request to the stored answer: `prepare` (turn_prepare.py: the
request's messages stored, the sources read, the answer planned, the model chosen, the first
request assembled), `stream` (the answer's UI message chunks, saved as they come), `finish` (the
answer, the context report and the learned token correction stored; one log line). The
HTTP route only moves bytes: it parses the body, writes the chunks and says how the stream
ended."""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import AsyncIterator
from types import TracebackType

from ..base import Message, stream_error_text
from ..store import ThreadState
from ..stream import ui_stream as ui
from .answer_saver import AnswerSaver, has_content
from .chat_context import compact
from .chat_outcome import ChatOutcome, log_outcome
from .chat_plan import response_message_id
from .chat_request import ChatRequest
from .chat_stream import StepRunner
from .turn_parts import TurnParts
from .turn_prepare import PreparedTurn, prepare_turn
from .turn_setup import WINDOWS, used_learned_window, window_key

log = logging.getLogger("comfyui_assistant")


class StreamEnd(enum.Enum):
    """How the response stream ended, as the route saw it."""

    WRITTEN = "written"  # every chunk reached the client
    CLIENT_GONE = "client gone"  # the browser disconnected (stop, a closed tab)
    FAILED = "failed"  # an internal error ended the stream


class ChatTurn:
    """Use as `async with ChatTurn(parts, req) as turn:`, which stores the request's
    messages (on the database's thread while the turn plans) and waits for that write on the
    way out, also after an early error answer. Besides what it is given, it keeps only what
    its stream must: the write of the request's messages, the prepared turn and the runner of
    its answer (each set once), the saver of the answer as it streams, and whether the stream
    saved the answer whole."""

    def __init__(self, parts: TurnParts, req: ChatRequest, *, debug: bool = False):
        self.parts, self.req, self.debug = parts, req, debug
        self.message_id = response_message_id(req.messages)  # (for an early error answer)
        self._stored: asyncio.Future[None] | None = None
        self._ready: PreparedTurn | None = None
        self._runner: StepRunner | None = None
        self._saver: AnswerSaver | None = None
        self._saved = False  # the answer's final save ran before the stream ended

    async def __aenter__(self) -> ChatTurn:
        req = self.req
        self._stored = asyncio.ensure_future(
            self.parts.threads.sync(
                req.thread_id, req.messages, replaces=req.message_id, workflow=req.workflow
            )
        )
        await asyncio.sleep(0)  # (one turn of the loop hands the write over)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._ready is not None and self._ready.lease is not None:
            self._ready.lease.end()  # (a summary made ahead may start now)
        stored = self._stored
        if stored is None:
            return
        await asyncio.wait({stored})
        if not stored.cancelled() and stored.exception() is not None:
            log.error("storing the request's messages failed: %s", stored.exception())

    async def prepare(self) -> Message | None:
        """Plan the answer and assemble its first request. Returns the message to answer
        with instead (the context cannot fit, the provider cannot be reached), or None."""
        assert self._stored is not None, "use `async with`"
        ready = await prepare_turn(self.parts, self.req, self._stored, self.debug)
        if not isinstance(ready, PreparedTurn):
            return ready
        self._ready = ready
        self._runner = StepRunner(
            self.parts.provider, ready.model, ready.plan, ready.hooks, ready.tools,
            ready.context.correction if ready.context is not None else None,
        )  # fmt: skip
        return None

    @property
    def headers(self) -> dict[str, str]:
        """The first request's size, for the response."""
        return (self._ready.headers if self._ready is not None else None) or {}

    @property
    def outcome(self) -> ChatOutcome:
        """What the answer's run returns (kept current as it streams)."""
        assert self._runner is not None, "prepare first"
        return self._runner.outcome

    async def stream(self) -> AsyncIterator[ui.Chunk]:
        """The answer's chunks; what it shows so far is saved every few seconds."""
        assert self._runner is not None, "prepare first"
        outcome = self.outcome
        saver = self._saver = AnswerSaver(
            self.parts.threads, self.req.thread_id, self._position(), outcome,
            self.parts.options.partial_save_seconds,
        )  # fmt: skip
        saver.start()
        async for chunk in self._runner.chat_chunks():
            yield chunk
            answer = outcome.message
            if isinstance(chunk, ui.Finish) and answer is not None and has_content(answer):
                # the answer is whole: stored before the stream ends, so a failure is told
                lost = await saver.save_final(answer, "complete")
                self._saved = True  # (not when cancelled: then `finish` saves it)
                if lost is not None:
                    yield ui.Error(stream_error_text(lost))

    async def finish(self, end: StreamEnd) -> None:
        """Store the answer, the report and the learned correction (even when cancelled)."""
        if self._saver is not None:
            await self._saver.stop()
        outcome, thread_id = self.outcome, self.req.thread_id
        status, note = "interrupted", "stopped: the browser disconnected"
        if end is StreamEnd.WRITTEN:
            status, note = (
                ("complete", "completed") if outcome.error is None else (status, "failed")
            )
        elif end is StreamEnd.FAILED:
            note = "failed: an internal error ended the stream"
        try:
            await asyncio.shield(self._save(status))
        except Exception:  # (the answer's own save, when in the stream, told the user)
            log.exception("saving the turn's answer, report or learned figures failed")
        log_outcome(thread_id, outcome, note)
        self._compact_after(end)

    async def _save(self, status: str) -> None:
        outcome, ready, thread_id = self.outcome, self._ready, self.req.thread_id
        assert ready is not None
        threads, store, provider = self.parts.threads, self.parts.store, self.parts.provider
        if outcome.message is not None and has_content(outcome.message) and not self._saved:
            await threads.save_answer(thread_id, outcome.message, self._position(), status)
        report = outcome.report()
        if report is not None:
            await ThreadState(store).set_report(thread_id, report)
        taken = ready.context.taken if ready.context is not None else None
        if taken is not None:  # the summary made ahead was sent: it is the one in use
            await ThreadState(store).use_next_summary(
                thread_id, taken.text, taken.until, taken.fallback
            )
        if outcome.correction is not None and outcome.last_usage is not None:
            await self.parts.save_corrections(outcome.correction.as_dict())
        if outcome.overflow_window is not None:
            told, over = outcome.overflow_window
            key = window_key(provider, ready.model)
            await store.update_settings(WINDOWS, {key: {"tokens": told, "over": over}})
        elif ready.context is not None and ready.context.inputs.window.source == "provider error":
            # (this turn planned with a window learned from an overflow error)
            await used_learned_window(store, provider, ready.model)

    def _compact_after(self, end: StreamEnd) -> None:
        """A finished answer: summarize in the background if the next turn would need it."""
        outcome, ready = self.outcome, self._ready
        finished = end is StreamEnd.WRITTEN and outcome.error is None
        # (not while the panel runs a tool call: it resubmits at once, the turn goes on)
        if not finished or outcome.finish_reason == "tool-calls" or outcome.message is None:
            return
        if ready is None or ready.context is None or ready.state is None:
            return
        plan = ready.plan
        work = compact(
            ready.context, [*plan.ui_history, outcome.message], self.parts.provider,
            ready.model, ready.state, self.req.thread_id, plan.slot,
        )  # fmt: skip
        self.parts.compactor.start(self.req.thread_id, work)

    def _position(self) -> int:
        """Where the answer goes in the thread: after the request's messages, or in place of
        the assistant message a continuation extends."""
        extends = self._ready is not None and self._ready.plan.answer_base is not None
        return len(self.req.messages) - (1 if extends else 0)
