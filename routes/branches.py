"""Rewinding a thread's conversation and returning to what it set aside (core/store/branches.py):
rewind to before an answer's turn, list the branches, return to one."""

from __future__ import annotations

from aiohttp import web

from ..core.base import RequestError
from ..core.service import AssistantService
from ..core.store import Branches, Moved
from .common import guarded, int_param, not_found, read_json
from .threads import BASE, message_id_of, thread_id_of


def _moved(moved: Moved) -> web.Response:
    return web.json_response(
        {
            "messages": moved.messages,
            "setAside": moved.set_aside.as_json() if moved.set_aside else None,
            "draft": moved.draft,
        }
    )


def add_branch_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    limit = service.options.json_body_limit

    async def branches() -> Branches:
        return Branches(await service.threads())

    @table.post(BASE + "/{id}/rewind")
    @guarded
    async def rewind(request: web.Request) -> web.StreamResponse:
        """The thread back to before the turn of answer `messageId`; the turn and what follows
        it are kept as a branch."""
        thread_id = thread_id_of(request)
        body = await read_json(request, limit)
        if not isinstance(body, dict) or "messageId" not in body:
            raise RequestError('send {"messageId": "<the answer to rewind to before>"}')
        message_id = message_id_of(body["messageId"])
        moved = await (await branches()).rewind(thread_id, message_id)  # (BranchError: 409)
        if moved is None:
            raise not_found("message", message=message_id, thread=thread_id)
        return _moved(moved)

    @table.get(BASE + "/{id}/branches")
    @guarded
    async def list_branches(request: web.Request) -> web.StreamResponse:
        listed = await (await branches()).listed(thread_id_of(request))
        return web.json_response({"branches": [b.as_json(ok) for b, ok in listed]})

    @table.post(BASE + "/{id}/branches/{number}/restore")
    @guarded
    async def restore_branch(request: web.Request) -> web.StreamResponse:
        """Return to a branch: what follows the message it followed is set aside in turn."""
        thread_id, number = thread_id_of(request), int_param(request, "number")
        await read_json(request, limit, empty={})
        moved = await (await branches()).restore(thread_id, number)  # (BranchError: 409)
        if moved is None:
            raise not_found("branch", number=str(number), thread=thread_id)
        return _moved(moved)
