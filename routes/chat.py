"""POST /api/chat: store the request's messages, plan the answer, stream it, store it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web

from ..agent_prompts import UserContext
from ..core import ui_stream as ui
from ..core.chat_plan import Sources, build_plan, list_skills, load_context
from ..core.chat_request import parse_chat_request
from ..core.chat_stream import ChatOutcome, chat_chunks, log_outcome
from ..core.server_tools import ToolContext
from ..core.service import AssistantService
from ..core.sse import ClientGone, pump
from ..user_context_loader import SystemContext
from .common import guarded, read_json


async def gather_sources(service: AssistantService) -> Sources:
    user = await service.user_data()
    custom = await user.setting("prompt", "system")
    rules = [r["text"] for r in await user.rules.list() if r["enabled"]]
    environ = service.options.environ
    system_skills, user_skills, env = await asyncio.gather(
        list_skills(service.system_skills),
        list_skills(service.user_skills),
        service.environment.get(),
    )
    return Sources(
        system_context=load_context(service.options.system_context_dir, environ, custom),
        custom_system_prompt=custom,
        system_skills=system_skills,
        user_skills=user_skills,
        environment_line=env.summary_line(),
        user=UserContext(
            rules=rules,
            soul=await user.read_file("soul"),
            goals=await user.read_file("goals"),
            preferences=await service.store_settings("preferences"),
        ),
        environ=environ,
    )


def _has_content(message: dict[str, Any]) -> bool:
    return any(part.get("type") != "step-start" for part in message.get("parts", []))


def add_chat_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    opts = service.options

    @table.post("/api/chat")
    @guarded
    async def chat(request: web.Request) -> web.StreamResponse:
        req = parse_chat_request(await read_json(request, opts.chat_body_limit))
        threads = await service.threads()
        await threads.sync(req.thread_id, req.messages, replaces=req.message_id)
        sources = await gather_sources(service)
        first_turn = sum(m["role"] == "user" for m in req.messages) <= 1
        plan = build_plan(req, sources, first_turn)
        provider = await service.provider()
        context: SystemContext = sources.system_context
        tool_context = ToolContext(
            thread_id=req.thread_id,
            threads=threads,
            system_skills=service.system_skills,
            user_skills=service.user_skills,
            environment=service.environment,
            read_context_section=context.section,
        )
        response = web.StreamResponse(headers=ui.SSE_HEADERS)
        await response.prepare(request)
        outcome = ChatOutcome()

        def connected() -> bool:
            transport = request.transport
            return transport is not None and not transport.is_closing()

        status, note = "interrupted", "stopped: the browser disconnected"
        try:
            await pump(
                chat_chunks(provider, plan, tool_context, outcome),
                response.write,
                connected,
                opts.pump,
            )
            if outcome.error is None:
                status, note = "complete", "completed"
            else:
                note = "failed"
        except ClientGone:
            pass
        finally:
            position = len(req.messages) - (1 if plan.answer_base is not None else 0)
            if _has_content(outcome.message):
                save = threads.save_answer(req.thread_id, outcome.message, position, status)
                with contextlib.suppress(Exception):
                    await asyncio.shield(save)
            log_outcome(req.thread_id, outcome, note)
        return response
