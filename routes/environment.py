"""What this ComfyUI has installed: summary, node search, models, and a rescan."""

from __future__ import annotations

from aiohttp import web

from ..core.base import RequestError
from ..core.knowledge import UnknownModelCategory
from ..core.service import AssistantService
from .common import guarded, query_int

BASE = "/api/assistant/environment"


def add_environment_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    environment = service.environment

    @table.get(BASE + "/summary")
    @guarded
    async def summary(request: web.Request) -> web.StreamResponse:
        return web.json_response((await environment.get()).summary())

    @table.get(BASE + "/nodes")
    @guarded
    async def nodes(request: web.Request) -> web.StreamResponse:
        query = request.query.get("q", "").strip()
        limit = query_int(request, "limit", 20, 1, 200)
        env = await environment.get()
        if not query:
            raise RequestError("give a search with ?q=, e.g. ?q=upscale")
        return web.json_response({"query": query, "nodes": env.search_nodes(query, limit)})

    @table.get(BASE + "/models")
    @guarded
    async def models(request: web.Request) -> web.StreamResponse:
        env = await environment.get()
        try:
            return web.json_response(env.models_in(request.query.get("category") or None))
        except UnknownModelCategory as exc:
            raise RequestError(str(exc.args[0]) if exc.args else str(exc)) from None

    @table.post(BASE + "/scan")
    @guarded
    async def scan(request: web.Request) -> web.StreamResponse:
        return web.json_response((await environment.rescan()).summary())
