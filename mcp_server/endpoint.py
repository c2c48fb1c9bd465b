"""`/api/assistant/mcp`: the MCP server over Streamable HTTP, on our aiohttp app (inside ComfyUI
and in the standalone server alike), through the SDK's own session manager.

Every request passes, in order: the request guard every route of ours has (routes/guard.py:
the Host must be one this server answers to, an Origin must be this server's own: the Origin
validation the MCP specification asks of Streamable HTTP servers, against DNS rebinding; a
POST must be JSON), then the caller check (`access.py`: loopback, or a token), then the SDK
(sessions, the protocol, bodies over `BODY_LIMIT` answered 413).

The SDK's session manager runs for as long as the service does: started with the first
request (inside ComfyUI routes are added before its event loop runs), stopped when the service
closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.metadata
from collections.abc import MutableMapping
from typing import Any

from aiohttp import web
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from ..core.service import AssistantService
from ..routes.users import request_user
from .access import Caller, McpTokens, caller_of
from .asgi import Receive, Send, serve_asgi
from .panel_relay import PanelRelay
from .server import CALLER_KEY, McpServer
from .tools import ServerParts
from .unavailable import MCP_PATH

BODY_LIMIT = 1024 * 1024  # a JSON-RPC message; the largest tool arguments are far smaller
IDLE_SECONDS = 30 * 60  # a session nobody used for this long ends (the SDK's default)


def _version() -> str:
    try:
        return importlib.metadata.version("comfyui-assistant")
    except importlib.metadata.PackageNotFoundError:  # (inside ComfyUI: a folder, not installed)
        return ""


class McpEndpoint:
    def __init__(self, service: AssistantService) -> None:
        self.service = service
        self.tokens = McpTokens(lambda user: service.of_user(user).store())
        self.relay = PanelRelay()
        self.mcp = McpServer(self._parts_for, self.relay, _version())
        self._manager: StreamableHTTPSessionManager | None = None
        self._running: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    def _parts_for(self, caller: Caller) -> ServerParts:
        service = self.service.of_user(caller.user)
        return ServerParts(service.environment, service.system_skills, service.user_skills)

    async def _started(self) -> StreamableHTTPSessionManager:
        async with self._lock:
            if self._manager is None:
                manager = StreamableHTTPSessionManager(
                    self.mcp.server,
                    max_request_body_size=BODY_LIMIT,
                    session_idle_timeout=IDLE_SECONDS,
                )
                ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                # (in a context of its own: not the first request's, whose user it would keep)
                run = self._run(manager, ready)
                self._running = contextvars.Context().run(asyncio.ensure_future, run)
                await ready
                self._manager = manager
            return self._manager

    async def _run(
        self, manager: StreamableHTTPSessionManager, ready: asyncio.Future[None]
    ) -> None:
        try:
            async with manager.run():
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # (a start that fails fails the request that waits)
            if not ready.done():
                ready.set_exception(exc)
            raise

    async def close(self) -> None:
        self._stop.set()
        if self._running is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._running

    async def handle(self, request: web.Request) -> web.StreamResponse:
        user = request_user(request, self.service)  # (the guard refused an unknown one)
        authorization = request.headers.get("Authorization", "")
        caller = await caller_of(request.remote, authorization, self.tokens, user)
        if isinstance(caller, str):
            return web.json_response(
                {"error": caller}, status=401, headers={"WWW-Authenticate": "Bearer"}
            )
        manager = await self._started()

        async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
            scope["state"][CALLER_KEY] = caller
            # (the SDK binds a session to the credential that opened it)
            scope["user"] = AuthenticatedUser(
                AccessToken(token="", client_id=caller.via, scopes=[], subject=caller.user)
            )
            await manager.handle_request(scope, receive, send)

        return await serve_asgi(app, request)


def add_mcp_endpoint(table: web.RouteTableDef, service: AssistantService) -> McpEndpoint:
    endpoint = McpEndpoint(service)
    service.on_close.append(endpoint.close)
    for method in ("GET", "POST", "DELETE"):
        table.route(method, MCP_PATH)(endpoint.handle)
    return endpoint
