"""HTTP routes, grouped by resource in `routes/`: this module puts them together.

`add_routes(table, service)` registers every route on a RouteTableDef: the standalone server's
own, or ComfyUI's `PromptServer.instance.routes`. Nothing is registered at import time.
"""

from __future__ import annotations

from aiohttp import web

from .core.service import AssistantService
from .routes.chat import add_chat_routes
from .routes.environment import add_environment_routes
from .routes.provider import add_provider_routes
from .routes.skills import add_skill_routes
from .routes.threads import add_thread_routes
from .routes.user_context import add_user_context_routes


def add_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    add_chat_routes(table, service)
    add_provider_routes(table, service)
    add_thread_routes(table, service)
    add_user_context_routes(table, service)
    add_skill_routes(table, service)
    add_environment_routes(table, service)
