"""Provider settings, where requests go (Settings' list), the connection test, and the tool
registry the panel reads."""

from __future__ import annotations

import logging

from aiohttp import web

from ..core.provider import Provider, check_provider, validate_update
from ..core.service import AssistantService, ProviderLocked
from ..core.tools import TOOLS
from .common import guarded, read_json

log = logging.getLogger("comfyui_assistant")


def add_provider_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit

    @table.get("/api/assistant/tools")
    @guarded
    async def tools(request: web.Request) -> web.StreamResponse:
        return web.json_response({"tools": [spec.as_json() for spec in TOOLS]})

    @table.get("/api/assistant/provider")
    @guarded
    async def get_provider(request: web.Request) -> web.StreamResponse:
        return web.json_response((await service.provider_settings()).public())

    @table.get("/api/assistant/egress")
    @guarded
    async def get_egress(request: web.Request) -> web.StreamResponse:
        return web.json_response(await service.egress())

    @table.put("/api/assistant/provider")
    @guarded
    async def put_provider(request: web.Request) -> web.StreamResponse:
        update = validate_update(await read_json(request, limit))
        settings, notice = await service.update_provider(update)
        log.info("provider settings updated: %s", ", ".join(sorted(update)))
        return web.json_response({**settings.public(), "notice": notice})

    @table.post("/api/assistant/provider/test")
    @guarded
    async def test_provider(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit, empty={})
        overrides = validate_update(body) if body else {}
        locked = service.provider_locked() if overrides else None
        if locked is not None:  # (no form to test: the settings in force may be tested)
            raise ProviderLocked(locked)
        provider = Provider(await service.provider_settings(overrides))
        try:
            return web.json_response(await check_provider(provider))
        finally:
            await provider.close()
