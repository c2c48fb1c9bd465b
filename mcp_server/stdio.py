"""`python -m comfyui_assistant mcp --comfyui http://127.0.0.1:8188`: the MCP server over stdio,
for clients that start their servers as commands (Claude Desktop, Claude Code, Cursor...).

It is a relay, not a second server: it connects, with the SDK's own client, to the Streamable
HTTP endpoint of the ComfyUI that runs the assistant (`/api/assistant/mcp`), and passes each
request (tools, prompts, resources) on as it is, so the tools, their results, the access rules
and the rate limit are the endpoint's. It connects once, at start; if ComfyUI cannot be
reached then, it still starts (the client sees it) and every request answers what to do.

`--token` (or `COMFY_ASSISTANT_MCP_TOKEN`): the token for a ComfyUI on another machine.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

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
    """The stdio server's connection to the endpoint (or why there is none)."""

    def __init__(self, comfyui: str, token: str | None) -> None:
        self.url = endpoint_url(comfyui)
        self.token = token
        self.client: Client | None = None
        self.problem = ""

    def _http(self) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        timeout = httpx2.Timeout(CONNECT_SECONDS, read=CALL_SECONDS)
        return httpx2.AsyncClient(headers=headers, timeout=timeout)

    @contextlib.asynccontextmanager
    async def connected(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with contextlib.AsyncExitStack() as stack:
            try:
                http = await stack.enter_async_context(self._http())
                transport = streamable_http_client(self.url, http_client=http)
                self.client = await stack.enter_async_context(Client(transport))
            except Exception as exc:  # (the stdio side still answers, with what to do)
                self.problem = unreachable(self.url, exc)
                log.warning("%s", self.problem)
            yield {}

    def remote(self) -> Client:
        if self.client is None:
            raise MCPError(types.INTERNAL_ERROR, self.problem)
        return self.client

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params else None
        return await self.remote().list_tools(cursor=cursor, cache_mode="bypass")

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Passed on with its `_meta` (which panel, panel_relay.py); the endpoint's progress
        notifications (a call waiting on the user) come back as this call's."""

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        args, meta = params.arguments or {}, params.meta
        return await self.remote().call_tool(
            params.name, args, progress_callback=progress, meta=meta
        )

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        # (the relay keeps nothing: the user's skills change, the client asks again)
        cursor = params.cursor if params else None
        return await self.remote().list_prompts(cursor=cursor, cache_mode="bypass")

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await self.remote().get_prompt(params.name, params.arguments)

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        return await self.remote().list_resources(cursor=cursor, cache_mode="bypass")

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        cursor = params.cursor if params else None
        return await self.remote().list_resource_templates(cursor=cursor, cache_mode="bypass")

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await self.remote().read_resource(str(params.uri), cache_mode="bypass")


def relay_server(relay: Relay) -> Server[Any]:
    return sdk_server(relay, lifespan=relay.connected, instructions=INSTRUCTIONS)


async def serve_stdio(comfyui: str, token: str | None) -> None:
    server = relay_server(Relay(comfyui, token))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
