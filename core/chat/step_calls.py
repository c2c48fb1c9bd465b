"""One model call of an answer's step, and the retry when the provider says it did not fit:
llama.cpp's shared cache filled while decoding (the same request, once the others are done:
core/provider/shared_cache.py), or a window smaller than ours (the request again for the window
its error states, or 75% of ours). The answer's step loop (chat_stream.py) calls these."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import openai

from ..base import UIMessage
from ..context import Assembled
from ..provider import Provider, is_cache_full, is_context_overflow, others_done, window_from_error
from ..stream import ui_stream as ui
from .chat_plan import ChatPlan

log = logging.getLogger("comfyui_assistant")

CACHE_FULL_RETRY = "retried: the server's shared cache was full (same window)"

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


@dataclass(frozen=True)
class StepCall:
    """One step's model call: who is asked, for which plan, the answer so far, and whether it
    is the last allowed step (which offers no tools)."""

    provider: Provider
    model: str
    plan: ChatPlan
    hooks: StepHooks
    answer: UIMessage
    last: bool


@dataclass(frozen=True)
class OpenStep:
    """A model call under way: its stream, the request it was sent, and the window a
    provider's overflow error stated with ours it replaced (to remember), if it said one."""

    stream: Any
    assembled: Assembled
    overflow_window: tuple[int, int] | None = None


async def open_step(call: StepCall) -> OpenStep:
    """Start one model call; when it does not fit, try once more (`retry_step`)."""
    assembled = call.hooks.assemble(call.answer, None)
    if call.plan.slot_note:
        assembled.report["limits"] = [*assembled.report["limits"], call.plan.slot_note]
    try:
        return OpenStep(await _call(call, assembled), assembled)
    except openai.APIStatusError as exc:
        if not _did_not_fit(exc.status_code, str(exc.message), _code(exc)):
            raise
        return await retry_step(call, assembled, exc)


async def retry_step(call: StepCall, assembled: Assembled, exc: openai.APIError) -> OpenStep:
    """The step again after the provider said it did not fit. llama.cpp's shared cache filled
    while decoding (several requests at once): the same request, once the others are done,
    and the window stands (core/provider/shared_cache.py). Else for the window the overflow
    error states (or 75% of ours), remembered for the next turns (`OpenStep.overflow_window`)."""
    overflow = None
    if is_cache_full(str(exc.message)):
        log.warning("the server's shared cache filled while decoding; retrying once it is free")
        await others_done(call.provider.settings, call.model)
        retried = CACHE_FULL_RETRY
    else:
        window = window_from_error(str(exc.message)) or int(assembled.budget.window.tokens * 0.75)
        log.warning("the provider's window is smaller than ours; retrying with %d", window)
        overflow = (window, assembled.budget.window.tokens)
        assembled, retried = call.hooks.assemble(call.answer, window), "retried: overflow"
    assembled.report["limits"] = [*assembled.report["limits"], retried]
    return OpenStep(await _call(call, assembled), assembled, overflow)


def overflowed_mid_stream(exc: Exception) -> bool:
    """An overflow reported inside a stream that already started (llama.cpp sends its prompt
    progress first, then "Context size has been exceeded" when its shared cache filled)."""
    return (
        isinstance(exc, openai.APIError)
        and not isinstance(exc, openai.APIStatusError)
        and _did_not_fit(None, str(exc.message), None)
    )


async def _call(call: StepCall, assembled: Assembled) -> Any:
    """The model call for `assembled` (the last allowed step offers no tools)."""
    tools = [] if call.last else assembled.tools
    limit = assembled.budget.answer_limit(assembled.tokens)
    plan = call.plan
    return await call.provider.stream(
        call.model, assembled.messages, tools, limit, plan.progress, plan.slot
    )


def _did_not_fit(status: int | None, message: str, code: str | None) -> bool:
    return is_cache_full(message) or is_context_overflow(status, message, code)


def _code(exc: openai.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None
