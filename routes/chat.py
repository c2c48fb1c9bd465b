"""POST /api/chat: store the request's messages, plan the answer, fit it into the model's
window, stream it, store it; and the context report of a thread."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ..agent_prompts import UserContext, user_context_block
from ..core import ui_stream as ui
from ..core.answer_saver import AnswerSaver, has_content
from ..core.budget import ContextBudgetError
from ..core.chat_context import prepare_context
from ..core.chat_plan import (
    Sources,
    build_plan,
    list_skills,
    load_context,
    role_override,
    user_limits,
)
from ..core.chat_request import ChatRequest, parse_chat_request
from ..core.chat_stream import ChatOutcome, ChatPlan, chat_chunks, log_outcome
from ..core.context_engine import Assembled, Summary, covered_ids
from ..core.provider import Provider, describe_error
from ..core.server_tools import ToolContext
from ..core.service import AssistantService
from ..core.sse import ClientGone, StreamFailed, pump
from ..core.stream_translate import Usage
from ..core.summarizer import summarize
from ..core.threads import Threads, ThreadState
from ..core.tool_registry import OPTIONAL_TOOLS
from ..core.user_data import sendable
from .common import HTTPProblem, guarded, not_found, read_json

log = logging.getLogger("comfyui_assistant")


@dataclass(frozen=True)
class UserSnapshot:
    custom: str | None
    persona: dict[str, Any] | None
    rules: list[str]
    reminders: list[str]
    preferences: dict[str, Any]


async def user_snapshot(service: AssistantService) -> UserSnapshot:
    """What a chat reads of the user's context from the store, re-read only after a write."""
    store = await service.store()
    cached = store.cache.get("user")
    if cached is not None and cached[0] == store.user_generation:
        return cached[1]  # type: ignore[no-any-return]
    generation = store.user_generation
    user = await service.user_data()
    snapshot = UserSnapshot(
        custom=await user.setting("prompt", "system"),
        persona=await user.active_persona(),
        rules=[r["text"] for r in await user.rules.list() if r["enabled"]],
        reminders=[r["text"] for r in await user.reminders.list() if r["enabled"]],
        preferences=await service.store_settings("preferences"),
    )
    store.cache["user"] = (generation, snapshot)
    return snapshot


async def gather_sources(service: AssistantService) -> Sources:
    snap = await user_snapshot(service)
    user = await service.user_data()
    environ = service.options.environ
    env = await service.environment.get()
    replaces = role_override(snap.persona, snap.custom) is not None
    return Sources(
        system_context=load_context(service.options.system_context_dir, environ, replaces),
        custom_system_prompt=snap.custom,
        system_skills=list_skills(service.system_skills),
        user_skills=list_skills(service.user_skills),
        environment_line=env.summary_line(),
        user=UserContext(
            rules=snap.rules,
            soul=sendable(await user.read_file("soul")),
            goals=sendable(await user.read_file("goals")),
            preferences=snap.preferences,
        ),
        environ=environ,
        persona=snap.persona,
    )


async def _error_stream(request: web.Request, message_id: str, text: str) -> web.StreamResponse:
    response = web.StreamResponse(headers=ui.SSE_HEADERS)
    await response.prepare(request)
    for chunk in (ui.Start(message_id), ui.Error(text)):
        await response.write(chunk.encode())
    await response.write(ui.DONE)
    return response


def _headers(assembled: Assembled) -> dict[str, str]:
    return {
        **ui.SSE_HEADERS,
        "X-Context-Tokens": str(assembled.tokens),
        "X-Context-Budget": str(assembled.budget.available),
        "X-Context-Window": str(assembled.budget.window.tokens),
    }


async def _context_for(
    service: AssistantService,
    plan: ChatPlan,
    sources: Sources,
    provider: Provider,
    model: str,
    thread_id: str,
    outcome: ChatOutcome,
) -> Assembled:
    """Attach the context engine to the plan (summarizing first if it asks) and learn the
    token correction from what the provider reports."""
    state = ThreadState(await service.store())
    corrections = await service.corrections()
    reminders = (await user_snapshot(service)).reminders
    context = await prepare_context(
        plan=plan,
        provider=provider,
        model=model,
        state=state,
        thread_id=thread_id,
        environ=service.options.environ,
        stored_correction=corrections,
        persona=sources.persona_prompt,
        reminders=reminders,
        user_context=user_context_block(sources.user, user_limits(sources.environ)),
        optional_tools=OPTIONAL_TOOLS,
    )
    plan.assemble = context.assemble

    def learn(assembled: Assembled, usage: Usage) -> None:
        context.correction.observe(model, assembled.exact, usage.prompt_tokens)

    outcome.on_usage = learn
    outcome.correction = context.correction
    return context.assemble(plan.answer_start(), None)


def add_chat_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    opts = service.options

    async def existing_thread(request: web.Request) -> str:
        thread_id = request.match_info["id"]
        if await (await service.threads()).get(thread_id) is None:
            raise not_found(f"thread {thread_id}")
        return thread_id

    @table.post("/api/chat")
    @guarded
    async def chat(request: web.Request) -> web.StreamResponse:
        req = parse_chat_request(await read_json(request, opts.chat_body_limit))
        threads = await service.threads()
        # The user's message is stored before the model is called; the write runs on the
        # database's thread while the plan is made here (one turn of the loop hands it over).
        stored = asyncio.ensure_future(
            threads.sync(req.thread_id, req.messages, replaces=req.message_id)
        )
        try:
            await asyncio.sleep(0)
            return await _answer(request, req, service, threads, stored)
        finally:
            await asyncio.wait({stored})  # also on the early error answers
            if not stored.cancelled() and stored.exception() is not None:
                log.error("storing the request's messages failed: %s", stored.exception())

    async def _answer(
        request: web.Request,
        req: ChatRequest,
        service: AssistantService,
        threads: Threads,
        stored: asyncio.Future[None],
    ) -> web.StreamResponse:
        sources = await gather_sources(service)
        first_turn = sum(m["role"] == "user" for m in req.messages) <= 1
        plan = build_plan(req, sources, first_turn)
        plan.debug = request.query.get("debug") == "context"
        provider = await service.provider()
        outcome = ChatOutcome()
        headers = dict(ui.SSE_HEADERS)
        # The user's message is in the store before the model is called (and the context
        # then knows a thread just created has no summary to read).
        await stored
        if plan.local_reply is None:
            try:
                model, plan.model_source = await provider.choose_model()
                first = await _context_for(
                    service, plan, sources, provider, model, req.thread_id, outcome
                )
            except ContextBudgetError as exc:
                return await _error_stream(request, plan.message_id, str(exc))
            except Exception as exc:
                error = describe_error(exc, provider.settings, provider.settings.model)
                return await _error_stream(request, plan.message_id, error.message)
            headers = _headers(first)
        else:
            model = provider.settings.model or ""
        tool_context = ToolContext(
            thread_id=req.thread_id,
            threads=threads,
            system_skills=service.system_skills,
            user_skills=service.user_skills,
            environment=service.environment,
            read_context_section=sources.system_context.section,
        )
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        saver = AnswerSaver(
            threads, req.thread_id, _position(plan, len(req.messages)), outcome,
            opts.partial_save_seconds,
        )  # fmt: skip
        saver.start()

        def connected() -> bool:
            transport = request.transport
            return transport is not None and not transport.is_closing()

        status, note = "interrupted", "stopped: the browser disconnected"
        try:
            chunks = chat_chunks(provider, model, plan, tool_context, outcome)
            await pump(chunks, response.write, connected, opts.pump)
            status, note = (
                ("complete", "completed") if outcome.error is None else (status, "failed")
            )
        except ClientGone:
            pass
        except StreamFailed:
            note = "failed: an internal error ended the stream"
        finally:
            await saver.stop()
            await _finish(service, threads, req.thread_id, plan, outcome, status, len(req.messages))
            log_outcome(req.thread_id, outcome, note)
        return response

    @table.get("/api/assistant/threads/{id}/context")
    @guarded
    async def context_report(request: web.Request) -> web.StreamResponse:
        thread_id = await existing_thread(request)
        state = ThreadState(await service.store())
        return web.json_response({"report": await state.report(thread_id)})

    @table.get("/api/assistant/threads/{id}/summary")
    @guarded
    async def get_summary(request: web.Request) -> web.StreamResponse:
        thread_id = await existing_thread(request)
        state = ThreadState(await service.store())
        return web.json_response({"summary": await state.summary(thread_id)})

    @table.post("/api/assistant/threads/{id}/compact")
    @guarded
    async def compact(request: web.Request) -> web.StreamResponse:
        """`/compact` in the panel: summarize everything before the latest exchange now."""
        thread_id = await existing_thread(request)
        threads = await service.threads()
        messages = [m.as_ui() for m in await threads.messages(thread_id)]
        state = ThreadState(await service.store())
        stored = await state.summary(thread_id)
        previous = Summary.stored(stored)
        covered = covered_ids(messages, previous.until) if previous else frozenset()
        last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=0)
        ids = [str(m["id"]) for m in messages[:last_user] if m["id"] not in covered]
        if not ids:
            return web.json_response({"summary": stored, "compacted": 0})
        provider = await service.provider()
        try:
            model, _ = await provider.choose_model()
        except Exception as exc:
            error = describe_error(exc, provider.settings, provider.settings.model)
            raise HTTPProblem(502, error.message) from None
        new = await summarize(provider, model, previous, messages, ids)
        await state.set_summary(thread_id, new.text, new.until, new.fallback)
        return web.json_response({"summary": await state.summary(thread_id), "compacted": len(ids)})


def _position(plan: ChatPlan, count: int) -> int:
    """Where the answer goes in the thread: after the request's messages, or in place of the
    assistant message a continuation extends."""
    return count - (1 if plan.answer_base is not None else 0)


async def _finish(
    service: AssistantService,
    threads: Threads,
    thread_id: str,
    plan: ChatPlan,
    outcome: ChatOutcome,
    status: str,
    count: int,
) -> None:
    """Store the answer, the report and the learned correction — even when cancelled."""

    async def save() -> None:
        if has_content(outcome.message):
            await threads.save_answer(thread_id, outcome.message, _position(plan, count), status)
        if outcome.assembled is not None:
            await ThreadState(threads.store).set_report(thread_id, outcome.report())
        if outcome.correction is not None and outcome.last_usage is not None:
            await service.save_corrections(outcome.correction.as_dict())

    with contextlib.suppress(Exception):
        await asyncio.shield(save())
