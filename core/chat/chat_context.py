"""Ties the context engine to a chat request: the window, the stored summary and correction,
what each user message was sent with, compaction when the engine asks for it, and the
`assemble` function each model step calls with the answer so far."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..base import UIMessage
from ..context import (
    Assembled,
    ContextInputs,
    ContextSettings,
    Summary,
    build_context,
    covered_ids,
    summary_cap,
)
from ..files import ProjectContext, Shown, with_shown
from ..provider import (
    SOURCE,
    Provider,
    Window,
    calibration_due,
    reported_window,
    server_parts,
)
from ..store import SentTurn, ThreadState
from ..summary import SUMMARY_MAX_TOKENS, Prefix, boundary_of, summarize
from ..tokens import Correction, counter_for
from .chat_plan import ChatPlan


@dataclass
class ChatContext:
    inputs: ContextInputs
    correction: Correction
    _last: tuple[tuple[Any, ...], Assembled] | None = None
    # the summary made ahead that a request of this turn put to use (to store as in use)
    taken: Summary | None = None
    shown: Shown | None = None  # the picture the newest run's result shows (run_images)
    # The plan for a smaller window (a provider's overflow error stated one): its profile's
    # instructions and tools, so a retry at 4K does not carry the full profile's definitions.
    replan: Callable[[int], ChatPlan] | None = None

    def assemble(self, answer: UIMessage, window: int | None = None) -> Assembled:
        """The request for the answer so far. The same answer is built once: the compaction
        check, the headers and the first model step all ask for it."""
        parts = answer.get("parts", [])
        states = tuple(p.get("state") for p in parts)  # (an approved call's output came in place)
        key = (id(self.inputs), answer.get("id"), len(parts), states, window)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        built = self._build(answer, window)
        if built.took_next:  # from now on the summary made ahead is the one in use
            self.taken = self.inputs.next_summary
            self.inputs = replace(self.inputs, summary=self.taken, next_summary=None)
            key = (id(self.inputs), *key[1:])
        self._last = (key, built)
        return built

    def overflows(self, answer: UIMessage) -> bool:
        """The request leaves older messages out for want of room, even with the summary
        made ahead (that one freed the margin it was planned for: a paste larger than that
        needs a deeper one, made on top of it)."""
        return self.assemble(answer).report["counts"]["dropped"] > 0

    def forget(self) -> None:
        """The inputs changed: build again on the next request."""
        self._last = None

    def _build(self, answer: UIMessage, window: int | None) -> Assembled:
        thread = with_shown([*self.inputs.ui_messages, answer], self.shown)
        inputs = replace(self.inputs, ui_messages=thread)
        if window is not None:
            inputs = replace(inputs, window=reported_window(window))
            smaller = self.replan(window) if self.replan else None
            if smaller is not None and smaller.profile != inputs.profile:
                inputs = replace(
                    inputs, system=smaller.system, tools=smaller.tools, profile=smaller.profile
                )
        return build_context(inputs, counter_for(inputs.model))


async def prepare_context(
    *,
    plan: ChatPlan,
    provider: Provider,
    model: str,
    window: Window,
    state: ThreadState,
    thread_id: str,
    environ: Any,
    stored_correction: dict[str, Any],
    sent: dict[str, SentTurn],
    user_context: str,
    project: ProjectContext | None = None,
    shown: Shown | None = None,
    replan: Callable[[int], ChatPlan] | None = None,
) -> ChatContext:
    correction = Correction.from_dict(stored_correction)
    stored = await state.summary(thread_id)
    inputs = ContextInputs(
        system=plan.system,
        ui_messages=plan.ui_history,
        tools=plan.tools,
        model=model,
        window=window,
        max_output_tokens=provider.settings.max_output_tokens,
        user_context=user_context,
        summary=Summary.stored(stored),
        next_summary=Summary.stored_next(stored),
        sent=sent,
        correction=correction.factors(model),
        calibration=correction.calibrated(model),
        settings=ContextSettings.from_env(environ),
        profile=plan.profile,
        cache_scope=thread_id,
        project=project,
    )
    return ChatContext(inputs, correction, shown=shown, replan=replan)


NEAR_LIMIT = 0.85  # of the window less the answer's reserve: a request this full is counted
VERIFY = 3  # counts of a request near the limit at most (each: a few local round trips)


def near_limit(first: Assembled) -> bool:
    """Whether a request is full enough that our estimate's error could overflow the window:
    a message's tokenizer ratio varies with its content (a pasted log counts 1.1-1.6 times
    what prose does), and the learned factor is an average."""
    budget = first.budget
    return first.tokens >= NEAR_LIMIT * (budget.window.tokens - budget.reserve)


async def calibrate(
    context: ChatContext, provider: Provider, model: str, answer: UIMessage, first: Assembled
) -> Assembled | None:
    """When due (once per server and model every so often), or when the first request is near
    the window's limit, the server's own counts of its components calibrate the correction,
    and the request is assembled again with it; None when neither, or the server does not
    count. Near the limit the messages' count is taken as exact (this request's content is
    what must fit, whatever the average ratio) and the new request is counted again, up to
    VERIFY times, until the server's count leaves the answer's reserve free: leaving older
    turns out changes the mix of what is counted."""
    near = near_limit(first)
    if not (near or calibration_due(provider.settings, model)):
        return None
    limit = first.budget.window.tokens - first.budget.reserve
    assembled: Assembled | None = None
    for _ in range(VERIFY if near else 1):
        counted = assembled or first
        server = await server_parts(provider.settings, model, counted.messages, counted.tools)
        if server is None or (assembled is not None and server.total <= limit):
            break
        factors = context.correction.calibrate(model, counted.parts, server, SOURCE, exact=near)
        context.inputs = replace(context.inputs, correction=factors, calibration=SOURCE)
        context.forget()
        assembled = context.assemble(answer, None)
    return assembled


async def compact(
    context: ChatContext,
    thread: list[UIMessage],
    provider: Provider,
    model: str,
    state: ThreadState,
    thread_id: str,
    slot: int | None = None,
    *,
    needed: bool = False,
) -> None:
    """Make the next summary ahead, when `thread` (the history and the answer just given) is
    past the high watermark: the oldest stretch not yet summarized, down to the low
    watermark, on top of the newest summary there is. It is stored beside the one in use and
    sent once the thread no longer fits without it. `needed`: `thread` ends with a request
    that does not fit; past the low watermark is enough, and the summary is made on the
    thread before that request's message when it can be (that request fit: the summary is
    asked in place). `slot`: the chat's llama.cpp slot, whose cache holds the prefix the
    summary requests share."""
    await asyncio.sleep(0)  # (the caller's status line goes out before the plan is worked out)
    base = context.inputs.next_summary or context.inputs.summary
    inputs = replace(context.inputs, ui_messages=thread, summary=base, next_summary=None)
    asked_after = thread
    if needed:
        settings = inputs.settings
        inputs = replace(inputs, settings=replace(settings, high_watermark=settings.low_watermark))
        latest = max((i for i, m in enumerate(thread) if m.get("role") == "user"), default=0)
        asked_after = thread[:latest]
    # planned as the request will be once the new summary is in use: without the passages
    # recalled under this one (else it summarized deeper for what then went anyway)
    recalled = any(t.recall is not None for t in inputs.sent.values())
    plain = {k: replace(t, recall=None) for k, t in inputs.sent.items()} if recalled else None
    planned = build_context(replace(inputs, sent=plain or inputs.sent), counter_for(model))
    covered = covered_ids(thread, base.until) if base else frozenset()
    fresh = [i for i in planned.compaction or () if i not in covered]
    if not fresh:
        return
    asked = asked_after or thread  # (the request the summary is asked after, as sent)
    before = planned
    if recalled or asked is not thread:
        before = build_context(replace(inputs, ui_messages=asked), counter_for(model))
    room = planned.summary_room or summary_cap(
        planned.budget.available, max(1.0, context.inputs.correction.messages)
    )
    new = await _summary_of(
        context, base, before, asked, fresh, room, provider, model, slot, ahead=not needed
    )
    await state.set_next_summary(thread_id, new.text, new.until, new.fallback)


async def _summary_of(
    context: ChatContext,
    base: Summary | None,
    assembled: Assembled,
    thread: list[UIMessage],
    fresh: list[str],
    room: int,
    provider: Provider,
    model: str,
    slot: int | None,
    *,
    ahead: bool,
) -> Summary:
    """The summary of `fresh` in `room` tokens (what the plan counted on), asked after
    `assembled` (the request for `thread`) when every one of them is in it whole and nothing
    was left out, else as a transcript of its own. `base`: the summary it builds on; `ahead`:
    made in the background (not for a request that waits for it)."""
    window = assembled.budget.window.tokens
    system = str(assembled.messages[0].get("content") or "")
    prefix = Prefix(system, tuple(assembled.tools), slot)  # (the chat's own: cache kept)
    whole = not assembled.report["counts"]["dropped"]
    if context.inputs.next_summary is None and whole and assembled.present.issuperset(fresh):
        prefix = in_place(prefix, assembled, thread, fresh[-1])
    return await summarize(
        provider, model, base, thread, fresh, max_tokens=room, window=window, prefix=prefix,
        ahead=ahead,
    )  # fmt: skip


IN_PLACE_INSTRUCTION = 320  # tokens the instruction after the chat's request may take


def in_place(prefix: Prefix, assembled: Assembled, thread: list[UIMessage], last: str) -> Prefix:
    """The summary asked for after the chat's own request (every message to summarize is in
    it, after the summary in use): its boundary is the message after `last`."""
    ids = [str(m.get("id") or "") for m in thread]
    after = ids.index(last) + 1
    boundary = boundary_of(thread[after]) if after < len(thread) else None
    budget = assembled.budget
    room = budget.reserve + budget.margin - IN_PLACE_INSTRUCTION
    return replace(
        prefix,
        messages=tuple(assembled.messages),
        boundary=boundary or None,
        answer_tokens=max(256, min(SUMMARY_MAX_TOKENS, room)),
    )


async def reload_summary(context: ChatContext, state: ThreadState, thread_id: str) -> None:
    """The thread's summaries as stored now (after a compaction finished)."""
    stored = await state.summary(thread_id)
    summary, ahead = Summary.stored(stored), Summary.stored_next(stored)
    context.inputs = replace(context.inputs, summary=summary, next_summary=ahead)
    context.forget()
