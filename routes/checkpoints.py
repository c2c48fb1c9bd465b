"""A thread's checkpoints (core/store/checkpoints.py): save the graph as it was before an assistant
turn changed it, list them, fetch one to rewind to."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..core.base import RequestError
from ..core.chat import check_workflow
from ..core.service import AssistantService
from ..core.store import MAX_CHECKPOINTS, MAX_THREAD_BYTES, Checkpoints
from .common import guarded, not_found, read_json
from .threads import BASE, message_id_of, thread_id_of

# A graph's JSON: a large workflow (hundreds of nodes, long notes) is a few MB.
CHECKPOINT_BODY_LIMIT = 16 << 20
SAVE_SHAPE = (
    'send {"messageId": "<the assistant message whose turn changes the graph>", '
    '"workflow": "<workflow key>"|null, "graph": <the workflow as ComfyUI serializes it>}'
)


def _graph(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("nodes"), list):
        raise RequestError(
            "'graph' must be the workflow as ComfyUI serializes it (app.rootGraph.serialize()):"
            ' an object with a "nodes" list'
        )
    return value


def add_checkpoint_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    async def checkpoints() -> Checkpoints:
        return Checkpoints(await service.store())

    @table.post(BASE + "/{id}/checkpoints")
    @guarded
    async def save_checkpoint(request: web.Request) -> web.StreamResponse:
        thread_id = thread_id_of(request)
        body = await read_json(request, CHECKPOINT_BODY_LIMIT)
        if not isinstance(body, dict) or not {"messageId", "graph"} <= body.keys():
            raise RequestError(SAVE_SHAPE)
        message_id = message_id_of(body["messageId"])
        workflow, graph = check_workflow(body.get("workflow")), _graph(body["graph"])
        saved = await (await checkpoints()).save(thread_id, message_id, workflow, graph)
        if saved is None:
            raise not_found("thread", thread=thread_id)
        answer = {**saved.checkpoint.as_json(), "dropped": list(saved.dropped)}
        return web.json_response(answer, status=201 if saved.created else 200)

    @table.get(BASE + "/{id}/checkpoints")
    @guarded
    async def list_checkpoints(request: web.Request) -> web.StreamResponse:
        thread_id = thread_id_of(request)
        store = await checkpoints()
        found = await store.listed(thread_id)
        return web.json_response(
            {
                "checkpoints": [c.as_json() for c in found],
                "storedBytes": await store.stored_bytes(thread_id),
                "bounds": {"checkpoints": MAX_CHECKPOINTS, "storedBytes": MAX_THREAD_BYTES},
            }
        )

    @table.get(BASE + "/{id}/checkpoints/{message}")
    @guarded
    async def get_checkpoint(request: web.Request) -> web.StreamResponse:
        thread_id = thread_id_of(request)
        message_id = message_id_of(request.match_info["message"], "the message id")
        found = await (await checkpoints()).get(thread_id, message_id)
        if found is None:
            raise not_found("checkpoint", message=message_id, thread=thread_id)
        checkpoint, graph = found
        return web.json_response({**checkpoint.as_json(), "graph": graph})
