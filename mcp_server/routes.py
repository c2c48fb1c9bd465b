"""The MCP endpoint (`mcp_server/endpoint.py`), the tokens that let an MCP client on another
machine use it (Settings: create, shown once; list; revoke), and the panel's side of the relay
(`panel_routes.py`)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..core.base import RequestError
from ..core.service import AssistantService
from ..routes.common import HTTPProblem, guarded, read_json
from ..routes.users import request_user
from .access import TokenError
from .endpoint import add_mcp_endpoint
from .panel_routes import add_panel_routes
from .unavailable import MCP_PATH

TOKENS_PATH = MCP_PATH + "/tokens"
NO_STORE = {"Cache-Control": "no-store"}


def _name(body: Any) -> str:
    name = body.get("name") if isinstance(body, dict) else None
    if not isinstance(name, str):
        raise RequestError("send an object with the token's 'name' (a string)")
    return name


def add_mcp_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    endpoint = add_mcp_endpoint(table, service)
    tokens = endpoint.tokens
    limit = service.options.json_body_limit
    add_panel_routes(table, endpoint, limit, lambda request: request_user(request, service))

    @table.get(TOKENS_PATH)
    @guarded
    async def list_tokens(request: web.Request) -> web.StreamResponse:
        return web.json_response({"tokens": await tokens.listed(request_user(request, service))})

    @table.post(TOKENS_PATH)
    @guarded
    async def create_token(request: web.Request) -> web.StreamResponse:
        name = _name(await read_json(request, limit))
        try:
            listing, secret = await tokens.create(name, request_user(request, service))
        except TokenError as exc:
            raise RequestError(str(exc)) from None
        # (the only time the token is ever sent: it is not kept, only its hash)
        return web.json_response({**listing, "token": secret}, status=201, headers=NO_STORE)

    @table.delete(TOKENS_PATH + "/{token_id}")
    @guarded
    async def revoke_token(request: web.Request) -> web.StreamResponse:
        token_id = request.match_info["token_id"]
        if not await tokens.revoke(token_id, request_user(request, service)):
            raise HTTPProblem(404, f"there is no MCP token {token_id[:40]!r} (revoked already?)")
        return web.json_response({"revoked": token_id})
