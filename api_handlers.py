"""HTTP routes, grouped by resource in `routes/`: this module puts them together.

`add_routes(table, service, hosts)` registers every route on a RouteTableDef: the standalone
server's own, or ComfyUI's `PromptServer.instance.routes`. Every handler is wrapped by the
request guard (`routes/guard.py`: host names, cross-site origins, JSON-only bodies), so the
checks hold inside ComfyUI too. Nothing is registered at import time.
"""

from __future__ import annotations

import functools

from aiohttp import web

from .core.service import AssistantService
from .routes.attachments import add_attachment_routes
from .routes.chat import add_chat_routes
from .routes.common import Handler
from .routes.environment import add_environment_routes
from .routes.guard import LOOPBACK, HostPolicy, check
from .routes.projects import add_project_routes
from .routes.provider import add_provider_routes
from .routes.skills import add_skill_routes
from .routes.threads import add_thread_routes
from .routes.user_context import add_user_context_routes


def add_routes(
    table: web.RouteTableDef, service: AssistantService, hosts: HostPolicy = LOOPBACK
) -> None:
    ours = web.RouteTableDef()
    for add in (
        add_chat_routes,
        add_attachment_routes,
        add_provider_routes,
        add_thread_routes,
        add_project_routes,
        add_user_context_routes,
        add_skill_routes,
        add_environment_routes,
    ):
        add(ours, service)
    for route in ours:
        assert isinstance(route, web.RouteDef)
        table.route(route.method, route.path, **route.kwargs)(_guarded(route.handler, hosts))


def _guarded(handler: Handler, hosts: HostPolicy) -> Handler:
    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        return check(request, hosts) or await handler(request)

    return wrapper
