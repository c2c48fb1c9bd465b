"""`python -m comfyui_assistant mcp --comfyui http://127.0.0.1:8188`: the MCP server over stdio,
for clients that start their servers as commands (Claude Desktop, Claude Code, Cursor...).

It is a relay, not a second server: it connects, with the SDK's own client, to the Streamable
HTTP endpoint of the ComfyUI that runs the assistant (`/api/assistant/mcp`), and passes each
request (tools, prompts, resources) on as it is, so the tools, their results, the access rules
and the rate limit are the endpoint's. It connects once, when its own client's handshake is
done, under that client's name and version (`clientInfo`), so the panel's approval cards and
its external-agent line name the agent the user runs (Claude Desktop, Cursor...), not this
relay. If ComfyUI cannot be reached then, it still answers, and every request says what to do.

`--token` (or `COMFY_ASSISTANT_MCP_TOKEN`): the token for a ComfyUI on another machine.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .server import INSTRUCTIONS, sdk_server
from .unavailable import MCP_PATH

CONNECT_SECONDS = 10.0
CALL_SECONDS = 600.0  # a call may wait on the user in the panel, later

log = logging.getLogger("comfyui_assistant")


def endpoint_url(comfyui: str) -> str:
    return comfyui.rstrip("/") + MCP_PATH


def unreachable(url: str, exc: BaseException) -> str:
    reason = str(exc) or type(exc).__name__
    return (
        f"Cannot reach the assistant's MCP endpoint at {url} ({reason[:300]}). Start ComfyUI "
        f"with ComfyUI Assistant installed (or check the --comfyui address), then restart this "
        f"MCP server."
    )


class Relay:
    """The stdio server's connection to the endpoint (or why there is none). The connection is
    held by a task of the server's lifespan, opened once the host's handshake names it."""

    def __init__(self, comfyui: str, token: str | None) -> None:
        self.url = endpoint_url(comfyui)
        self.token = token
        self.client: Client | None = None
        self.problem = ""
        self._host: types.Implementation | None = None
        self._named = anyio.Event()  # the host's handshake is done (or the server stops)
        self._ready = anyio.Event()  # connected, or `problem` says why not
        self._done = anyio.Event()

    def _http(self) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        timeout = httpx2.Timeout(CONNECT_SECONDS, read=CALL_SECONDS)
        return httpx2.AsyncClient(headers=headers, timeout=timeout)

    @contextlib.asynccontextmanager
    async def connected(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._hold)
            try:
                yield {}
            finally:
                self._done.set()
                self._named.set()

    async def _hold(self) -> None:
        await self._named.wait()
        if self._done.is_set():
            return
        async with contextlib.AsyncExitStack() as stack:
            try:
                http = await stack.enter_async_context(self._http())
                transport = streamable_http_client(self.url, http_client=http)
                # (the handshake era: the endpoint lists a session by its `initialize`)
                client = Client(transport, mode="legacy", client_info=self._host)
                self.client = await stack.enter_async_context(client)
            except Exception as exc:  # (the stdio side still answers, with what to do)
                self.problem = unreachable(self.url, exc)
                log.warning("%s", self.problem)
            finally:
                self._ready.set()
            await self._done.wait()

    def named(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """The host's handshake is done: connect under its name (once)."""
        if not self._named.is_set():
            params = ctx.session.client_params
            self._host = params.client_info if params is not None else None
            self._named.set()

    async def initialized(
        self, ctx: ServerRequestContext[Any, Any], params: types.NotificationParams
    ) -> None:
        self.named(ctx)

    async def remote(self, ctx: ServerRequestContext[Any, Any]) -> Client:
        self.named(ctx)  # (a host that skipped `notifications/initialized`)
        await self._ready.wait()
        if self.client is None:
            raise MCPError(types.INTERNAL_ERROR, self.problem)
        return self.client

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params else None
        remote = await self.remote(ctx)
        return await remote.list_tools(cursor=cursor, cache_mode="bypass")

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Passed on with its `_meta` (which panel, panel_relay.py); the endpoint's progress
        notifications (a call waiting on the user) come back as this call's."""

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        args, meta = params.arguments or {}, params.meta
        remote = await self.remote(ctx)
        return await remote.call_tool(params.name, args, progress_callback=progress, meta=meta)

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        # (the relay keeps nothing: the user's skills change, the client asks again)
        cursor = params.cursor if params else None
        remote = await self.remote(ctx)
        return await remote.list_prompts(cursor=cursor, cache_mode="bypass")

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        remote = await self.remote(ctx)
        return await remote.get_prompt(params.name, params.arguments)

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        remote = await self.remote(ctx)
        return await remote.list_resources(cursor=cursor, cache_mode="bypass")

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        cursor = params.cursor if params else None
        remote = await self.remote(ctx)
        return await remote.list_resource_templates(cursor=cursor, cache_mode="bypass")

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        remote = await self.remote(ctx)
        return await remote.read_resource(str(params.uri), cache_mode="bypass")


def relay_server(relay: Relay) -> Server[Any]:
    server = sdk_server(relay, lifespan=relay.connected, instructions=INSTRUCTIONS)
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, relay.initialized
    )
    return server


async def serve_stdio(comfyui: str, token: str | None) -> None:
    server = relay_server(Relay(comfyui, token))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
