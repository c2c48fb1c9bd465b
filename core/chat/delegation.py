"""A delegated task: the `delegate` tool runs a child model on a task the parent hands it.

The child starts afresh: its own short system prompt (`system_context/delegate/`, with the
environment line and the user's context), then one user message with the task and what the
parent chose to pass — never the parent's messages. It runs the same step loop as an answer
(`chat_stream.StepRunner`), through the same context engine (its requests fit the window)
and the registry's read-only server tools; never the panel's graph tools, never `delegate`
(one level deep). Its budget (`DelegateBudget`) bounds steps, tokens and time: near a limit its
next step offers no tools, so it answers with what it found; past one it is stopped and its
partial answer comes back as an error result the parent can act on.

The child runs in a task of its own that feeds its chunks to a queue: a time limit can then
stop it wherever it is, and when the parent's response is stopped (the browser's stop button),
the `finally` here cancels it at once, which closes its provider request. Only its result
enters the parent's context; its whole trace is stored (`delegations.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..base import DelegationTrace, UIMessage
from ..context import ContextInputs, ContextSettings, PromptProfile
from ..knowledge import SYSTEM_CONTEXT_DIR
from ..provider import Provider, Window
from ..store import Delegations
from ..stream import new_id
from ..stream import ui_stream as ui
from ..tokens import Correction, Factors
from ..tools import ToolContext, ToolOutput, tools_for
from .chat_context import ChatContext
from .chat_outcome import ChatOutcome
from .chat_plan import ChatPlan, offered_names, registry_tools
from .chat_stream import StepRunner
from .delegate_budget import DelegateBudget
from .delegate_result import ChildRun
from .step_calls import Assemble, StepHooks

log = logging.getLogger("comfyui_assistant")

DELEGATE = "delegate"  # the tool's name in the registry
PROMPT_FILE = SYSTEM_CONTEXT_DIR / "delegate" / "helper.md"
# What a child may call: the server's tools (lookups, reading skills, recalling a shortened
# result), but not the skill writers (the user asks for those) nor `delegate` (one level deep)
# nor `searchConversation` (a helper sees only the context it is given, not the user's thread);
# never the panel's tools (the child has no browser).
CHILD_TOOLS = frozenset(spec.name for spec in tools_for("server")) - {
    "createUserSkill",
    "updateUserSkill",
    "searchConversation",
    DELEGATE,
}
Status = Literal["done", "failed", "cancelled"]


@functools.cache
def helper_prompt() -> str:
    return PROMPT_FILE.read_text(encoding="utf-8").strip()


@dataclass(frozen=True)
class Parent:
    """What a delegated task takes from the answer that calls it."""

    provider: Provider
    model: str
    window: Window
    profile: PromptProfile
    environ: Mapping[str, str]
    environment_line: str
    user_context: str  # the user's rules and files, as the parent's system prompt has them
    correction: Factors  # the learned token correction of this model, per component
    thread_id: str
    message_id: str
    traces: Delegations
    budget: DelegateBudget


def task_message(task: str, context: str) -> UIMessage:
    text = f"Task: {task}"
    if context:
        text += f"\n\nFrom the conversation:\n{context}"
    return {"id": new_id("task"), "role": "user", "parts": [{"type": "text", "text": text}]}


def child_system(parent: Parent) -> str:
    parts = [helper_prompt(), f"Installed: {parent.environment_line}"]
    if parent.user_context:
        parts.append(parent.user_context)
    return "\n\n".join(p for p in parts if p.strip())


def child_plan(parent: Parent, system: str, task: UIMessage) -> tuple[ChatPlan, Assemble]:
    """The child's plan, and its requests fitted by the context engine: the parent's window
    and profile, the child's tools."""
    names = offered_names(parent.profile, False) & CHILD_TOOLS
    tools, server = registry_tools(names, parent.profile.compact)
    plan = ChatPlan(
        system=system,
        ui_history=[task],
        message_id=new_id("msg"),
        tools=list(tools),
        server_tools=server,
        max_steps=parent.budget.steps,
        profile=parent.profile.name,
    )
    inputs = ContextInputs(
        system=system,
        ui_messages=[task],
        tools=plan.tools,
        model=parent.model,
        window=parent.window,
        max_output_tokens=parent.provider.settings.max_output_tokens,
        user_context=parent.user_context,
        correction=parent.correction,
        settings=ContextSettings.from_env(parent.environ),
        profile=parent.profile.name,
        cache_scope=f"{parent.thread_id} {plan.message_id}",
    )
    return plan, ChatContext(inputs, Correction()).assemble


_END = object()


class Delegator:
    """Runs the delegated tasks of one answer (`ToolContext.delegate`)."""

    def __init__(self, parent: Parent) -> None:
        self.parent = parent

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> AsyncIterator[ToolOutput]:
        """Progress while the child works, then its result (also when it fails)."""
        parent, budget = self.parent, self.parent.budget
        task, context = str(args["task"]).strip(), str(args.get("context") or "").strip()
        system, message = child_system(parent), task_message(task, context)
        plan, assemble = child_plan(parent, system, message)
        run = ChildRun(task)
        hooks = StepHooks(
            assemble,
            wrap_up=lambda: (
                run.tokens >= budget.tokens * budget.wrap_up
                or time.monotonic() - run.started >= budget.seconds * budget.wrap_up
            ),
        )
        runner = StepRunner(
            parent.provider, parent.model, plan, hooks, replace(ctx, delegate=None, call_id="")
        )
        outcome = runner.outcome
        updates: asyncio.Queue[Any] = asyncio.Queue()  # progress to show, then _END

        async def feed() -> None:  # (the child's task: `run` is up to date before each step)
            steps = runner.chat_chunks()
            try:
                async for chunk in steps:
                    if follow(chunk, run, outcome, budget):
                        updates.put_nowait(run.progress())
                    if run.stopped:
                        break
            except Exception as exc:  # (the runner reports provider failures itself)
                log.exception("a delegated task failed")
                run.error = f"an internal error ({type(exc).__name__})"
            finally:
                await steps.aclose()  # (closes its provider request)
                updates.put_nowait(_END)

        yield ToolOutput(run.progress(), preliminary=True)
        worker = asyncio.ensure_future(feed())
        finished = False
        try:
            async for progress in _until_done(updates, run, outcome, budget):
                yield ToolOutput(progress, preliminary=True)
            finished = True
        finally:
            worker.cancel()  # (at once: a stopped parent stops its child's provider request)
            with contextlib.suppress(asyncio.CancelledError):
                await worker
            result = run.result(ctx.citations)
            status: Status = ("done" if result["ok"] else "failed") if finished else "cancelled"
            trace = self._trace(ctx.call_id, task, context, system, message, outcome)
            trace["status"], trace["result"] = status, result if finished else None
            with contextlib.suppress(Exception):
                await asyncio.shield(parent.traces.save(trace))
            usage = run.usage_now()
            log.info(
                "delegate thread=%s call=%s %s steps=%d tokens=%d in %.2fs",
                parent.thread_id, ctx.call_id, status, usage["steps"], usage["tokens"],
                usage["seconds"],
            )  # fmt: skip
        yield ToolOutput(result)

    def _trace(
        self,
        call_id: str,
        task: str,
        context: str,
        system: str,
        message: UIMessage,
        outcome: ChatOutcome,
    ) -> DelegationTrace:
        parent, budget = self.parent, self.parent.budget
        messages = [message]
        if outcome.message is not None:  # (its context reports left out: the card has usage)
            parts = [p for p in outcome.message["parts"] if not p["type"].startswith("data-")]
            messages.append({**outcome.message, "parts": parts})
        return {
            "id": outcome.message["id"] if outcome.message else new_id("msg"),
            "threadId": parent.thread_id,
            "messageId": parent.message_id,
            "toolCallId": call_id,
            "task": task,
            "context": context,
            "status": "cancelled",
            "system": system,
            "messages": messages,
            "result": None,
            "budget": {"steps": budget.steps, "tokens": budget.tokens, "seconds": budget.seconds},
            "createdAt": time.time(),
        }


def follow(chunk: ui.Chunk, run: ChildRun, outcome: ChatOutcome, budget: DelegateBudget) -> bool:
    """Follow one chunk of the child; True when the card should show something new. Past the
    token budget, `run.stopped` says so."""
    if isinstance(chunk, ui.FinishStep) and outcome.assembled is not None:
        run.step_done(outcome.steps, outcome.assembled.tokens, outcome.usage)
        if run.tokens > budget.tokens:
            run.stopped = f"it used {run.tokens:,} tokens, over its budget of {budget.tokens:,}"
    return run.apply(chunk)


async def _until_done(
    updates: asyncio.Queue[Any], run: ChildRun, outcome: ChatOutcome, budget: DelegateBudget
) -> AsyncIterator[Any]:
    """The child's progress until it ends or its time is up (`run.stopped` then says so)."""
    deadline = run.started + budget.seconds
    while True:
        try:
            update = await asyncio.wait_for(updates.get(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            run.stopped = f"it ran out of time ({budget.seconds:g} s)"
            return
        if update is _END:
            if outcome.limited and not run.stopped:
                run.stopped = f"it reached its limit of {budget.steps} steps"
            return
        yield update
