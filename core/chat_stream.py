"""One `/api/chat` answer as UI Message Stream chunks: start, the model's step, finish.

Every failure ends the stream with an `error` chunk that says what to do, after closing any
open text or reasoning part so the client keeps what it showed. The provider stream is always
closed on the way out, including when the consumer stops iterating (browser gone, stop
button): closing it drops the upstream connection, so nothing keeps generating.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from typing import Any

from . import ui_stream as ui
from .provider import Provider, describe_error
from .stream_translate import StepTranslator, Usage, new_id

log = logging.getLogger("comfyui_assistant")


@dataclass
class ChatOutcome:
    """What happened, for the log line (and, later, for persistence)."""

    message_id: str = ""
    model: str | None = None
    finish_reason: str = "other"
    usage: Usage | None = None
    error: str | None = None
    error_kind: str | None = None
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    started_at: float = field(default_factory=time.monotonic)


def response_message_id(messages: list[dict[str, Any]]) -> str:
    """A continuation (last message is the assistant's) must keep that message's id."""
    last = messages[-1]
    if last.get("role") == "assistant" and isinstance(last.get("id"), str) and last["id"]:
        return str(last["id"])
    return new_id("msg")


async def chat_chunks(
    provider: Provider,
    ui_messages: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    tool_names: Collection[str],
    outcome: ChatOutcome,
) -> AsyncIterator[ui.Chunk]:
    outcome.message_id = response_message_id(ui_messages)
    yield ui.Start(outcome.message_id)
    translator = StepTranslator(tool_names)
    stream: Any = None
    started = False
    provider.active += 1
    try:
        model, source = await provider.choose_model()
        outcome.model = model
        yield ui.MessageMetadata({"model": model, "modelSource": source})
        yield ui.StartStep()
        stream = await provider.stream(model, messages, tools)
        async for chunk in stream:
            started = True
            for out in translator.feed(chunk):
                yield out
        for out in translator.finish():
            yield out
    except Exception as exc:
        error = describe_error(exc, provider.settings, outcome.model, started)
        outcome.error, outcome.error_kind = error.message, error.kind
        for out in translator.finish_partial():
            yield out
        yield ui.Error(error.message)
        return
    finally:
        provider.active -= 1
        if stream is not None:
            await stream.close()
        outcome.text = "".join(translator.text)
        outcome.usage = translator.usage
        outcome.tool_calls = [
            {"id": c.id, "name": c.name, "input": c.input, "error": c.error}
            for c in translator.tool_calls
        ]
    outcome.finish_reason = translator.finish_reason
    metadata: dict[str, Any] = {"model": outcome.model}
    if translator.usage is not None:
        metadata["usage"] = translator.usage.as_metadata()
    yield ui.FinishStep()
    yield ui.Finish(translator.finish_reason, metadata)


def log_outcome(thread_id: str, outcome: ChatOutcome, status: str) -> None:
    usage = outcome.usage
    tokens = f"{usage.prompt_tokens}+{usage.completion_tokens}" if usage else "n/a"
    log.info(
        "chat thread=%s message=%s model=%s finish=%s tokens=%s tools=%d %s in %.2fs",
        thread_id,
        outcome.message_id,
        outcome.model,
        outcome.finish_reason if outcome.error is None else f"error:{outcome.error_kind}",
        tokens,
        len(outcome.tool_calls),
        status,
        time.monotonic() - outcome.started_at,
    )
