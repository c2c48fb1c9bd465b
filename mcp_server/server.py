"""The MCP server itself (the SDK's low-level `Server`): tools/list and tools/call over the
registry's tools (`tools.py`), for the caller the transport resolved (`access.py`), each call
counted against the rate limit (`limits.py`); skills as prompts (`prompts.py`); resources
(`resources.py`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from ..core.base.users import DEFAULT_USER
from . import resources
from .access import Caller
from .limits import CallRate, over_limit_message
from .panel_relay import NO_PANEL, PANEL_META, PanelRelay, RelayError
from .prompts import get_prompt, prompt_of, skills
from .tools import ServerParts, failure, mcp_tools, offered, run_tool, text_result

SERVER_NAME = "comfyui-assistant"
CALLER_KEY = "comfyui_assistant.mcp.caller"  # in the ASGI scope's state (endpoint.py)
INSTRUCTIONS = (
    "ComfyUI Assistant's tools: look up the node types, models and skills of the ComfyUI this "
    "server runs in, with the same tools its own chat model uses. Trust them over your memory: "
    "they answer from what is installed."
)


def caller_of_request(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """The caller the HTTP endpoint resolved for this message (the local user elsewhere)."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    caller = state.get(CALLER_KEY) if isinstance(state, dict) else None
    return caller if isinstance(caller, Caller) else Caller(DEFAULT_USER, "local")


def sdk_server(handlers: Any, **options: Any) -> Server[Any]:
    """The SDK's server, its requests answered by `handlers`' methods of the same names (this
    server's, or the stdio relay's)."""
    return Server(
        SERVER_NAME,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_prompts=handlers.list_prompts,
        on_get_prompt=handlers.get_prompt,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read_resource,
        **options,
    )


class McpServer:
    """The server and what it keeps across connections: the call rates per user."""

    def __init__(
        self, parts_for: Callable[[Caller], ServerParts], relay: PanelRelay, version: str
    ) -> None:
        self._parts_for = parts_for
        self.relay = relay
        self._rates: dict[str, CallRate] = {}
        self.server = sdk_server(self, version=version, instructions=INSTRUCTIONS)

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=mcp_tools())

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        found = await skills(self._parts_for(caller_of_request(ctx)))
        return types.ListPromptsResult(prompts=[prompt_of(s) for s in found])

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        parts = self._parts_for(caller_of_request(ctx))
        return await get_prompt(parts, params.name, params.arguments)

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources.listed())

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=resources.templates())

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller = caller_of_request(ctx)
        parts = self._parts_for(caller)
        return await resources.read(str(params.uri), parts, self.relay, caller.user)

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = offered(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"There is no tool '{params.name[:100]}'.")
        caller = caller_of_request(ctx)
        wait = self._rates.setdefault(caller.user, CallRate()).take()
        if wait is not None:
            return failure(over_limit_message(wait))
        args = params.arguments or {}
        if spec.runs == "panel":
            return await self._relayed(ctx, spec.name, args, caller)
        return await run_tool(spec, args, self._parts_for(caller), f"mcp_{uuid.uuid4().hex}")

    async def _relayed(
        self, ctx: ServerRequestContext[Any, Any], name: str, args: dict[str, Any], caller: Caller
    ) -> types.CallToolResult:
        wanted = (ctx.meta or {}).get(PANEL_META)

        async def waiting(seconds: float) -> None:
            await ctx.session.report_progress(seconds, None, "waiting for the user's panel")

        try:
            panel = self.relay.pick(caller.user, wanted if isinstance(wanted, str) else None)
            if panel is None:
                return failure(NO_PANEL.format(name=name))
            text, failed = await self.relay.call(panel, name, args, client_of(ctx), waiting)
        except RelayError as exc:
            return failure(str(exc))
        return text_result(text, failed)


def client_of(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    """The MCP client's name and version, as it gave them in `initialize`."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return {"name": "an MCP client", "version": ""}
    return {"name": info.name[:100], "version": (info.version or "")[:40]}
