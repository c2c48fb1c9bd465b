"""HTTP routes, grouped by resource in `routes/`: this module puts them together.

`add_routes(table, service, hosts)` registers every route on a RouteTableDef: the standalone
server's own, or ComfyUI's `PromptServer.instance.routes`. Every handler is wrapped by the
request guard (`routes/guard.py`: host names, cross-site origins, JSON-only bodies), so the
checks hold inside ComfyUI too, and then served by the requesting user's own assistant
(`routes/users.py`: ComfyUI's multi-user mode). Nothing is registered at import time.

Every route is under `/api/assistant/`: ComfyUI's route table is shared by every extension, and a
second route with the same method and path stops ComfyUI at start (aiohttp's RuntimeError).
`POST /api/chat`, the entry point documented before, stays as an alias of
`/api/assistant/chat` only while no other extension holds it: it is decided when the table is
mounted (`ChatAlias.register`), after every extension has added its routes.
"""

from __future__ import annotations

import functools
import logging

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRoute, UrlDispatcher

from .core.base import message_of
from .core.service import AssistantService
from .mcp_server.unavailable import add_unavailable_mcp_routes
from .routes.attachments import add_attachment_routes
from .routes.branches import add_branch_routes
from .routes.chat import CHAT_PATH, add_chat_routes
from .routes.checkpoints import add_checkpoint_routes
from .routes.common import Handler, error_response
from .routes.downloads import add_download_routes
from .routes.environment import add_environment_routes
from .routes.guard import LOOPBACK, HostPolicy, check
from .routes.installs import add_install_routes
from .routes.outputs import add_output_routes
from .routes.projects import add_project_routes
from .routes.provider import add_provider_routes
from .routes.skills import add_skill_routes
from .routes.thread_context import add_thread_context_routes
from .routes.threads import add_thread_routes
from .routes.user_context import add_user_context_routes
from .routes.users import UnknownUser, for_routes, names_user_in_query, request_user, serving


def add_routes(
    table: web.RouteTableDef, service: AssistantService, hosts: HostPolicy = LOOPBACK
) -> None:
    ours, scoped = web.RouteTableDef(), for_routes(service)
    for add in (
        add_chat_routes,
        add_thread_context_routes,
        add_attachment_routes,
        add_provider_routes,
        add_thread_routes,
        add_checkpoint_routes,
        add_branch_routes,
        add_project_routes,
        add_user_context_routes,
        add_skill_routes,
        add_environment_routes,
        add_output_routes,
        add_install_routes,
        add_download_routes,
    ):
        add(ours, scoped)
    _add_mcp(ours, service)
    for route in ours:
        assert isinstance(route, web.RouteDef)
        guarded = _guarded(route.handler, hosts, service)
        table.route(route.method, route.path, **route.kwargs)(guarded)
        if (route.method, route.path) == ("POST", CHAT_PATH):
            table._items.append(ChatAlias(table, guarded))  # (RouteTableDef has no add())


def _add_mcp(table: web.RouteTableDef, service: AssistantService) -> None:
    """The MCP server's routes (its own: it serves each connection as the user it acts for),
    or, without the `mcp` package, routes that say what to install."""
    try:
        from .mcp_server.routes import add_mcp_routes
    except ImportError as missing:
        add_unavailable_mcp_routes(table, missing)
        return
    add_mcp_routes(table, service)


CHAT_ALIAS = "/api/chat"


class ChatAlias(web.AbstractRouteDef):
    """`POST /api/chat` -> the chat, registered only if no other route answers it: one already in
    the router (added to ComfyUI's app directly, or ComfyUI's `/api` mirror of another
    extension's `/chat`) or one still to come in the table (another extension's `/api/chat` or
    `/chat`). ComfyUI mirrors only `web.RouteDef`s under `/api`, so this one is not mirrored."""

    def __init__(self, table: web.RouteTableDef, handler: Handler) -> None:
        self.table, self.handler = table, handler
        self.method, self.path = "POST", CHAT_ALIAS

    def register(self, router: UrlDispatcher) -> list[AbstractRoute]:
        if _answered(router) or any(_claims(route) for route in self.table if route is not self):
            log.info(
                "ComfyUI Assistant: another extension answers POST %s; the assistant's chat "
                "is at %s",
                CHAT_ALIAS,
                CHAT_PATH,
            )
            return []
        return [router.add_route("POST", CHAT_ALIAS, self.handler)]


def _answered(router: UrlDispatcher) -> bool:
    return any(
        resource.canonical == CHAT_ALIAS and any(r.method in ("POST", "*") for r in resource)
        for resource in router.resources()
    )


def _claims(route: web.AbstractRouteDef) -> bool:
    """A route of another extension that answers POST /api/chat once ComfyUI mounts it."""
    return (
        isinstance(route, web.RouteDef)
        and route.method in ("POST", "*")
        and route.path in (CHAT_ALIAS, "/chat")  # (ComfyUI mirrors /chat at /api/chat)
    )


log = logging.getLogger("comfyui_assistant")


def _guarded(handler: Handler, hosts: HostPolicy, service: AssistantService) -> Handler:
    """The request guard, then the handler served by the requesting user's assistant (a user
    ComfyUI does not know: 403, nothing read or written)."""
    in_query = names_user_in_query(handler)

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        refused = check(request, hosts)
        if refused is not None:
            return refused
        try:
            user = request_user(request, service, in_query)
        except UnknownUser as exc:
            return error_response(exc.status, message_of(exc))
        with serving(service.of_user(user)):
            return await handler(request)

    return wrapper
