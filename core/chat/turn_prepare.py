"""A chat turn prepared: the request's messages stored, the sources read, the answer planned,
the model chosen and the first request assembled, as one frozen `PreparedTurn`; or the message
to answer with instead (the context cannot fit, the provider cannot be reached)."""

from __future__ import annotations

import asyncio
import datetime
from dataclasses import dataclass, replace

from ..base import Message, UIMessage, message_of
from ..context import Assembled, PromptProfile, profile_for, user_context_block
from ..files import TurnFiles, turn_files
from ..provider import ChatLease, ContextBudgetError, choose_slot
from ..store import Delegations, SentTurn, SentTurns, ThreadState, due_note
from ..tools import ToolContext
from .chat_context import ChatContext, prepare_context
from .chat_plan import ChatPlan, SkillUse, build_plan, skill_use, ui_history_of
from .chat_request import ChatRequest
from .chat_sources import Sources, UserSnapshot, gather_sources, user_snapshot
from .delegation import DELEGATE, Delegator, Parent
from .failures import owned_error
from .step_calls import StepHooks
from .turn_before import FirstWork
from .turn_parts import TurnParts
from .turn_setup import TurnSetup, set_up_turn

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


@dataclass(frozen=True)
class PreparedTurn:
    """A turn ready to stream: what the answer runs with (the plan, the model, the tools and,
    unless it is answered without the model, the context and the step loop's hooks) and the
    response's headers (the first request's size)."""

    plan: ChatPlan
    model: str
    tools: ToolContext
    context: ChatContext | None = None
    state: ThreadState | None = None
    hooks: StepHooks | None = None
    headers: dict[str, str] | None = None
    lease: ChatLease | None = None  # in flight on a server with a shared cache (to end)


@dataclass(frozen=True)
class _Read:
    """What the turn read before it plans."""

    req: ChatRequest
    snap: UserSnapshot
    sources: Sources
    sent: dict[str, SentTurn]  # what each user message was sent as
    skill: SkillUse
    first_turn: bool
    history: list[UIMessage]  # the messages before the answer (`ui_history_of`)


async def prepare_turn(
    parts: TurnParts, req: ChatRequest, stored: asyncio.Future[None], debug: bool
) -> PreparedTurn | Message:
    """`stored`: the request's messages being written; the user's message is stored before
    the model is called (and the context then knows a thread just created has no summary to
    read)."""
    snap = await user_snapshot(parts)
    sources = await gather_sources(parts, snap)
    await stored
    sent = await SentTurns(parts.store).of_thread(req.thread_id)
    first_turn = sum(m["role"] == "user" for m in req.messages) <= 1
    skill, history = skill_use(req, sources, sent), ui_history_of(req.messages)
    read = _Read(req, snap, sources, sent, skill, first_turn, history)
    tools = ToolContext(
        thread_id=req.thread_id,
        threads=parts.threads,
        system_skills=parts.system_skills,
        user_skills=parts.user_skills,
        environment=parts.environment,
        read_context_section=sources.system_context.section,
        look_back=parts.look_back(req.thread_id),
    )  # (the search's size follows the profile, once the window is known)
    if read.skill.reply is not None:  # answered here, without the model
        plan = build_plan(req, sources, first_turn, read.skill)
        return PreparedTurn(plan, parts.provider.settings.model or "", tools)
    unsent = _first_sent(read)
    provider, lease = parts.provider, None
    try:
        setup = await set_up_turn(parts.store, provider, sources)
        seen = await _seen(parts, read, setup)
        if setup.caps.slots:  # llama.cpp: a summary made ahead holds the slot the chat needs
            await parts.compactor.cancel(req.thread_id)  # (made again after the answer)
        # (a shared cache: no background work decodes beside the answer; shared_cache.py)
        lease = await ChatLease.start(provider.settings, setup.caps)
        tools = replace(tools, search_limit=setup.profile.search_results)
        return await _model_turn(parts, read, setup, seen, tools, unsent, lease, debug)
    except ContextBudgetError as exc:
        said = message_of(exc)
    except Exception as exc:  # (the provider's told as such; ours logged and called a bug)
        said = owned_error(exc, provider, provider.settings.model)[0]
    if lease is not None:  # (a summary made ahead may start now)
        lease.end()
    return said


@dataclass(frozen=True)
class _Seen:
    """The thread's files as the model will see them (`TurnFiles`), and what to tell the user
    once: that the model can use no tools, that it sees no images."""

    files: TurnFiles
    notices: tuple[tuple[str, str], ...]


async def _seen(parts: TurnParts, read: _Read, setup: TurnSetup) -> _Seen:
    req, store = read.req, parts.store
    files = await turn_files(
        store, parts.outputs, req.thread_id, read.history, req.messages,
        vision=setup.vision, model=setup.model, window=setup.window.tokens,
    )  # fmt: skip
    no_tools, no_vision, vision_key = not setup.tools_usable, files.unseen, f"vision {setup.key}"
    if no_tools or no_vision:  # each told once: remembered (read only when one may be due)
        told = await store.get_settings(NOTICES)
        no_tools, no_vision = (
            no_tools and not told.get(setup.key),
            no_vision and not told.get(vision_key),
        )
        now = ((setup.key, no_tools), (vision_key, no_vision))
        if no_tools or no_vision:
            await store.update_settings(NOTICES, {key: True for key, due in now if due})
    notices = (("tools", NO_TOOLS),) * no_tools + (("vision", NO_VISION),) * no_vision
    return _Seen(files, notices)


async def _model_turn(
    parts: TurnParts,
    read: _Read,
    setup: TurnSetup,
    seen: _Seen,
    tools: ToolContext,
    unsent: str | None,
    lease: ChatLease,
    debug: bool,
) -> PreparedTurn:
    """The turn the model answers: the slot, the plan, the context and its first request."""
    req, sources, provider, store = read.req, read.sources, parts.provider, parts.store
    model, window, profile = setup.model, setup.window, setup.profile
    slot = await choose_slot(provider.settings, model, setup.caps, req.thread_id, lease.draining())

    def plan_for(profile: PromptProfile) -> ChatPlan:
        return replace(setup, profile=profile).plan(
            req,
            sources,
            read.first_turn,
            read.skill,
            history=seen.files.history,
            slot=slot,
            debug=debug,
        )

    plan = plan_for(profile)
    user_context = user_context_block(
        sources.user, profile.user_limits(sources.limits.user_context_chars)
    )
    state = ThreadState(store)
    context = await prepare_context(
        plan=plan,
        provider=provider,
        model=model,
        window=window,
        state=state,
        thread_id=req.thread_id,
        environ=parts.options.environ,
        stored_correction=await parts.corrections(),
        sent=read.sent,
        user_context=user_context,
        project=seen.files.project,
        shown=seen.files.shown,
        replan=lambda smaller: plan_for(profile_for(smaller, sources.environ)),
    )
    first = context.assemble(plan.answer_start(), None)
    if DELEGATE in plan.server_tools:
        parent = Parent(
            provider, model, window, profile, parts.options.environ,
            sources.environment_line, user_context, context.inputs.correction,
            req.thread_id, plan.message_id, Delegations(store),
            sources.limits.delegate,
        )  # fmt: skip
        tools = replace(tools, delegate=Delegator(parent).run)
    work = FirstWork(
        parts, req.thread_id, plan, model, context, state, seen.notices, lease,
        first if setup.caps.counts else None, unsent,
    )  # fmt: skip
    return PreparedTurn(
        plan, model, tools, context, state, StepHooks(context.assemble, work.chunks),
        _headers(context, plan, first), lease,
    )  # fmt: skip


def _headers(context: ChatContext, plan: ChatPlan, first: Assembled) -> dict[str, str]:
    """The first request's size, for the response (its tokens only when it fits: else the
    request is known once the summary is, and the report says it)."""
    headers = {
        "X-Context-Budget": str(first.budget.available),
        "X-Context-Window": str(first.budget.window.tokens),
    }
    if not context.overflows(plan.answer_start()):
        headers["X-Context-Tokens"] = str(first.tokens)
    return headers


def _first_sent(read: _Read) -> str | None:
    """The latest user message, when it is sent for the first time: recorded as sent (once
    its recalled passages are known: turn_before.py)."""
    latest, sent = read.skill.latest_id, read.sent
    if latest is None or latest in sent:
        return None
    users = [str(m.get("id")) for m in read.req.messages if m["role"] == "user"]
    earlier = [sent.get(i) for i in users[: users.index(latest)]] if latest in users else []
    now = datetime.datetime.now().astimezone()
    sent[latest] = SentTurn(due_note(read.snap.reminders, now, earlier), read.skill.text)
    return latest
