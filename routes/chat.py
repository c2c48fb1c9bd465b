"""POST /api/assistant/chat: the service hands the turn its parts, the turn itself is
core.chat.chat_turn; this moves its chunks to the client. (A thread's context, its report,
summary and `/compact`: routes/thread_context.py.)"""

from __future__ import annotations

from aiohttp import web

from ..core.base import Message, coded, message_of, stream_error_text
from ..core.chat import (
    ChatRequest,
    ChatTurn,
    StreamEnd,
    parse_chat_request,
    response_message_id,
    turn_holds,
    with_answer_replaced,
    with_stored_history,
)
from ..core.service import AssistantService
from ..core.store import DiskFull
from ..core.stream import ClientGone, StreamFailed, pump
from ..core.stream import ui_stream as ui
from .common import guarded, read_json


async def _error_stream(
    request: web.Request, message_id: str, message: Message
) -> web.StreamResponse:
    response = web.StreamResponse(headers=ui.SSE_HEADERS)
    await response.prepare(request)
    for chunk in (ui.Start(message_id), ui.Error(stream_error_text(message))):
        await response.write(chunk.encode())
    await response.write(ui.DONE)
    return response


CHAT_PATH = "/api/assistant/chat"  # (and POST /api/chat while no other extension holds it)


def add_chat_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    opts = service.options

    @table.post(CHAT_PATH)
    @guarded
    async def chat(request: web.Request) -> web.StreamResponse:
        req: ChatRequest = await read_json(request, opts.chat_body_limit, check=parse_chat_request)
        # one turn at a time in a thread, from reading its history to saving the answer
        holds = turn_holds((await service.threads()).store)
        async with holds.hold(req.thread_id, opts.turn_wait) as held:
            if not held:
                busy = coded("chat.thread_busy")
                return await _error_stream(request, response_message_id(req.messages), busy)
            return await _answer(request, req)

    async def _answer(request: web.Request, req: ChatRequest) -> web.StreamResponse:
        if req.parent is not None:  # what is new: the rest of the thread is stored
            req = await with_stored_history(await service.threads(), req)
        req = await with_answer_replaced(await service.threads(), req)
        debug = request.query.get("debug") == "context"
        async with ChatTurn(await service.turn_parts(), req, debug=debug) as turn:
            try:
                error = await turn.prepare()
            except DiskFull as exc:  # (the request's messages could not be stored)
                error = message_of(exc)
            if error is not None:
                return await _error_stream(request, turn.message_id, error)
            response = web.StreamResponse(headers={**ui.SSE_HEADERS, **turn.headers})
            await response.prepare(request)

            def connected() -> bool:
                transport = request.transport
                return transport is not None and not transport.is_closing()

            end = StreamEnd.CLIENT_GONE
            try:
                note = turn.outcome.waiting_note
                await pump(turn.stream(), response.write, connected, opts.pump, note)
                end = StreamEnd.WRITTEN
            except ClientGone:
                pass
            except StreamFailed:
                end = StreamEnd.FAILED
            finally:
                await turn.finish(end)
        return response
