"""One `/api/assistant/chat` answer as UI Message Stream chunks.

The model is called in steps. Calls to server tools run here and their results go back to the
model in the next step of the same response; a call to a panel tool ends the response (the
panel runs it and resubmits). The last allowed step offers no tools, so a looping model must
answer in words. Each step's request is the history plus the answer so far, converted from
the very UI message the client holds, so the next turn's request repeats it byte for byte.

Every failure ends the stream with an `error` chunk that says what to do, after closing any
open part so the client keeps what it showed. The provider stream is always closed on the way
out, including when the consumer stops iterating (browser gone, stop button).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import openai

from ..base import UIMessage, coded, stream_error_text, tool_name_of
from ..context import Assembled, not_offered_note
from ..provider import OutputMeter, Provider, ProviderError, cut_note
from ..stream import MessageAssembler, StepTranslator, new_id, schemas_of
from ..stream import ui_stream as ui
from ..tools import (
    Citations,
    ToolContext,
    ToolFailure,
    get_tool,
    next_citation_id,
    server_tool_outputs,
)
from .chat_outcome import ChatOutcome
from .chat_plan import ChatPlan
from .failures import owned_error
from .step_calls import OpenStep, StepCall, StepHooks, open_step, overflowed_mid_stream, retry_step

log = logging.getLogger("comfyui_assistant")


async def _run_tools(
    translator: StepTranslator, plan: ChatPlan, ctx: ToolContext, answer: UIMessage
) -> AsyncIterator[ui.Chunk]:
    """The step's server tool calls, in order; one that changes what the user keeps asks first
    (it runs when the user allows it: `_answered_approvals`)."""
    citations: Citations | None = None
    for call in translator.tool_calls:
        if call.input is None or call.name not in plan.server_tools:
            continue
        assert call.id is not None
        asks = _asks(call.name)
        if asks is not None:
            yield ui.ToolApprovalRequest(approval_id(call.id), call.id, asks(call.input))
            continue
        if citations is None:  # numbered on from the thread's documents (core/tools/documents.py)
            citations = Citations(next_citation_id([*plan.ui_history, answer]))
        async for out in _run_server_tool(
            call.name, call.input, replace(ctx, citations=citations), call.id
        ):
            yield out


async def _answered_approvals(
    plan: ChatPlan, ctx: ToolContext, answer: UIMessage
) -> AsyncIterator[ui.Chunk]:
    """The tool calls of the answer this request continues that the user has answered: a
    denied one ends denied, a panel tool's as a server tool's (its part is "output-denied" from
    then on, in the panel and in the stored thread, so a later message leaves it as it is:
    assistant-ui rewrites a call still waiting when the user sends one); an allowed server tool
    runs (before the model is asked again)."""
    for part in answer.get("parts") or []:
        name = tool_name_of(part)
        if name is None or part.get("state") != "approval-responded":
            continue
        call_id, approval = part["toolCallId"], part.get("approval")
        if not isinstance(approval, dict) or approval.get("approved") is not True:
            yield ui.ToolOutputDenied(call_id)
            continue
        if name not in plan.server_tools:  # (allowed: the panel runs it)
            continue
        given = part.get("input")
        args = given if isinstance(given, dict) else {}
        citations = Citations(next_citation_id([*plan.ui_history, answer]))
        async for out in _run_server_tool(
            str(name), args, replace(ctx, citations=citations), call_id
        ):
            yield out


def approval_id(call_id: str) -> str:
    return f"approval_{call_id}"


def _asks(name: str) -> Callable[[dict[str, Any]], str] | None:
    spec = get_tool(name)
    return None if spec is None else spec.asks


async def _run_server_tool(
    name: str, args: dict[str, Any], ctx: ToolContext, call_id: str
) -> AsyncIterator[ui.Chunk]:
    try:
        outputs = server_tool_outputs(name, args, replace(ctx, call_id=call_id))
        async for out in outputs:
            yield ui.ToolOutputAvailable(
                call_id, out.value, provider_executed=True, preliminary=out.preliminary or None
            )
    except ToolFailure as exc:
        yield ui.ToolOutputError(call_id, str(exc), provider_executed=True)


def _needs_user(translator: StepTranslator, plan: ChatPlan) -> bool:
    """The step's calls wait for the panel: to run its tools, or the user's approval."""
    return any(
        c.input is not None and (c.name not in plan.server_tools or _asks(c.name) is not None)
        for c in translator.tool_calls
    )


def _request_of(assembled: Assembled) -> dict[str, Any]:
    """?debug=context: the exact request of this step, as sent."""
    return {"messages": assembled.messages, "tools": assembled.tools}


def _names(tools: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in tools)


class StepRunner:
    """Runs one answer (`chat_chunks`): `plan.local_reply` when it has one (then `hooks` may
    be None), else the model's steps, each request built by `hooks.assemble`. What it returns
    is `outcome`: kept current as the chunks stream (the partial saver watches it), whole once
    they end. Besides it, only what a stream must keep changes: the step being read (its
    translator, the open model call, whether it started, showed anything, was cut) and how the
    answer ends."""

    def __init__(
        self,
        provider: Provider,
        model: str,
        plan: ChatPlan,
        hooks: StepHooks | None,
        ctx: ToolContext,
        correction: Any = None,
    ) -> None:
        self.provider, self.model, self.plan, self.hooks, self.ctx = (
            provider, model, plan, hooks, ctx,
        )  # fmt: skip
        self.outcome = ChatOutcome(correction=correction)
        self._translator = StepTranslator(frozenset())
        self._stream: Any = None  # the model call being read (closed on the way out)
        self._started = self._shown = False
        self._cut: OutputMeter | None = None  # the step passed the answer's limit
        self._ending: ui.FinishReason | None = None  # how the answer ends, once a step says

    async def chat_chunks(self) -> AsyncGenerator[ui.Chunk, None]:
        plan, outcome = self.plan, self.outcome
        assembler = outcome.assembler = MessageAssembler(plan.answer_base)
        outcome.message, outcome.model = assembler.message, self.model
        yield outcome.apply(ui.Start(plan.message_id))
        if plan.local_reply is not None:
            for chunk in local_reply(plan.local_reply):
                yield outcome.apply(chunk)
            outcome.finish_reason = "stop"
            return
        if self.hooks is None:
            raise RuntimeError("the answer has no context engine attached")
        self.provider.active += 1
        try:
            async for chunk in self._steps(self.hooks):
                yield chunk
        except Exception as exc:  # (the provider's told as such; ours logged and called a bug)
            for chunk in self._failed(exc):
                yield chunk
            return
        finally:
            self.provider.active -= 1
            if self._stream is not None:
                await self._stream.close()
        for chunk in self._finished():
            yield chunk

    async def _steps(self, hooks: StepHooks) -> AsyncIterator[ui.Chunk]:
        plan, outcome, emit = self.plan, self.outcome, self.outcome.apply
        yield emit(ui.MessageMetadata({"model": self.model, "modelSource": plan.model_source}))
        if hooks.before is not None:
            async for chunk in hooks.before():
                yield emit(chunk)
        answer = outcome.message
        assert answer is not None  # (`chat_chunks` started it)
        async for chunk in _answered_approvals(plan, self.ctx, answer):
            yield emit(chunk)
        for step in range(plan.max_steps):
            last = hooks.last_step(plan, step)
            call = StepCall(self.provider, self.model, plan, hooks, answer, last)
            async for chunk in self._step(call):
                yield chunk
            if self._ending is not None:
                return

    async def _step(self, call: StepCall) -> AsyncIterator[ui.Chunk]:
        """One model call, read to its end (once more, smaller, when the server says
        mid-stream that it overflowed), then its tools; `_ending` says when it is the last."""
        outcome, emit = self.outcome, self.outcome.apply
        self._started = self._shown = False
        self._cut = None
        outcome.waiting_since = time.monotonic()
        assembled = await self._open(open_step(call))
        offered = frozenset() if call.last else _names(assembled.tools)
        profile = self.plan.profile  # (the note below must not hold `self`: no cycle via it)
        self._translator = StepTranslator(
            offered,
            self.plan.server_tools,
            secrets=(self.provider.settings.api_key,),
            unoffered=f"Not run: this answer reached its limit of {self.plan.max_steps} tool steps."
            if call.last
            else None,
            not_offered=lambda name: not_offered_note(name, profile),
            schemas=schemas_of(assembled.tools),
        )
        outcome.steps += 1
        yield emit(ui.Data("context", assembled.report, id="context"))
        if self.plan.debug:
            yield ui.Data("context-request", _request_of(assembled), transient=True)
        yield emit(ui.StartStep())
        retried = False
        while True:
            try:
                async for chunk in self._read(assembled):
                    yield chunk
                break
            except openai.APIError as exc:
                if retried or self._shown or not overflowed_mid_stream(exc):
                    raise
                retried = True
                await self._stream.close()
                assembled = await self._open(retry_step(call, assembled, exc))
                yield emit(ui.Data("context", assembled.report, id="context"))
        await self._stream.close()
        self._stream = None
        async for chunk in self._step_end(call, assembled):
            yield chunk

    async def _open(self, opening: Awaitable[OpenStep]) -> Assembled:
        opened = await opening
        self._stream, self.outcome.assembled = opened.stream, opened.assembled
        if opened.overflow_window is not None:
            self.outcome.overflow_window = opened.overflow_window
        return opened.assembled

    async def _read(self, assembled: Assembled) -> AsyncIterator[ui.Chunk]:
        """The model's stream as it comes, translated; cut where it passes the answer's limit
        (a provider that ignores max_tokens)."""
        meter = OutputMeter(assembled.budget.answer_limit(assembled.tokens))
        async for chunk in self._stream:
            self._started = True
            for out in self._translator.feed(chunk):
                if not self._shown and not isinstance(out, ui.Data):
                    self._shown, cleared = True, self.outcome.model_spoke()
                    if cleared is not None:
                        yield cleared
                yield self.outcome.apply(out)
            if meter.over(chunk):
                self._cut = meter
                return

    async def _step_end(self, call: StepCall, assembled: Assembled) -> AsyncIterator[ui.Chunk]:
        outcome, emit, translator = self.outcome, self.outcome.apply, self._translator
        if (cleared := outcome.model_spoke()) is not None:
            yield cleared
        if self._cut is not None:  # what it said so far, and why it ends
            note = text_step(cut_note(self._cut.limit))
            for out in [*translator.finish_partial(), ui.FinishStep(), *note]:
                yield emit(out)
            self._ending = "length"
            return
        if not self._started:
            raise _empty_answer(self.provider)
        for out in translator.finish():
            yield emit(out)
        if translator.usage is not None:
            outcome.observe(assembled, translator.usage)
        async for out in _run_tools(translator, self.plan, self.ctx, call.answer):
            yield emit(out)
        yield emit(ui.FinishStep())
        if not translator.tool_calls or _needs_user(translator, self.plan):
            self._ending = translator.finish_reason
        elif call.last:  # the model still wants tools after the last step: say so, in words
            for out in step_limit_note(self.plan.max_steps, translator):
                yield emit(out)
            outcome.limited, self._ending = True, "stop"

    def _failed(self, exc: Exception) -> list[ui.Chunk]:
        outcome = self.outcome
        said, outcome.error_kind = owned_error(exc, self.provider, outcome.model, self._started)
        outcome.error = str(said)
        cleared = outcome.model_spoke()
        partial = [outcome.apply(out) for out in self._translator.finish_partial()]
        return [
            *([] if cleared is None else [cleared]),
            *partial,
            ui.Error(stream_error_text(said)),
        ]

    def _finished(self) -> list[ui.Chunk]:
        outcome = self.outcome
        outcome.finish_reason = reason = self._ending or self._translator.finish_reason
        metadata: dict[str, Any] = {"model": outcome.model}
        if outcome.usage is not None:
            metadata["usage"] = outcome.usage.as_metadata()
        report = outcome.report()
        context = [ui.Data("context", report, id="context")] if report is not None else []
        return [outcome.apply(out) for out in [*context, ui.Finish(reason, metadata)]]


def _empty_answer(provider: Provider) -> ProviderError:
    settings = provider.settings
    return ProviderError(
        coded("provider.empty", name=settings.label, url=settings.base_url), "empty"
    )


def step_limit_note(max_steps: int, translator: StepTranslator) -> list[ui.Chunk]:
    """A last step of text: the answer stopped at the tool-step limit. (In a step of its own,
    so the panel does not take the last step's tool calls as a reason to resubmit.)"""
    names = ", ".join(dict.fromkeys(c.name for c in translator.tool_calls)) or "tools"
    return text_step(
        f"I stopped here: this answer reached its limit of {max_steps} tool steps while the "
        f'model still wanted to call {names}, which did not run. Say "continue" to let it go '
        f"on (LLM_MAX_TOOL_STEPS sets the limit)."
    )


def text_step(text: str) -> list[ui.Chunk]:
    """One step holding one text part."""
    text_id = new_id("txt")
    return [
        ui.StartStep(),
        ui.TextStart(text_id),
        ui.TextDelta(text_id, text),
        ui.TextEnd(text_id),
        ui.FinishStep(),
    ]


def local_reply(text: str) -> list[ui.Chunk]:
    """An answer that needs no model (unknown commands and skills)."""
    return [*text_step(text), ui.Finish("stop")]
