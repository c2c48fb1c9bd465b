"""The work a chat turn does after its response started and before the first model call, each
piece shown to the user as it goes (`data-status` parts): what this model cannot do (said once),
a shared cache settling, the server's own counts calibrating the correction, a summary the
thread needs now, and the earlier passages recalled for a message sent for the first time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

from ..context import Assembled
from ..memory import recall_for_turn
from ..provider import ChatLease, ContextBudgetError
from ..store import SentTurns, ThreadState
from ..stream import ui_stream as ui
from ..tokens import counter_for
from .chat_context import ChatContext, calibrate, compact, reload_summary
from .chat_plan import ChatPlan
from .turn_parts import TurnParts

STATUS_EVERY = 5.0  # seconds between status updates while the user waits for a summary


@dataclass(frozen=True)
class FirstWork:
    """What the work before the first model call reads (prepared with the turn)."""

    parts: TurnParts
    thread_id: str
    plan: ChatPlan
    model: str
    context: ChatContext
    state: ThreadState
    notices: tuple[tuple[str, str], ...]  # (id, text) of what is said once about this model
    lease: ChatLease | None  # in flight on a server with a shared cache
    calibrate: Assembled | None  # the first request, when the server counts it
    unsent: str | None  # the latest user message, sent for the first time

    async def chunks(self) -> AsyncIterator[ui.Chunk]:
        for key, text in self.notices:
            yield ui.Data("status", {"text": text, "done": True}, id=key)
        if self.lease is not None:
            async for text in self.lease.settling(self.parts.provider.settings, self.model):
                yield ui.Data("status", {"text": text, "done": not text}, id="status")
        await self._calibrated()
        async for chunk in self._summary_first():
            yield chunk
        await self._recalled()

    async def _calibrated(self) -> None:
        """When due, the server's own counts of the first request calibrate the correction
        (a few local round trips): after the response started, so the first byte never
        waits for them; the first model request is then assembled with the new factors."""
        first, context = self.calibrate, self.context
        if first is None:
            return
        answer = self.plan.answer_start()
        if await calibrate(context, self.parts.provider, self.model, answer, first) is not None:
            await self.parts.save_corrections(context.correction.as_dict())

    async def _summary_first(self) -> AsyncIterator[ui.Chunk]:
        """A thread that no longer fits, with no summary made ahead to take the place of its
        oldest messages: wait for the one being made, or make it now, and say so meanwhile
        (room is made once, by the summary, rather than by dropping messages now and
        summarizing on the next turn: each a request re-read from its start)."""
        context, plan, thread_id = self.context, self.plan, self.thread_id
        if not context.inputs.settings.summarize or not context.overflows(plan.answer_start()):
            return
        compactor = self.parts.compactor
        if compactor.running(thread_id) is None:
            work = compact(
                context, plan.ui_history, self.parts.provider, self.model, self.state,
                thread_id, plan.slot, needed=True,
            )  # fmt: skip
            compactor.start(thread_id, work)
        task = compactor.running(thread_id)
        if task is None:
            return
        started = time.monotonic()
        waiting = {"text": "Summarizing earlier messages…", "done": False}
        yield ui.Data("status", waiting, id="status")
        while not (await asyncio.wait({task}, timeout=STATUS_EVERY))[0]:  # still working
            took = time.monotonic() - started
            text = f"Summarizing earlier messages… ({took:.0f} s)"
            yield ui.Data("status", {"text": text, "done": False}, id="status")
        await reload_summary(context, self.state, thread_id)
        took = time.monotonic() - started
        text = f"Summarized earlier messages ({took:.0f} s)."
        yield ui.Data("status", {"text": text, "done": True}, id="status")

    async def _recalled(self) -> None:
        """The first time the latest user message is sent: the passages of earlier messages
        no longer in the request that best match it are attached to it, and it is recorded
        as sent so (every later request resends it byte for byte)."""
        latest, context, plan = self.unsent, self.context, self.plan
        if latest is None:
            return
        store, sent = self.parts.store, context.inputs.sent
        assert isinstance(sent, dict)
        answer = plan.answer_start()
        first = context.assemble(answer)
        # within its share of the budget, and only in the room the request leaves: recall that
        # made the request overflow took a deeper summary, and the thread lost more verbatim
        # than it brought back (bench/memory_prose.py at 8K: 0.44 kept instead of 0.63)
        budget, factor = first.budget, max(1.0, context.inputs.correction.messages)
        free = budget.available + budget.tools - first.tokens
        room = int(min(budget.available * context.inputs.settings.recall_share, free) / factor)
        turns = [sent[i] for i in first.present if i in sent and i != latest]
        recalled = {p.message_id for t in turns if t.recall for p in t.recall.passages}
        found = await recall_for_turn(
            store, self.thread_id, plan.ui_history, first.present, recalled, room,
            counter_for(self.model).text, time.time(),
        )  # fmt: skip
        if found is not None:
            turn, summary = sent[latest], context.inputs.summary
            since = summary.until if summary is not None else None
            sent[latest] = replace(turn, recall=replace(found, since=since))
            context.forget()
            try:
                context.assemble(answer)
            except ContextBudgetError:  # the message itself needs that room
                sent[latest] = turn
                context.forget()
        await SentTurns(store).record(self.thread_id, latest, sent[latest])
