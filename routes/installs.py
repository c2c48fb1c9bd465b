"""Missing nodes and models of a workflow (issue 28): scan a workflow the panel sends, or one
a chat attachment holds, against what this ComfyUI has and what ComfyUI-Manager and the Comfy
Registry know."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..core.base import RequestError, coded
from ..core.files import Attachments
from ..core.installs import scan_with_registry
from ..core.service import AssistantService
from .attachments import workflow_of
from .common import guarded, not_found, read_json

BASE = "/api/assistant/installs"
BODY_LIMIT = 16 * 1024 * 1024  # a workflow with many subgraphs is a few MB at most


def add_install_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    async def attached_workflow(aid: Any) -> Any:
        if not isinstance(aid, str) or not 0 < len(aid) <= 64:
            raise RequestError("'attachment' must be an attachment id (1 to 64 characters)")
        att = await Attachments(await service.store()).get(aid)
        if att is None:
            raise not_found("attachment", id=aid)
        return workflow_of(att)

    @table.post(BASE + "/scan")
    @guarded
    async def scan(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, BODY_LIMIT)
        if not isinstance(body, dict) or ("workflow" in body) == ("attachment" in body):
            raise RequestError(coded("installs.body"))
        workflow = body.get("workflow")
        if "attachment" in body:
            workflow = await attached_workflow(body["attachment"])
        env = await service.environment.get()
        lookups = await service.install_lookups()
        trusted = service.downloads.origins.trusts
        result = await scan_with_registry(
            workflow, env, lookups, service.registry, trusted, service.model_sizes
        )
        return web.json_response({"scan": service.install_scans.add(result), **result.as_json()})

    @table.get(BASE + "/scan/{id}")
    @guarded
    async def stored_scan(request: web.Request) -> web.StreamResponse:
        """A scan kept by id, in full (the panel's cards of a call made earlier)."""
        scan_id = request.match_info["id"]
        result = service.install_scans.get(scan_id)
        if result is None:
            raise not_found("scan", id=scan_id[:64])
        return web.json_response({"scan": scan_id, **result.as_json()})
