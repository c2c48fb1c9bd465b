"""The panel's side of the relay (panel_relay.py): the stream of calls a panel takes (and of the
connected MCP clients, clients.py), its answers, which workflow it shows, and the user's
Disconnect of a client (and allowing it again). Routes of the panel, guarded as its others are."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..core.base import RequestError
from ..routes.common import HTTPProblem, guarded, read_json
from .panel_relay import KEEPALIVE_SECONDS, Panel, PanelRelay
from .unavailable import MCP_PATH

if TYPE_CHECKING:
    from .endpoint import McpEndpoint

PANEL_PATH = MCP_PATH + "/panel"
_PANEL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
WORKFLOW_LIMIT = 200
POLL_SECONDS = 1.0  # how often a quiet stream looks whether its panel went away


def _panel_id(value: Any) -> str:
    if not isinstance(value, str) or not _PANEL_ID.fullmatch(value):
        raise RequestError("'panel' must be 1 to 64 letters, digits, '-' or '_'")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise RequestError(f"'{name}' must be a string")
    return value[:WORKFLOW_LIMIT]


async def _stream(request: web.Request, response: web.StreamResponse, panel: Panel) -> None:
    await response.prepare(request)
    await response.write(b": connected\n\n")
    quiet = 0.0
    while request.transport is not None and not request.transport.is_closing():
        try:
            kind, data = await asyncio.wait_for(panel.events.get(), POLL_SECONDS)
        except asyncio.TimeoutError:
            quiet += POLL_SECONDS
            if quiet >= KEEPALIVE_SECONDS:
                quiet = 0.0
                await response.write(b": keep-alive\n\n")
            continue
        quiet = 0.0
        await response.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())


def add_panel_routes(
    table: web.RouteTableDef,
    endpoint: McpEndpoint,
    limit: int,
    user_of: Callable[[web.Request], str],
) -> None:
    relay: PanelRelay = endpoint.relay
    clients = endpoint.mcp.clients

    @table.get(PANEL_PATH)
    @guarded
    async def calls(request: web.Request) -> web.StreamResponse:
        panel_id = _panel_id(request.query.get("panel"))
        workflow = _text(request.query.get("workflow", ""), "workflow")
        user = user_of(request)
        panel = relay.connect(panel_id, user, workflow)  # (its user's calls only)
        panel.events.put_nowait(("clients", clients.snapshot(user)))
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        try:
            with contextlib.suppress(ConnectionError):
                await _stream(request, response, panel)
        finally:
            relay.disconnect(panel)
        return response

    @table.post(PANEL_PATH + "/results")
    @guarded
    async def results(request: web.Request) -> web.StreamResponse:
        panel_id, call_id, outcome = await read_json(request, limit, check=_answer)
        try:
            taken = relay.answer(panel_id, call_id, outcome)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        if not taken:
            raise HTTPProblem(404, "this call has ended (answered, cancelled or timed out)")
        return web.json_response({"accepted": True})

    @table.post(PANEL_PATH + "/state")
    @guarded
    async def state(request: web.Request) -> web.StreamResponse:
        panel_id, workflow, active, changed = await read_json(request, limit, check=_state)
        if not relay.update(panel_id, workflow, active):
            raise HTTPProblem(404, "this panel is not connected: open its stream first")
        if changed:  # (its graph changed: the subscribed MCP sessions are told)
            user = relay.panels[panel_id].user
            latest = relay.pick(user, None) is relay.panels[panel_id]
            await endpoint.mcp.subscriptions.changed(user, panel_id, latest)
        return web.json_response({"updated": True})

    @table.post(PANEL_PATH + "/disconnect")
    @guarded
    async def disconnect(request: web.Request) -> web.StreamResponse:
        session = _field(await read_json(request, limit), "session")
        client = await endpoint.disconnect(user_of(request), session)
        if client is None:
            raise HTTPProblem(404, "there is no connected MCP client with this session")
        return web.json_response({"disconnected": client.name})

    @table.post(PANEL_PATH + "/allow")
    @guarded
    async def allow(request: web.Request) -> web.StreamResponse:
        name = _field(await read_json(request, limit), "name")
        if not clients.allow(user_of(request), name):
            raise HTTPProblem(404, f"{name[:100]!r} is not a disconnected MCP client")
        return web.json_response({"allowed": name})


def _field(body: Any, name: str) -> str:
    value = body.get(name) if isinstance(body, dict) else None
    if not isinstance(value, str) or not value or len(value) > 200:
        raise RequestError(f"send an object with '{name}' (a string of 1 to 200 characters)")
    return value


def _answer(body: Any) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(body, dict) or not isinstance(body.get("callId"), str):
        raise RequestError("send an object with 'panel', 'callId' and the call's outcome")
    return _panel_id(body.get("panel")), body["callId"], body


def _state(body: Any) -> tuple[str, str, bool, bool]:
    if not isinstance(body, dict) or not isinstance(body.get("active"), bool):
        raise RequestError("send an object with 'panel', 'workflow' and 'active' (a boolean)")
    changed = body.get("changed", False)
    if not isinstance(changed, bool):
        raise RequestError("'changed' (whether the graph changed) must be a boolean")
    workflow = _text(body.get("workflow", ""), "workflow")
    return _panel_id(body.get("panel")), workflow, body["active"], changed
