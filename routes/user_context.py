"""The user's context: rules, reminders, personas (and the active one), SOUL.md, goals.md,
preferences and the edited system prompt."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..core.base import RequestError
from ..core.service import AssistantService
from ..core.store import FILES, TEXT_LIMIT, ListTable, UserData
from .common import HTTPProblem, guarded, int_param, read_json

BASE = "/api/assistant/user-context"
PREFERENCE_VALUE = (str, int, float, bool)


def _check_preferences(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not body:
        raise RequestError('send an object of preferences, e.g. {"language": "en"}')
    for key, value in body.items():
        if len(key) > 100:
            raise RequestError(f"preference name {key[:20]!r}… is longer than 100 characters")
        if value is not None and not isinstance(value, PREFERENCE_VALUE):
            raise RequestError(f"preference {key!r} must be a string, number, boolean or null")
        if isinstance(value, str) and len(value) > 1000:
            raise RequestError(f"preference {key!r} is longer than 1000 characters")
    return body


def add_list_routes(
    table: web.RouteTableDef, path: str, rows: Any, service: AssistantService, what: str
) -> None:
    """GET/POST {path}, PATCH/DELETE {path}/{id} for one ListTable of UserData."""
    limit = service.options.json_body_limit

    async def items(request: web.Request) -> ListTable:
        return rows(await service.user_data())  # type: ignore[no-any-return]

    @table.get(path)
    @guarded
    async def list_items(request: web.Request) -> web.StreamResponse:
        return web.json_response({what: await (await items(request)).list()})

    @table.post(path)
    @guarded
    async def create_item(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        return web.json_response(await (await items(request)).create(body), status=201)

    @table.patch(path + "/{id}")
    @guarded
    async def update_item(request: web.Request) -> web.StreamResponse:
        item_id = int_param(request, "id")
        item = await (await items(request)).update(item_id, await read_json(request, limit))
        if item is None:
            raise HTTPProblem(404, f"{what[:-1]} {item_id} does not exist")
        return web.json_response(item)

    @table.delete(path + "/{id}")
    @guarded
    async def delete_item(request: web.Request) -> web.StreamResponse:
        item_id = int_param(request, "id")
        if not await (await items(request)).delete(item_id):
            raise HTTPProblem(404, f"{what[:-1]} {item_id} does not exist")
        return web.json_response({"deleted": item_id})


def add_user_context_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit
    add_list_routes(table, f"{BASE}/rules", lambda u: u.rules, service, "rules")
    add_list_routes(table, f"{BASE}/reminders", lambda u: u.reminders, service, "reminders")
    add_list_routes(table, f"{BASE}/personas", lambda u: u.personas, service, "personas")

    async def snapshot(user: UserData) -> dict[str, Any]:
        return {
            "rules": await user.rules.list(),
            "reminders": await user.reminders.list(),
            "personas": await user.personas.list(),
            "activePersona": await user.active_persona(),
            "soul": await user.read_file("soul"),
            "goals": await user.read_file("goals"),
            "preferences": await service.store_settings("preferences"),
            "systemPrompt": await user.setting("prompt", "system"),
        }

    @table.get(BASE)
    @guarded
    async def everything(request: web.Request) -> web.StreamResponse:
        return web.json_response(await snapshot(await service.user_data()))

    for name in FILES:

        def file_routes(name: str = name) -> None:
            @table.get(f"{BASE}/{name}")
            @guarded
            async def read_file(request: web.Request) -> web.StreamResponse:
                return web.json_response(
                    {"text": await (await service.user_data()).read_file(name)}
                )

            @table.put(f"{BASE}/{name}")
            @guarded
            async def write_file(request: web.Request) -> web.StreamResponse:
                body = await read_json(request, limit)
                text = body.get("text") if isinstance(body, dict) else None
                written = await (await service.user_data()).write_file(name, text)
                return web.json_response({"text": written})

        file_routes()

    @table.get(f"{BASE}/preferences")
    @guarded
    async def get_preferences(request: web.Request) -> web.StreamResponse:
        return web.json_response(await service.store_settings("preferences"))

    @table.put(f"{BASE}/preferences")
    @guarded
    async def put_preferences(request: web.Request) -> web.StreamResponse:
        update = _check_preferences(await read_json(request, limit))
        await (await service.store()).update_settings("preferences", update)
        return web.json_response(await service.store_settings("preferences"))

    @table.get(f"{BASE}/system-prompt")
    @guarded
    async def get_system_prompt(request: web.Request) -> web.StreamResponse:
        text = await (await service.user_data()).setting("prompt", "system")
        return web.json_response({"text": text})

    @table.put(f"{BASE}/system-prompt")
    @guarded
    async def put_system_prompt(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        text = body.get("text", ...) if isinstance(body, dict) else ...
        if text is not None and (not isinstance(text, str) or len(text) > TEXT_LIMIT):
            raise RequestError(
                f'send {{"text": "..."}} (at most {TEXT_LIMIT} characters), or '
                '{"text": null} to go back to the shipped prompt'
            )
        text = text.strip() or None if isinstance(text, str) else None
        await (await service.store()).update_settings("prompt", {"system": text})
        return web.json_response({"text": text})

    @table.put(f"{BASE}/personas/active")
    @guarded
    async def set_active_persona(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        if not isinstance(body, dict) or "id" not in body:
            raise RequestError('send {"id": <persona id>} or {"id": null}')
        persona = await (await service.user_data()).set_active_persona(body["id"])
        return web.json_response({"activePersona": persona})
