"""One chat turn, from a parsed request to the stored answer: `prepare` (the request's
messages stored, the sources read, the answer planned, the model chosen, the first request
assembled), `stream` (the answer's UI message chunks, saved as they come), `finish` (the
answer, the context report and the learned token correction stored; one log line). The
HTTP route only moves bytes: it parses the body, writes the chunks and says how the stream
ended."""

from __future__ import annotations

import asyncio
import datetime
import enum
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from types import TracebackType

from ..base.error_codes import Message, message_of, stream_error_text
from ..context.context_engine import Assembled
from ..context.system_prompt import user_context_block
from ..files.attachments import with_thread_files
from ..files.project_documents import for_turn
from ..files.projects import Projects
from ..files.run_images import run_picture
from ..memory.recall_tool import look_back
from ..memory.turn_recall import recall_for_turn
from ..provider.budget import ContextBudgetError
from ..provider.provider import Provider
from ..provider.provider_probes import sees_images
from ..provider.shared_cache import ChatLease
from ..provider.slots import choose_slot
from ..store.delegations import Delegations
from ..store.sent_turns import SentTurn, SentTurns, due_note
from ..store.store import Store
from ..store.thread_state import ThreadState
from ..store.threads import Threads
from ..stream import ui_stream as ui
from ..tokens.image_costs import image_budget, image_cost_for
from ..tokens.tokens import counter_for
from ..tools.server_tools import ToolContext
from .answer_saver import AnswerSaver, has_content
from .chat_context import (
    ChatContext,
    calibrate,
    compact,
    prepare_context,
    reload_summary,
)
from .chat_plan import ChatPlan, build_plan, response_message_id, skill_use, ui_history_of
from .chat_request import ChatRequest
from .chat_sources import gather_sources, user_snapshot
from .chat_stream import ChatOutcome, StepRunner, log_outcome
from .delegation import DELEGATE, DelegateBudget, Delegator, Parent
from .failures import owned_error
from .step_calls import StepHooks
from .turn_parts import TurnParts
from .turn_setup import WINDOWS, set_up_turn, used_learned_window, window_key

log = logging.getLogger("comfyui_assistant")


NOTICES = "notices"  # store namespace: what the user was told once
NO_TOOLS = (
    "This model cannot use tools here: the server's chat template does not render them, so "
    "I can answer but cannot read or change your workflow. For graph edits, use a model or "
    "chat template with tool support (llama.cpp: --jinja with a tool-capable template)."
)
NO_VISION = (
    "This model cannot see images: it gets a short note about each attached image (its name, "
    "size and any ComfyUI workflow in it) instead. For a model that can, set LLM_VISION=1."
)
STATUS_EVERY = 5.0  # seconds between status updates while the user waits for a summary


async def first_notice(store: Store, key: str) -> bool:
    """True the first time this is asked for `key` (then remembered)."""
    if (await store.get_settings(NOTICES)).get(key):
        return False
    await store.update_settings(NOTICES, {key: True})
    return True


class StreamEnd(enum.Enum):
    """How the response stream ended, as the route saw it."""

    WRITTEN = "written"  # every chunk reached the client
    CLIENT_GONE = "client gone"  # the browser disconnected (stop, a closed tab)
    FAILED = "failed"  # an internal error ended the stream


class ChatTurn:
    """Use as `async with ChatTurn(parts, req) as turn:`, which stores the request's
    messages (on the database's thread while the turn plans) and waits for that write on the
    way out, also after an early error answer."""

    def __init__(self, parts: TurnParts, req: ChatRequest, *, debug: bool = False):
        self.parts, self.req, self.debug = parts, req, debug
        self.message_id = ""
        self._runner: StepRunner | None = None  # runs the answer (set by prepare)
        self.headers: dict[str, str] = {}  # the first request's size, for the response
        self._stored: asyncio.Future[None] | None = None
        self._threads: Threads | None = None
        self._plan: ChatPlan | None = None
        self._provider: Provider | None = None
        self._model = ""
        self._tools: ToolContext | None = None
        self._saver: AnswerSaver | None = None
        self._context: ChatContext | None = None
        self._no_tools = False  # say once that this model cannot use tools
        self._no_vision = False  # ... and that it cannot see images
        self._calibrate: Assembled | None = None  # the first request, when the server counts
        self._state: ThreadState | None = None
        self._unsent: str | None = None  # the latest user message, sent for the first time
        self._saved = False  # the answer's final save ran before the stream ended
        self._lease: ChatLease | None = None  # in flight on a server with a shared cache

    async def __aenter__(self) -> ChatTurn:
        req = self.req
        self._threads = threads = self.parts.threads
        self._stored = asyncio.ensure_future(
            threads.sync(
                req.thread_id, req.messages, replaces=req.message_id, workflow=req.workflow
            )
        )
        await asyncio.sleep(0)  # (one turn of the loop hands the write over)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:  # (its hooks' `before` is this turn's: a cycle)
            self._runner.hooks = None
        if self._lease is not None:  # (a summary made ahead may start now)
            self._lease.end()
        stored = self._stored
        if stored is None:
            return
        await asyncio.wait({stored})
        if not stored.cancelled() and stored.exception() is not None:
            log.error("storing the request's messages failed: %s", stored.exception())

    async def prepare(self) -> Message | None:
        """Plan the answer and assemble its first request. Returns the message to answer
        with instead (the context cannot fit, the provider cannot be reached), or None."""
        parts, req = self.parts, self.req
        self.message_id = response_message_id(req.messages)
        snap = await user_snapshot(parts)
        sources = await gather_sources(parts, snap)
        provider = self._provider = parts.provider
        assert self._stored is not None and self._threads is not None, "use `async with`"
        # the user's message is stored before the model is called (and the context then
        # knows a thread just created has no summary to read)
        await self._stored
        store = self._threads.store
        turns, state = SentTurns(store), ThreadState(store)
        sent = await turns.of_thread(req.thread_id)
        first_turn = sum(m["role"] == "user" for m in req.messages) <= 1
        skill = skill_use(req, sources, sent)
        self._tools = ToolContext(
            thread_id=req.thread_id,
            threads=self._threads,
            system_skills=parts.system_skills,
            user_skills=parts.user_skills,
            environment=parts.environment,
            read_context_section=sources.system_context.section,
            look_back=look_back(store, req.thread_id),
        )  # (the search's size follows the profile, once the window is known)
        if skill.reply is not None:  # answered here, without the model
            self._plan = build_plan(req, sources, first_turn, skill)
            self._model = provider.settings.model or ""
            self._runner = StepRunner(provider, self._model, self._plan, None, self._tools)
            return None
        latest = skill.latest_id
        if latest is not None and latest not in sent:  # first sent now: recorded as sent
            users = [str(m.get("id")) for m in req.messages if m["role"] == "user"]
            earlier = [sent.get(i) for i in users[: users.index(latest)]] if latest in users else []
            now = datetime.datetime.now().astimezone()
            sent[latest] = SentTurn(due_note(snap.reminders, now, earlier), skill.text)
            self._unsent = latest  # (recorded once its recalled passages are known)
        try:
            setup = await set_up_turn(store, provider, sources)
            self._model, caps, window = setup.model, setup.caps, setup.window
            profile, vision = setup.profile, sees_images(caps, sources.environ)
            history, unseen = await with_thread_files(
                store, req.thread_id, ui_history_of(req.messages), vision
            )
            shown = None
            if vision:  # the newest run's images, as the window affords
                cost, budget = image_cost_for(self._model), image_budget(window.tokens)
                shown = await run_picture(
                    store, parts.outputs, req.thread_id, req.messages, cost, budget
                )
            if unseen:
                self._no_vision = await first_notice(
                    store, f"vision {window_key(provider, self._model)}"
                )
            self._tools = replace(self._tools, search_limit=profile.search_results)
            if caps.slots:  # llama.cpp: a summary made ahead holds the slot the chat needs
                await parts.compactor.cancel(req.thread_id)  # (made again after the answer)
            # (a shared cache: no background work decodes beside the answer; shared_cache.py)
            self._lease = lease = await ChatLease.start(provider.settings, self._model)
            slot = await choose_slot(
                provider.settings, self._model, caps, req.thread_id, lease.draining()
            )
            plan = self._plan = setup.plan(
                req, sources, first_turn, skill, history=history, slot=slot, debug=self.debug
            )
            if not setup.tools_usable:
                self._no_tools = await first_notice(store, window_key(provider, self._model))
            user_context = user_context_block(sources.user, profile.user_limits(sources.environ))
            project = await for_turn(Projects(store), req.thread_id, req.messages, window.tokens)
            context = await prepare_context(
                plan=plan,
                provider=provider,
                model=self._model,
                window=window,
                state=state,
                thread_id=req.thread_id,
                environ=parts.options.environ,
                stored_correction=await parts.corrections(),
                sent=sent,
                user_context=user_context,
                project=project,
                shown=shown,
            )
            first = context.assemble(plan.answer_start(), None)
            self._calibrate = first if caps.counts else None
        except ContextBudgetError as exc:
            return message_of(exc)
        except Exception as exc:  # (the provider's told as such; ours logged and called a bug)
            return owned_error(exc, provider, provider.settings.model)[0]
        self._context, self._state = context, state
        if DELEGATE in plan.server_tools:
            parent = Parent(
                provider, self._model, window, profile, parts.options.environ,
                sources.environment_line, user_context, context.inputs.correction,
                req.thread_id, plan.message_id, Delegations(store),
                DelegateBudget.from_env(parts.options.environ),
            )  # fmt: skip
            self._tools = replace(self._tools, delegate=Delegator(parent).run)
        self.headers = {
            "X-Context-Budget": str(first.budget.available),
            "X-Context-Window": str(first.budget.window.tokens),
        }
        if not context.overflows(plan.answer_start()):
            self.headers["X-Context-Tokens"] = str(first.tokens)
        # (else the request is known once the summary is: the report says it)
        hooks = StepHooks(context.assemble, self._before)
        self._runner = StepRunner(
            provider, self._model, plan, hooks, self._tools, context.correction
        )
        return None

    @property
    def outcome(self) -> ChatOutcome:
        """What the answer's run returns (kept current as it streams)."""
        assert self._runner is not None, "prepare first"
        return self._runner.outcome

    async def _before(self) -> AsyncIterator[ui.Chunk]:
        if self._no_tools:
            yield ui.Data("status", {"text": NO_TOOLS, "done": True}, id="tools")
        if self._no_vision:
            yield ui.Data("status", {"text": NO_VISION, "done": True}, id="vision")
        if self._lease is not None and self._provider is not None:
            async for text in self._lease.settling(self._provider.settings, self._model):
                yield ui.Data("status", {"text": text, "done": not text}, id="status")
        await self._calibrated()
        async for chunk in self._summary_first():
            yield chunk
        await self._recalled()

    async def _recalled(self) -> None:
        """The first time the latest user message is sent: the passages of earlier messages
        no longer in the request that best match it are attached to it, and it is recorded
        as sent so (every later request resends it byte for byte)."""
        latest, context, plan = self._unsent, self._context, self._plan
        if latest is None or context is None or plan is None or self._threads is None:
            return
        self._unsent = None
        store, sent = self._threads.store, context.inputs.sent
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
            store, self.req.thread_id, plan.ui_history, first.present, recalled, room,
            counter_for(self._model).text, time.time(),
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
        await SentTurns(store).record(self.req.thread_id, latest, sent[latest])

    async def _calibrated(self) -> None:
        """When due, the server's own counts of the first request calibrate the correction
        (a few local round trips): after the response started, so the first byte never
        waits for them; the first model request is then assembled with the new factors."""
        first, context, provider = self._calibrate, self._context, self._provider
        if first is None or context is None or provider is None or self._plan is None:
            return
        answer = self._plan.answer_start()
        if await calibrate(context, provider, self._model, answer, first) is not None:
            await self.parts.save_corrections(context.correction.as_dict())

    async def _summary_first(self) -> AsyncIterator[ui.Chunk]:
        """A thread that no longer fits, with no summary made ahead to take the place of its
        oldest messages: wait for the one being made, or make it now, and say so meanwhile
        (room is made once, by the summary, rather than by dropping messages now and
        summarizing on the next turn: each a request re-read from its start)."""
        context, state, plan = self._context, self._state, self._plan
        if context is None or state is None or plan is None or self._provider is None:
            return
        if not context.inputs.settings.summarize or not context.overflows(plan.answer_start()):
            return
        compactor, thread_id = self.parts.compactor, self.req.thread_id
        if compactor.running(thread_id) is None:
            work = compact(
                context, plan.ui_history, self._provider, self._model, state, thread_id,
                plan.slot, needed=True,
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
        await reload_summary(context, state, thread_id)
        took = time.monotonic() - started
        text = f"Summarized earlier messages ({took:.0f} s)."
        yield ui.Data("status", {"text": text, "done": True}, id="status")

    async def stream(self) -> AsyncIterator[ui.Chunk]:
        """The answer's chunks; what it shows so far is saved every few seconds."""
        plan, provider, tools = self._plan, self._provider, self._tools
        assert plan is not None and provider is not None and tools is not None, "prepare first"
        assert self._threads is not None
        saver = self._saver = AnswerSaver(
            self._threads, self.req.thread_id, self._position(), self.outcome,
            self.parts.options.partial_save_seconds,
        )  # fmt: skip
        saver.start()
        outcome = self.outcome
        assert self._runner is not None
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
        outcome, threads, thread_id = self.outcome, self._threads, self.req.thread_id
        status, note = "interrupted", "stopped: the browser disconnected"
        if end is StreamEnd.WRITTEN:
            status, note = (
                ("complete", "completed") if outcome.error is None else (status, "failed")
            )
        elif end is StreamEnd.FAILED:
            note = "failed: an internal error ended the stream"

        async def save() -> None:
            assert threads is not None
            if outcome.message is not None and has_content(outcome.message) and not self._saved:
                await threads.save_answer(thread_id, outcome.message, self._position(), status)
            report = outcome.report()
            if report is not None:
                await ThreadState(threads.store).set_report(thread_id, report)
            taken = self._context.taken if self._context is not None else None
            if taken is not None:  # the summary made ahead was sent: it is the one in use
                await ThreadState(threads.store).use_next_summary(
                    thread_id, taken.text, taken.until, taken.fallback
                )
            if outcome.correction is not None and outcome.last_usage is not None:
                await self.parts.save_corrections(outcome.correction.as_dict())
            if outcome.overflow_window is not None and self._provider is not None:
                told, over = outcome.overflow_window
                key = window_key(self._provider, self._model)
                store = self.parts.store
                await store.update_settings(WINDOWS, {key: {"tokens": told, "over": over}})
            elif self._provider is not None and self._learned():
                await used_learned_window(self.parts.store, self._provider, self._model)

        try:
            await asyncio.shield(save())
        except Exception:  # (the answer's own save, when in the stream, told the user)
            log.exception("saving the turn's answer, report or learned figures failed")
        log_outcome(thread_id, outcome, note)
        self._compact_after(end)

    def _learned(self) -> bool:
        """This turn planned with a window learned from an overflow error."""
        return self._context is not None and self._context.inputs.window.source == "provider error"

    def _compact_after(self, end: StreamEnd) -> None:
        """A finished answer: summarize in the background if the next turn would need it."""
        outcome, plan, context = self.outcome, self._plan, self._context
        finished = end is StreamEnd.WRITTEN and outcome.error is None
        # (not while the panel runs a tool call: it resubmits at once, the turn goes on)
        if not finished or outcome.finish_reason == "tool-calls" or outcome.message is None:
            return
        if plan is None or context is None or self._provider is None or self._state is None:
            return
        thread = [*plan.ui_history, outcome.message]
        work = compact(
            context, thread, self._provider, self._model, self._state, self.req.thread_id,
            plan.slot,
        )  # fmt: skip
        self.parts.compactor.start(self.req.thread_id, work)

    def _position(self) -> int:
        """Where the answer goes in the thread: after the request's messages, or in place of
        the assistant message a continuation extends."""
        extends = self._plan is not None and self._plan.answer_base is not None
        return len(self.req.messages) - (1 if extends else 0)
