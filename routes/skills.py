"""Skills: the user's (create, read, update, delete) and the shipped system skills (read)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ..core.base import RequestError
from ..core.knowledge import Skill, check_slug
from ..core.service import AssistantService
from .common import guarded, read_json


def skill_json(skill: Skill, full: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "slug": skill.slug,
        "name": skill.name,
        "description": skill.description,
        "modelFamily": skill.is_model,
        "size": skill.size,
    }
    if full:
        out["body"] = skill.body
    return out


async def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Skill files are small: do the I/O in a thread (a skill's errors carry their status:
    404 for no such skill, else 400)."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def _slug(request: web.Request) -> str:
    return check_slug(request.match_info["slug"])


def _fields(body: Any, required: bool) -> dict[str, str]:
    if not isinstance(body, dict):
        raise RequestError("send an object with name, description and body")
    out = {}
    for key in ("name", "description", "body"):
        value = body.get(key)
        if value is None:
            if required:
                raise RequestError(f"'{key}' is required")
            continue
        if not isinstance(value, str) or not value.strip():
            raise RequestError(f"'{key}' must be a non-empty string")
        out[key] = value
    if not out:
        raise RequestError("send one or more of name, description, body")
    return out


def add_skill_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit
    system = service.system_skills  # (the user's skills: the requesting user's, per request)

    @table.get("/api/assistant/user-context/skills")
    @guarded
    async def list_user(request: web.Request) -> web.StreamResponse:
        return web.json_response(
            {"skills": [skill_json(s) for s in await run(service.user_skills.list)]}
        )

    @table.post("/api/assistant/user-context/skills")
    @guarded
    async def create_user(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        fields = _fields(body, required=True)
        slug = body.get("slug")
        if slug is not None and not isinstance(slug, str):
            raise RequestError("'slug' must be a string")
        skill = await run(
            service.user_skills.create, fields["name"], fields["description"], fields["body"], slug
        )
        return web.json_response(skill_json(skill, full=True), status=201)

    @table.get("/api/assistant/user-context/skills/{slug}")
    @guarded
    async def get_user(request: web.Request) -> web.StreamResponse:
        return web.json_response(
            skill_json(await run(service.user_skills.get, _slug(request)), full=True)
        )

    @table.put("/api/assistant/user-context/skills/{slug}")
    @guarded
    async def update_user(request: web.Request) -> web.StreamResponse:
        slug = _slug(request)
        fields = _fields(await read_json(request, limit), required=False)
        return web.json_response(
            skill_json(await run(service.user_skills.update, slug, **fields), full=True)
        )

    @table.delete("/api/assistant/user-context/skills/{slug}")
    @guarded
    async def delete_user(request: web.Request) -> web.StreamResponse:
        slug = _slug(request)
        await run(service.user_skills.delete, slug)
        return web.json_response({"deleted": slug})

    @table.get("/api/assistant/system-context/skills")
    @guarded
    async def list_system(request: web.Request) -> web.StreamResponse:
        return web.json_response({"skills": [skill_json(s) for s in await run(system.list)]})

    @table.get("/api/assistant/system-context/skills/{slug}")
    @guarded
    async def get_system(request: web.Request) -> web.StreamResponse:
        return web.json_response(skill_json(await run(system.get, _slug(request)), full=True))
