"""The routes of a thread's context: a delegated task's trace, the context report, the summary,
and `/compact` (summarize now)."""

from __future__ import annotations

from aiohttp import web

from ..core.base import RequestError
from ..core.service import AssistantService
from ..core.store import Delegations, ThreadState
from ..core.summary import compact_now
from .common import guarded, not_found


def add_thread_context_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    async def existing_thread(request: web.Request) -> str:
        thread_id = request.match_info["id"]
        if await (await service.threads()).get(thread_id) is None:
            raise not_found("thread", thread=thread_id)
        return thread_id

    @table.get("/api/assistant/threads/{id}/delegations/{call}")
    @guarded
    async def delegation(request: web.Request) -> web.StreamResponse:
        """The full trace of a delegated task, by the id of the `delegate` call."""
        call = request.match_info["call"]
        if not 0 < len(call) <= 200:
            raise RequestError("a tool call id has 1 to 200 characters")
        thread_id = await existing_thread(request)
        trace = await Delegations(await service.store()).get(thread_id, call)
        if trace is None:
            raise not_found("delegation", call=call, thread=thread_id)
        return web.json_response({"trace": trace})

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
        stored = dict(await state.summary(thread_id) or {})
        ahead = stored.pop("next", None)  # made ahead, not sent yet
        return web.json_response({"summary": stored or None, "next": ahead})

    @table.post("/api/assistant/threads/{id}/compact")
    @guarded
    async def compact(request: web.Request) -> web.StreamResponse:
        thread_id = await existing_thread(request)
        threads, provider = await service.threads(), await service.provider()
        # (ProviderUnreachable: 502)
        return web.json_response(await compact_now(threads, provider, thread_id))
