"""One `/api/chat` answer as UI Message Stream chunks.

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
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from . import ui_stream as ui
from .provider import Provider, describe_error
from .server_tools import ToolContext, ToolFailure, run_server_tool
from .stream_translate import StepTranslator, Usage, new_id
from .ui_assembler import MessageAssembler
from .ui_messages import to_openai_messages

log = logging.getLogger("comfyui_assistant")


@dataclass
class ChatPlan:
    """Everything one answer needs, decided before the model is called."""

    system: str
    history: list[dict[str, Any]]  # OpenAI messages before the answer
    message_id: str
    answer_base: dict[str, Any] | None = None  # the assistant message a continuation extends
    tools: list[dict[str, Any]] = field(default_factory=list)
    server_tools: frozenset[str] = frozenset()
    max_steps: int = 8
    local_reply: str | None = None  # answer without the model (e.g. an unknown /skill)

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(t["function"]["name"] for t in self.tools)

    def request(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        system = [{"role": "system", "content": self.system}]
        return system + self.history + to_openai_messages([answer])


@dataclass
class ChatOutcome:
    """What happened: for the log line and for storing the answer."""

    message: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    finish_reason: str = "other"
    usage: Usage | None = None
    steps: int = 0
    error: str | None = None
    error_kind: str | None = None
    started_at: float = field(default_factory=time.monotonic)


def response_message_id(messages: list[dict[str, Any]]) -> str:
    """A continuation (last message is the assistant's) must keep that message's id."""
    last = messages[-1]
    if last.get("role") == "assistant" and isinstance(last.get("id"), str) and last["id"]:
        return str(last["id"])
    return new_id("msg")


async def _run_tools(
    translator: StepTranslator, plan: ChatPlan, ctx: ToolContext
) -> AsyncIterator[ui.Chunk]:
    for call in translator.tool_calls:
        if call.input is None or call.name not in plan.server_tools:
            continue
        assert call.id is not None
        try:
            output = await run_server_tool(call.name, call.input, ctx)
        except ToolFailure as exc:
            yield ui.ToolOutputError(call.id, str(exc), provider_executed=True)
        else:
            yield ui.ToolOutputAvailable(call.id, output, provider_executed=True)


def _needs_panel(translator: StepTranslator, plan: ChatPlan) -> bool:
    return any(
        c.input is not None and c.name not in plan.server_tools for c in translator.tool_calls
    )


async def chat_chunks(
    provider: Provider, plan: ChatPlan, ctx: ToolContext, outcome: ChatOutcome
) -> AsyncIterator[ui.Chunk]:
    assembler = MessageAssembler(plan.answer_base)
    outcome.message = assembler.message

    def emit(chunk: ui.Chunk) -> ui.Chunk:
        assembler.apply(chunk)
        return chunk

    yield emit(ui.Start(plan.message_id))
    if plan.local_reply is not None:
        for chunk in local_reply(plan.local_reply):
            yield emit(chunk)
        outcome.finish_reason = "stop"
        return

    translator = StepTranslator(frozenset())
    stream: Any = None
    started = False
    provider.active += 1
    try:
        model, source = await provider.choose_model()
        outcome.model = model
        yield emit(ui.MessageMetadata({"model": model, "modelSource": source}))
        for step in range(plan.max_steps):
            last = step == plan.max_steps - 1
            tools = [] if last else plan.tools
            translator = StepTranslator(frozenset() if last else plan.tool_names, plan.server_tools)
            started = False
            stream = await provider.stream(model, plan.request(assembler.message), tools)
            outcome.steps += 1
            yield emit(ui.StartStep())
            async for chunk in stream:
                started = True
                for out in translator.feed(chunk):
                    yield emit(out)
            await stream.close()
            stream = None
            for out in translator.finish():
                yield emit(out)
            if translator.usage is not None:
                outcome.usage = _add_usage(outcome.usage, translator.usage)
            async for out in _run_tools(translator, plan, ctx):
                yield emit(out)
            yield emit(ui.FinishStep())
            if not translator.tool_calls or _needs_panel(translator, plan):
                break
    except Exception as exc:
        error = describe_error(exc, provider.settings, outcome.model, started)
        outcome.error, outcome.error_kind = error.message, error.kind
        for out in translator.finish_partial():
            yield emit(out)
        yield ui.Error(error.message)
        return
    finally:
        provider.active -= 1
        if stream is not None:
            await stream.close()
    outcome.finish_reason = translator.finish_reason
    metadata: dict[str, Any] = {"model": outcome.model}
    if outcome.usage is not None:
        metadata["usage"] = outcome.usage.as_metadata()
    yield emit(ui.Finish(translator.finish_reason, metadata))


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
    text_id = new_id("txt")
    return [
        ui.StartStep(),
        ui.TextStart(text_id),
        ui.TextDelta(text_id, text),
        ui.TextEnd(text_id),
        ui.FinishStep(),
        ui.Finish("stop"),
    ]


def log_outcome(thread_id: str, outcome: ChatOutcome, status: str) -> None:
    usage = outcome.usage
    tokens = f"{usage.prompt_tokens}+{usage.completion_tokens}" if usage else "n/a"
    log.info(
        "chat thread=%s message=%s model=%s finish=%s steps=%d tokens=%s %s in %.2fs",
        thread_id,
        outcome.message.get("id"),
        outcome.model,
        outcome.finish_reason if outcome.error is None else f"error:{outcome.error_kind}",
        outcome.steps,
        tokens,
        status,
        time.monotonic() - outcome.started_at,
    )
