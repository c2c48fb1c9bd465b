"""Projects and their documents: list, create, rename, delete a project; add, read, change,
remove a document (split into passages and indexed on the way in)."""

from __future__ import annotations

from aiohttp import web

from ..core.base import RequestError
from ..core.files import MAX_DOCUMENT_BYTES, Projects, check_name, check_text, check_title
from ..core.service import AssistantService
from .common import guarded, int_param, not_found, read_json

BASE = "/api/assistant/projects"
# A document's JSON body: its text (escapes can take 6 bytes per character) and a title.
DOCUMENT_BODY_LIMIT = 6 * MAX_DOCUMENT_BYTES + 4096


def add_project_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit

    async def projects() -> Projects:
        return Projects(await service.store())

    @table.get(BASE)
    @guarded
    async def list_projects(request: web.Request) -> web.StreamResponse:
        return web.json_response({"projects": await (await projects()).all()})

    @table.post(BASE)
    @guarded
    async def create_project(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        if not isinstance(body, dict) or "name" not in body:
            raise RequestError('send {"name": "<project name>"}')
        created = await (await projects()).create(check_name(body["name"]))
        return web.json_response(created, status=201)

    @table.get(BASE + "/{pid}")
    @guarded
    async def get_project(request: web.Request) -> web.StreamResponse:
        pid = int_param(request, "pid")
        found = await (await projects()).get(pid)
        if found is None:
            raise not_found("project", project=str(pid))
        return web.json_response(found)

    @table.patch(BASE + "/{pid}")
    @guarded
    async def rename_project(request: web.Request) -> web.StreamResponse:
        pid = int_param(request, "pid")
        body = await read_json(request, limit)
        if not isinstance(body, dict) or "name" not in body:
            raise RequestError('send {"name": "<project name>"}')
        store = await projects()
        if not await store.rename(pid, check_name(body["name"])):
            raise not_found("project", project=str(pid))
        return web.json_response(await store.get(pid))

    @table.delete(BASE + "/{pid}")
    @guarded
    async def delete_project(request: web.Request) -> web.StreamResponse:
        pid = int_param(request, "pid")
        if not await (await projects()).delete(pid):
            raise not_found("project", project=str(pid))
        return web.json_response({"deleted": pid})

    @table.post(BASE + "/{pid}/documents")
    @guarded
    async def add_document(request: web.Request) -> web.StreamResponse:
        pid = int_param(request, "pid")
        body = await read_json(request, DOCUMENT_BODY_LIMIT)
        if not isinstance(body, dict) or "title" not in body or "text" not in body:
            raise RequestError('send {"title": "<title>", "text": "<the document\'s text>"}')
        title, text = check_title(body["title"]), check_text(body["text"])
        created = await (await projects()).add_document(pid, title, text)
        if created is None:
            raise not_found("project", project=str(pid))
        return web.json_response(created, status=201)

    @table.get(BASE + "/{pid}/documents/{did}")
    @guarded
    async def get_document(request: web.Request) -> web.StreamResponse:
        pid, did = int_param(request, "pid"), int_param(request, "did")
        found = await (await projects()).document(pid, did)
        if found is None:
            raise not_found("document", document=str(did), project=str(pid))
        return web.json_response(found)

    @table.patch(BASE + "/{pid}/documents/{did}")
    @guarded
    async def update_document(request: web.Request) -> web.StreamResponse:
        pid, did = int_param(request, "pid"), int_param(request, "did")
        body = await read_json(request, DOCUMENT_BODY_LIMIT)
        if not isinstance(body, dict) or not ({"title", "text"} & body.keys()):
            raise RequestError('send {"title": "..."} and/or {"text": "..."}')
        title = check_title(body["title"]) if "title" in body else None
        text = check_text(body["text"]) if "text" in body else None
        store = await projects()
        if not await store.update_document(pid, did, title, text):
            raise not_found("document", document=str(did), project=str(pid))
        return web.json_response(await store.document(pid, did))

    @table.delete(BASE + "/{pid}/documents/{did}")
    @guarded
    async def delete_document(request: web.Request) -> web.StreamResponse:
        pid, did = int_param(request, "pid"), int_param(request, "did")
        if not await (await projects()).delete_document(pid, did):
            raise not_found("document", document=str(did), project=str(pid))
        return web.json_response({"deleted": did})
