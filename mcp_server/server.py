"""The MCP server itself (the SDK's low-level `Server`): tools/list and tools/call over the
registry's tools (`tools.py`), for the caller the transport resolved (`access.py`), each call
counted against the rate limit (`limits.py`); skills as prompts (`prompts.py`); resources
(`resources.py`); the connected clients and the ones the user disconnected (`clients.py`: a
middleware refuses those, a handler of `notifications/initialized` lists a client)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from ..core.base.users import DEFAULT_USER
from . import resources, workflow
from .access import Caller
from .clients import UNNAMED, VERSION_LIMIT, McpClients, client_name
from .limits import CallRate, over_limit_message
from .panel_relay import NO_PANEL, PANEL_META, PanelRelay, RelayError
from .prompts import get_prompt, prompt_of, skills
from .tools import ASKS_FIRST, ServerParts, failure, mcp_tools, offered, run_tool, text_result

SERVER_NAME = "comfyui-assistant"
SESSION_HEADER = "mcp-session-id"
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


def session_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """The MCP session of this message ("" for none: the 2026-07-28 era, stdio)."""
    headers = getattr(ctx.request, "headers", None)
    return str(headers.get(SESSION_HEADER, "")) if headers is not None else ""


def on_session_end(ctx: ServerRequestContext[Any, Any], callback: Callable[[], None]) -> None:
    """Runs `callback` when the connection of this message ends. (The SDK's per-connection
    teardown, `Connection.exit_stack`, which its handler context does not expose yet.)"""
    connection = getattr(ctx.session, "_connection", None)
    stack = getattr(connection, "exit_stack", None)
    if stack is not None:
        stack.callback(callback)


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
        on_subscribe_resource=getattr(handlers, "subscribe", None),
        on_unsubscribe_resource=getattr(handlers, "unsubscribe", None),
        **options,
    )


class McpServer:
    """The server and what it keeps across connections: the call rates per user."""

    def __init__(
        self, parts_for: Callable[[Caller], ServerParts], relay: PanelRelay, version: str
    ) -> None:
        self._parts_for = parts_for
        self.relay = relay
        self.clients = McpClients(lambda user, data: relay.publish(user, "clients", data))
        self.subscriptions = workflow.Subscriptions()
        self._rates: dict[str, CallRate] = {}
        self.server = sdk_server(self, version=version, instructions=INSTRUCTIONS)
        self.server.middleware.append(self._refuse_disconnected)
        self.server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._initialized
        )

    async def _initialized(
        self, ctx: ServerRequestContext[Any, Any], params: types.NotificationParams
    ) -> None:
        """A client's handshake is done: the user's panels list it until its session ends."""
        session = session_of(ctx)
        if not session:
            return
        info = ctx.session.client_params.client_info if ctx.session.client_params else None
        caller = caller_of_request(ctx)
        name, version = (info.name, info.version) if info else (None, None)
        self.clients.joined(session, caller.user, caller.via, name, version)
        on_session_end(ctx, lambda: self.clients.left(session))

    async def _refuse_disconnected(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Any request of a client the user disconnected gets DISCONNECTED (a tool call as its
        tool error, anything else as a protocol error); so does its `initialize`."""
        if ctx.request_id is None:  # (a notification)
            return await call_next(ctx)
        if ctx.method == "initialize":
            info = (ctx.params or {}).get("clientInfo")
            name = info.get("name") if isinstance(info, dict) else None
        else:
            params = ctx.session.client_params
            name = params.client_info.name if params is not None else None
        refused = self.clients.refused(caller_of_request(ctx).user, name)
        if refused is None:
            return await call_next(ctx)
        if ctx.method == "tools/call":
            return failure(refused)
        raise MCPError(types.INVALID_REQUEST, refused)

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
        return types.ListResourcesResult(resources=[*workflow.listed(), *resources.listed()])

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        found = [*workflow.templates(), *resources.templates()]
        return types.ListResourceTemplatesResult(resource_templates=found)

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller, uri = caller_of_request(ctx), str(params.uri)
        if workflow.is_workflow(uri):
            wanted = workflow.panel_of(uri)
            return await workflow.read(uri, wanted, self.relay, caller.user, client_of(ctx))
        return await resources.read(uri, self._parts_for(caller), self.relay, caller.user)

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """Change notifications of a workflow URI, for this session (workflow.py)."""
        uri, session = str(params.uri), session_of(ctx)
        if not workflow.is_workflow(uri):
            raise MCPError(
                types.INVALID_PARAMS, f"Only the workflow resources change: {uri[:200]!r}"
            )
        if not session:
            raise MCPError(types.INVALID_REQUEST, "Subscribing needs an MCP session.")
        held = ctx.session
        self.subscriptions.add(
            session, caller_of_request(ctx).user, uri, held.send_resource_updated
        )
        on_session_end(ctx, lambda: self.subscriptions.remove(session))
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.subscriptions.remove(session_of(ctx), str(params.uri))
        return types.EmptyResult()

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
        if spec.asks is not None:  # (asked in the panel first: on Allow it runs here)
            asked = await self._relayed(ctx, spec.name, args, caller, spec.asks(args))
            if asked.is_error:
                return asked
        return await run_tool(spec, args, self._parts_for(caller), f"mcp_{uuid.uuid4().hex}")

    async def _relayed(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        args: dict[str, Any],
        caller: Caller,
        asks: str | None = None,
    ) -> types.CallToolResult:
        """A panel tool run in the panel, or (`asks`) a server tool's question asked there."""
        wanted = (ctx.meta or {}).get(PANEL_META)

        async def waiting(seconds: float) -> None:
            await ctx.session.report_progress(seconds, None, "waiting for the user's panel")

        try:
            panel = self.relay.pick(caller.user, wanted if isinstance(wanted, str) else None)
            if panel is None:
                return failure((NO_PANEL if asks is None else ASKS_FIRST).format(name=name))
            client, session = client_of(ctx), session_of(ctx)
            text, failed = await self.relay.call(
                panel,
                name,
                args,
                client,
                waiting,
                session=session,
                asks=asks,
                request=ctx.request_id,
            )
        except RelayError as exc:
            return failure(str(exc))
        return text_result(text, failed)


def client_of(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    """The MCP client's name and version, as it gave them in `initialize`."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return {"name": UNNAMED, "version": "", "session": session_of(ctx)}
    version = (info.version or "")[:VERSION_LIMIT]
    return {"name": client_name(info.name), "version": version, "session": session_of(ctx)}
