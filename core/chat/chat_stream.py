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
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import openai

from ..base.error_codes import coded, stream_error_text
from ..base.ui_messages import tool_name_of
from ..base.wire_types import ContextReport, UIMessage
from ..context.context_engine import Assembled
from ..context.window_tools import not_offered_note
from ..provider.output_limit import OutputMeter, cut_note
from ..provider.provider import Provider, ProviderError
from ..provider.provider_profiles import is_cache_full, is_context_overflow, window_from_error
from ..provider.shared_cache import others_done
from ..stream import ui_stream as ui
from ..stream.stream_translate import StepTranslator, Usage, new_id
from ..stream.ui_assembler import MessageAssembler
from ..tools.documents import Citations, next_citation_id
from ..tools.server_tools import ToolContext, ToolFailure
from ..tools.tool_registry import get_tool, server_tool_outputs
from .chat_plan import ChatPlan
from .failures import owned_error

log = logging.getLogger("comfyui_assistant")


# Builds the exact request for the answer so far (the context engine); the optional window
# overrides ours after a provider's "context length exceeded".
Assemble = Callable[[UIMessage, int | None], Assembled]


@dataclass(frozen=True)
class StepHooks:
    """What the step loop calls back into, given by whoever runs the answer (the chat turn, a
    delegated task)."""

    assemble: Assemble
    # Work the user sees before the first model call (a summary of the thread still being
    # made): its chunks (`data-status` parts) come first in the answer.
    before: Callable[[], AsyncIterator[ui.Chunk]] | None = None
    # True when the next step must be the last, offering no tools (a delegated task's budget
    # nearly spent): checked before each step.
    wrap_up: Callable[[], bool] | None = None

    def last_step(self, plan: ChatPlan, step: int) -> bool:
        return step == plan.max_steps - 1 or (self.wrap_up is not None and self.wrap_up())


@dataclass
class ChatOutcome:
    """What happened: for the log line, the stored answer and the context report."""

    message: UIMessage | None = None  # the answer as it streams
    model: str | None = None
    finish_reason: str = "other"
    usage: Usage | None = None
    last_usage: Usage | None = None  # the last step's: its prompt is the largest one
    assembled: Assembled | None = None
    steps: int = 0
    error: str | None = None
    error_kind: str | None = None
    started_at: float = field(default_factory=time.monotonic)
    on_usage: Callable[[Assembled, Usage], None] | None = None
    correction: Any = None  # the learned token correction, persisted after the answer
    revision: int = 0  # chunks applied to `message` so far (the partial saver watches it)
    # the window a provider's overflow error stated, and ours it replaced (to remember)
    overflow_window: tuple[int, int] | None = None
    limited: bool = False  # the last step still wanted tools, which did not run
    assembler: MessageAssembler | None = None  # builds `message` from the chunks
    waiting_since: float | None = None  # a model call is out and has shown nothing yet
    waiting_shown: bool = False  # ... and the user was told we wait for it

    def apply(self, chunk: ui.Chunk) -> ui.Chunk:
        """A chunk of the answer, applied to `message` (the stored answer matches the stream)."""
        if self.assembler is not None:
            self.assembler.apply(chunk)
        self.revision += 1
        return chunk

    def waiting_note(self) -> ui.Chunk | None:
        """While a model call is silent (the pump asks, sse.py): how long it has been waited
        for. A local model reading a long prompt can take a minute before its first token,
        and only llama.cpp reports its progress."""
        if self.waiting_since is None:
            return None
        took = time.monotonic() - self.waiting_since
        self.waiting_shown = True
        text = f"Waiting for the model… ({took:.0f} s)"
        return self.apply(ui.Data("status", {"text": text, "done": False}, id="status"))

    def model_spoke(self) -> ui.Chunk | None:
        """The model answered: the waiting note, if shown, is cleared."""
        self.waiting_since = None
        if not self.waiting_shown:
            return None
        self.waiting_shown = False
        return self.apply(ui.Data("status", {"text": "", "done": True}, id="status"))

    def observe(self, assembled: Assembled, usage: Usage) -> None:
        self.usage = _add_usage(self.usage, usage)
        self.last_usage = usage
        if self.on_usage is not None:
            self.on_usage(assembled, usage)

    def report(self) -> ContextReport | None:
        """The last step's context report, with what the provider reported for it."""
        if self.assembled is None:
            return None
        report = self.assembled.report.copy()
        if self.last_usage is not None:
            report["reported"] = self.last_usage.prompt_tokens
            report["cachedTokens"] = self.last_usage.cached_tokens
        return report


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


async def _open_step(
    provider: Provider,
    model: str,
    plan: ChatPlan,
    hooks: StepHooks,
    answer: UIMessage,
    last: bool,
    outcome: ChatOutcome,
) -> tuple[Any, Assembled]:
    """Start one model call (the last allowed step offers no tools); when it does not fit,
    try once more (`_retry_step`)."""
    assembled = hooks.assemble(answer, None)
    if plan.slot_note:
        assembled.report["limits"] = [*assembled.report["limits"], plan.slot_note]
    try:
        return await _call(provider, model, plan, assembled, last), assembled
    except openai.APIStatusError as exc:
        if not _did_not_fit(exc.status_code, str(exc.message), _code(exc)):
            raise
        return await _retry_step(
            provider, model, plan, hooks, answer, last, outcome, assembled, exc
        )


def _did_not_fit(status: int | None, message: str, code: str | None) -> bool:
    return is_cache_full(message) or is_context_overflow(status, message, code)


async def _retry_step(
    provider: Provider,
    model: str,
    plan: ChatPlan,
    hooks: StepHooks,
    answer: UIMessage,
    last: bool,
    outcome: ChatOutcome,
    assembled: Assembled,
    exc: openai.APIError,
) -> tuple[Any, Assembled]:
    """The step again after the provider said it did not fit. llama.cpp's shared cache filled
    while decoding (several requests at once): the same request, once the others are done,
    and the window stands (core/provider/shared_cache.py). Else for the window the overflow
    error states (or 75% of ours), remembered for the next turns (`outcome.overflow_window`)."""
    if is_cache_full(str(exc.message)):
        log.warning("the server's shared cache filled while decoding; retrying once it is free")
        await others_done(provider.settings, model)
        retried = CACHE_FULL_RETRY
    else:
        window = window_from_error(str(exc.message)) or int(assembled.budget.window.tokens * 0.75)
        log.warning("the provider's window is smaller than ours; retrying with %d", window)
        outcome.overflow_window = (window, assembled.budget.window.tokens)
        assembled, retried = hooks.assemble(answer, window), "retried: overflow"
    assembled.report["limits"] = [*assembled.report["limits"], retried]
    return await _call(provider, model, plan, assembled, last), assembled


CACHE_FULL_RETRY = "retried: the server's shared cache was full (same window)"


async def _call(
    provider: Provider, model: str, plan: ChatPlan, assembled: Assembled, last: bool
) -> Any:
    """The model call for `assembled` (the last allowed step offers no tools)."""
    tools = [] if last else assembled.tools
    limit = assembled.budget.answer_limit(assembled.tokens)
    return await provider.stream(model, assembled.messages, tools, limit, plan.progress, plan.slot)


def _overflow_mid_stream(exc: Exception) -> bool:
    """An overflow reported inside a stream that already started (llama.cpp sends its prompt
    progress first, then "Context size has been exceeded" when its shared cache filled)."""
    return (
        isinstance(exc, openai.APIError)
        and not isinstance(exc, openai.APIStatusError)
        and _did_not_fit(None, str(exc.message), None)
    )


def _code(exc: openai.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


async def chat_chunks(
    provider: Provider,
    model: str,
    plan: ChatPlan,
    hooks: StepHooks | None,
    ctx: ToolContext,
    outcome: ChatOutcome,
) -> AsyncGenerator[ui.Chunk, None]:
    """The answer's chunks: `plan.local_reply` when it has one (then `hooks` may be None),
    else the model's steps, each request built by `hooks.assemble`."""
    assembler = outcome.assembler = MessageAssembler(plan.answer_base)
    outcome.message = assembler.message
    outcome.model = model
    emit = outcome.apply

    yield emit(ui.Start(plan.message_id))
    if plan.local_reply is not None:
        for chunk in local_reply(plan.local_reply):
            yield emit(chunk)
        outcome.finish_reason = "stop"
        return

    if hooks is None:
        raise RuntimeError("the answer has no context engine attached")
    translator = StepTranslator(frozenset())
    stream: Any = None
    started = limited = cut = False
    provider.active += 1
    try:
        yield emit(ui.MessageMetadata({"model": model, "modelSource": plan.model_source}))
        if hooks.before is not None:
            async for chunk in hooks.before():
                yield emit(chunk)
        async for chunk in _answered_approvals(plan, ctx, assembler.message):
            yield emit(chunk)
        for step in range(plan.max_steps):
            last = hooks.last_step(plan, step)
            started = False
            outcome.waiting_since = time.monotonic()
            stream, assembled = await _open_step(
                provider, model, plan, hooks, assembler.message, last, outcome
            )
            offered = frozenset() if last else _names(assembled.tools)
            translator = StepTranslator(
                offered,
                plan.server_tools,
                secrets=(provider.settings.api_key,),
                unoffered=f"Not run: this answer reached its limit of {plan.max_steps} tool steps."
                if last
                else None,
                not_offered=lambda name: not_offered_note(name, plan.profile),
            )
            outcome.assembled = assembled
            outcome.steps += 1
            yield emit(ui.Data("context", assembled.report, id="context"))
            if plan.debug:
                yield ui.Data("context-request", _request_of(assembled), transient=True)
            yield emit(ui.StartStep())
            retried = shown = cut = False
            while True:  # (once more, smaller, when the server says mid-stream it overflowed)
                meter = OutputMeter(assembled.budget.answer_limit(assembled.tokens))
                try:
                    async for chunk in stream:
                        started = True
                        for out in translator.feed(chunk):
                            if not shown and not isinstance(out, ui.Data):
                                shown, cleared = True, outcome.model_spoke()
                                if cleared is not None:
                                    yield cleared
                            yield emit(out)
                        if meter.over(chunk):
                            cut = True
                            break
                    break
                except Exception as exc:
                    if retried or shown or not isinstance(exc, openai.APIError):
                        raise
                    if not _overflow_mid_stream(exc):
                        raise
                    retried = True
                    await stream.close()
                    stream, assembled = await _retry_step(
                        provider,
                        model,
                        plan,
                        hooks,
                        assembler.message,
                        last,
                        outcome,
                        assembled,
                        exc,
                    )
                    outcome.assembled = assembled
                    yield emit(ui.Data("context", assembled.report, id="context"))
            await stream.close()
            stream = None
            if (cleared := outcome.model_spoke()) is not None:
                yield cleared
            if cut:  # a provider that ignored max_tokens: what it said so far, and why it ends
                for out in [*translator.finish_partial(), ui.FinishStep()]:
                    yield emit(out)
                for out in text_step(cut_note(meter.limit)):
                    yield emit(out)
                break
            if not started:
                raise _empty_answer(provider)
            for out in translator.finish():
                yield emit(out)
            if translator.usage is not None:
                outcome.observe(assembled, translator.usage)
            async for out in _run_tools(translator, plan, ctx, assembler.message):
                yield emit(out)
            yield emit(ui.FinishStep())
            if not translator.tool_calls or _needs_user(translator, plan):
                break
            if last:  # the model still wants tools after the last step: say so, in words
                for out in step_limit_note(plan.max_steps, translator):
                    yield emit(out)
                outcome.limited = limited = True
                break
    except Exception as exc:  # (the provider's told as such; ours logged and called a bug)
        said, outcome.error_kind = owned_error(exc, provider, outcome.model, started)
        outcome.error = str(said)
        if (cleared := outcome.model_spoke()) is not None:
            yield cleared
        for out in translator.finish_partial():
            yield emit(out)
        yield ui.Error(stream_error_text(said))
        return
    finally:
        provider.active -= 1
        if stream is not None:
            await stream.close()
    outcome.finish_reason = "length" if cut else "stop" if limited else translator.finish_reason
    metadata: dict[str, Any] = {"model": outcome.model}
    if outcome.usage is not None:
        metadata["usage"] = outcome.usage.as_metadata()
    report = outcome.report()
    if report is not None:
        yield emit(ui.Data("context", report, id="context"))
    yield emit(ui.Finish(outcome.finish_reason, metadata))


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


def _add_usage(total: Usage | None, step: Usage) -> Usage:
    if total is None:
        return step
    cached = (total.cached_tokens or 0) + (step.cached_tokens or 0)
    return Usage(
        total.prompt_tokens + step.prompt_tokens,
        total.completion_tokens + step.completion_tokens,
        total.total_tokens + step.total_tokens,
        cached if total.cached_tokens is not None or step.cached_tokens is not None else None,
    )


def local_reply(text: str) -> list[ui.Chunk]:
    """An answer that needs no model (unknown commands and skills)."""
    return [*text_step(text), ui.Finish("stop")]


def log_outcome(thread_id: str, outcome: ChatOutcome, status: str) -> None:
    """One line per request, with the context report's figures."""
    usage = outcome.usage
    tokens = f"{usage.prompt_tokens}+{usage.completion_tokens}" if usage else "n/a"
    report = outcome.report()
    context = "context=n/a"
    if report is not None:
        counts = report["counts"]
        context = (
            f"context={report['estimated']}/{report['budget']} window={report['window']['tokens']}"
            f"({report['window']['source']}) kept={counts['kept']} digested={counts['digested']}"
            f" summarized={counts['summarized']} dropped={counts['dropped']}"
        )
    log.info(
        "chat thread=%s message=%s model=%s finish=%s steps=%d tokens=%s %s %s in %.2fs",
        thread_id,
        outcome.message and outcome.message.get("id"),
        outcome.model,
        outcome.finish_reason if outcome.error is None else f"error:{outcome.error_kind}",
        outcome.steps,
        tokens,
        context,
        status,
        time.monotonic() - outcome.started_at,
    )
