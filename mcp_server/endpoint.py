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
import json
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
from .clients import DISCONNECTED, Client
from .panel_relay import PanelRelay
from .server import CALLER_KEY, SESSION_HEADER, McpServer
from .tools import ServerParts
from .unavailable import MCP_PATH

BODY_LIMIT = 1024 * 1024  # a JSON-RPC message; the largest tool arguments are far smaller
IDLE_SECONDS = 30 * 60  # a session nobody used for this long ends (the SDK's default)
CALLS_END_SECONDS = 0.2  # how long a disconnect lets the ended calls' answers go out
CLIENT_LEFT = "The MCP client left before the call finished."  # (read by nobody: it is gone)


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
            scope["user"] = owner(caller)
            await manager.handle_request(scope, receive, send)

        session = request.headers.get(SESSION_HEADER, "")

        def left(body: bytes) -> None:  # (no events kept to resume from: its answer is lost)
            for request_id in tool_calls(body):
                self.relay.end_calls(session, CLIENT_LEFT, request=request_id)

        return await serve_asgi(app, request, on_left=left if session else None)

    async def disconnect(self, user: str, session: str) -> Client | None:
        """The user disconnected the client of `session` in the panel (clients.py): every
        session of that client ends, and their calls waiting on a panel end with the reason.
        None for a session that is not one of the user's."""
        client = self.mcp.clients.disconnect(user, session)
        if client is None:
            return None
        message = DISCONNECTED.format(name=client.name)
        for held in self.mcp.clients.named(user, client.name):
            self.relay.end_calls(held.id, message)
        await asyncio.sleep(CALLS_END_SECONDS)  # (their answers go out before the sessions end)
        for held in self.mcp.clients.named(user, client.name):
            await self._close(held)
        return client

    async def _close(self, client: Client) -> None:
        """Ends `client`'s session as its own DELETE would, through the SDK's session manager
        (the one way it offers: as the credential that opened it)."""
        headers = [(SESSION_HEADER.encode(), client.id.encode())]
        scope: dict[str, Any] = {"type": "http", "method": "DELETE", "path": MCP_PATH}
        scope |= {"headers": headers}
        scope |= {"raw_path": MCP_PATH.encode(), "query_string": b"", "state": {}}
        scope |= {"user": owner(Caller(client.user, client.via)), "http_version": "1.1"}
        scope |= {"scheme": "http", "server": None, "client": None, "root_path": ""}
        statuses: list[int] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        manager = await self._started()
        await manager.handle_request(scope, receive, send)
        if statuses != [200]:  # (gone already: 404)
            self.mcp.clients.left(client.id)


def tool_calls(body: bytes) -> list[Any]:
    """The JSON-RPC ids of the `tools/call` requests in a POST's body (none in anything else)."""
    try:
        sent = json.loads(body)
    except ValueError:
        return []
    messages = sent if isinstance(sent, list) else [sent]
    return [
        m["id"]
        for m in messages
        if isinstance(m, dict) and m.get("method") == "tools/call" and "id" in m
    ]


def owner(caller: Caller) -> AuthenticatedUser:
    """The SDK's user for a caller: it binds a session to the credential that opened it."""
    return AuthenticatedUser(
        AccessToken(token="", client_id=caller.via, scopes=[], subject=caller.user)
    )


def add_mcp_endpoint(table: web.RouteTableDef, service: AssistantService) -> McpEndpoint:
    endpoint = McpEndpoint(service)
    service.on_close.append(endpoint.close)
    for method in ("GET", "POST", "DELETE"):
        table.route(method, MCP_PATH)(endpoint.handle)
    return endpoint
