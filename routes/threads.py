"""Threads, backing the panel's thread list: list, create, fetch, rename, archive, delete."""

from __future__ import annotations

from aiohttp import web

from ..core.chat_request import RequestError
from ..core.service import AssistantService
from .common import guarded, not_found, read_json

BASE = "/api/assistant/threads"


def _thread_id(request: web.Request) -> str:
    thread_id = request.match_info["id"]
    if not 0 < len(thread_id) <= 200:
        raise RequestError("a thread id has 1 to 200 characters")
    return thread_id


def add_thread_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit

    @table.get(BASE)
    @guarded
    async def list_threads(request: web.Request) -> web.StreamResponse:
        archived = request.query.get("archived", "true").lower() not in ("0", "false", "no")
        return web.json_response({"threads": await (await service.threads()).list(archived)})

    @table.post(BASE)
    @guarded
    async def create_thread(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise RequestError('send {"id": "<thread id>", "title"?: "..."}')
        thread_id, title = body["id"], body.get("title")
        if not 0 < len(thread_id) <= 200:
            raise RequestError("a thread id has 1 to 200 characters")
        if title is not None and (not isinstance(title, str) or len(title) > 200):
            raise RequestError("'title' must be a string of at most 200 characters")
        threads = await service.threads()
        await threads.ensure(thread_id, [])
        if title:
            await threads.update(thread_id, title=title.strip())
        return web.json_response(await threads.get(thread_id), status=201)

    @table.get(BASE + "/{id}")
    @guarded
    async def get_thread(request: web.Request) -> web.StreamResponse:
        thread_id = _thread_id(request)
        threads = await service.threads()
        thread = await threads.get(thread_id)
        if thread is None:
            raise not_found(f"thread {thread_id}")
        messages = [m.as_ui() for m in await threads.messages(thread_id)]
        return web.json_response({**thread, "messages": messages})

    @table.patch(BASE + "/{id}")
    @guarded
    async def update_thread(request: web.Request) -> web.StreamResponse:
        thread_id = _thread_id(request)
        body = await read_json(request, limit)
        if not isinstance(body, dict) or not ({"title", "archived"} & body.keys()):
            raise RequestError('send {"title": "..."} and/or {"archived": true|false}')
        title, archived = body.get("title"), body.get("archived")
        if title is not None and (not isinstance(title, str) or len(title) > 200):
            raise RequestError("'title' must be a string of at most 200 characters")
        if archived is not None and not isinstance(archived, bool):
            raise RequestError("'archived' must be true or false")
        threads = await service.threads()
        if not await threads.update(thread_id, title=title, archived=archived):
            raise not_found(f"thread {thread_id}")
        return web.json_response(await threads.get(thread_id))

    @table.delete(BASE + "/{id}")
    @guarded
    async def delete_thread(request: web.Request) -> web.StreamResponse:
        thread_id = _thread_id(request)
        if not await (await service.threads()).delete(thread_id):
            raise not_found(f"thread {thread_id}")
        return web.json_response({"deleted": thread_id})
