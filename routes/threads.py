"""Threads, backing the panel's thread list: list, create, fetch, rename, archive, delete, and
the workflow each belongs to (move one, unbind it, follow a renamed workflow)."""

from __future__ import annotations

import json

from aiohttp import web

from ..core.base import RequestError
from ..core.chat import check_workflow, workflow_key
from ..core.files import Projects
from ..core.service import AssistantService
from .common import guarded, not_found, read_json

BASE = "/api/assistant/threads"
SLICE_BYTES = 1 << 20  # a thread's messages are written this much at a time
PAGE_MAX = 1000  # messages in one page of a thread (`?last=`)


def thread_id_of(request: web.Request) -> str:
    thread_id = request.match_info["id"]
    if not 0 < len(thread_id) <= 200:
        raise RequestError("a thread id has 1 to 200 characters")
    return thread_id


def message_id_of(value: object, name: str = "'messageId'") -> str:
    """A message's id as the panel gives it: a string of 1 to 200 characters."""
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        raise RequestError(f"{name} must be a message's id: a string of 1 to 200 characters")
    return value


def page_size(value: str | None) -> int | None:
    """`?last=`: how many messages a page of a thread holds (1 to PAGE_MAX), or None: all."""
    if value is None:
        return None
    if not value.isdigit() or not 0 < int(value) <= PAGE_MAX:
        raise RequestError(f"'last' must be a number of messages from 1 to {PAGE_MAX}")
    return int(value)


def add_thread_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit

    @table.get(BASE)
    @guarded
    async def list_threads(request: web.Request) -> web.StreamResponse:
        archived = request.query.get("archived", "true").lower() not in ("0", "false", "no")
        workflow = check_workflow(request.query.get("workflow"))  # its threads first
        threads = await (await service.threads()).list(archived, workflow)
        return web.json_response({"threads": threads})

    @table.post(BASE)
    @guarded
    async def create_thread(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, limit)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise RequestError('send {"id": "<thread id>", "title"?: "...", "workflow"?: "..."}')
        thread_id, title = body["id"], body.get("title")
        workflow = check_workflow(body.get("workflow"))
        if not 0 < len(thread_id) <= 200:
            raise RequestError("a thread id has 1 to 200 characters")
        if title is not None and (not isinstance(title, str) or len(title) > 200):
            raise RequestError("'title' must be a string of at most 200 characters")
        threads = await service.threads()
        await threads.ensure(thread_id, [], workflow)
        if title:
            await threads.update(thread_id, title=title.strip())
        return web.json_response(await threads.get(thread_id), status=201)

    @table.get(BASE + "/{id}")
    @guarded
    async def get_thread(request: web.Request) -> web.StreamResponse:
        thread_id = thread_id_of(request)
        threads = await service.threads()
        thread = await threads.get(thread_id)
        if thread is None:
            raise not_found("thread", thread=thread_id)
        # The stored messages' text as it is, a slice at a time: a thread of a million parts
        # is never parsed, and other requests are answered between its slices. `?last=N`: its
        # last N messages (before message `before`), and where they start (`firstIndex`).
        head = json.dumps(thread)[:-1]
        last = page_size(request.query.get("last"))
        before = request.query.get("before")
        if last is None:
            pieces = await threads.messages_json(thread_id)
        else:
            page = await threads.page_json(thread_id, last, before)
            if page is None:
                raise not_found("message", message=str(before), thread=thread_id)
            pieces, first = page
            head += f',"firstIndex":{first}'
        response = web.StreamResponse(headers={"Content-Type": "application/json; charset=utf-8"})
        await response.prepare(request)
        for piece in [head + ',"messages":', *pieces, "}"]:
            data = memoryview(piece.encode())
            for start in range(0, len(data), SLICE_BYTES):
                await response.write(data[start : start + SLICE_BYTES])
        await response.write_eof()
        return response

    @table.patch(BASE + "/{id}")
    @guarded
    async def update_thread(request: web.Request) -> web.StreamResponse:
        thread_id = thread_id_of(request)
        body = await read_json(request, limit)
        if not isinstance(body, dict) or not (
            {"title", "archived", "workflow", "project"} & body.keys()
        ):
            raise RequestError(
                'send {"title": "..."}, {"archived": true|false}, {"workflow": "<key>"|null} '
                'and/or {"project": <project id>|null}'
            )
        project = body.get("project")
        if project is not None and (
            not isinstance(project, int) or isinstance(project, bool) or not 0 < project < 2**63
        ):
            raise RequestError("'project' must be a project's id (a number) or null")
        title, archived = body.get("title"), body.get("archived")
        moves, workflow = "workflow" in body, check_workflow(body.get("workflow"))
        if title is not None and (not isinstance(title, str) or len(title) > 200):
            raise RequestError("'title' must be a string of at most 200 characters")
        if archived is not None and not isinstance(archived, bool):
            raise RequestError("'archived' must be true or false")
        threads = await service.threads()
        found = await threads.get(thread_id) is not None
        if found and (title is not None or archived is not None):
            found = await threads.update(thread_id, title=title, archived=archived)
        if found and moves:
            found = await threads.bind(thread_id, workflow)
        if found and "project" in body:
            found = await Projects(threads.store).set_thread(thread_id, project)
        if not found:
            raise not_found("thread", thread=thread_id)
        return web.json_response(await threads.get(thread_id))

    @table.post(BASE + "/rebind")
    @guarded
    async def rebind_threads(request: web.Request) -> web.StreamResponse:
        """A workflow was renamed (a temporary tab saved under a path) or closed unsaved: its
        threads follow it to the new key, or become unbound (`"to": null`)."""
        body = await read_json(request, limit)
        if not isinstance(body, dict) or not isinstance(body.get("from"), str) or "to" not in body:
            raise RequestError('send {"from": "<workflow key>", "to": "<workflow key>"|null}')
        old, new = workflow_key(body["from"], "from"), check_workflow(body["to"], "to")
        moved = await (await service.threads()).rebind(old, new)
        return web.json_response({"from": old, "to": new, "moved": moved})

    @table.delete(BASE + "/{id}")
    @guarded
    async def delete_thread(request: web.Request) -> web.StreamResponse:
        thread_id = thread_id_of(request)
        if not await (await service.threads()).delete(thread_id):
            raise not_found("thread", thread=thread_id)
        return web.json_response({"deleted": thread_id})
