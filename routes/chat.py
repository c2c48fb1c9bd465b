"""POST /api/assistant/chat (the turn itself is core.chat.chat_turn: this moves its chunks to the
client), and the routes of a thread's context: its report, its summary, `/compact`."""

from __future__ import annotations

from aiohttp import web

from ..core.base.error_codes import Message, message_of, stream_error_text
from ..core.base.errors import RequestError
from ..core.chat.chat_request import ChatRequest, parse_chat_request
from ..core.chat.chat_turn import ChatTurn, StreamEnd
from ..core.chat.thread_delta import with_answer_replaced, with_stored_history
from ..core.service import AssistantService
from ..core.store.delegations import Delegations
from ..core.store.store import DiskFull
from ..core.store.thread_state import ThreadState
from ..core.stream import ui_stream as ui
from ..core.stream.sse import ClientGone, StreamFailed, pump
from ..core.summary.compact_now import ProviderUnreachable, compact_now
from .common import HTTPProblem, guarded, not_found, read_json


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

    async def existing_thread(request: web.Request) -> str:
        thread_id = request.match_info["id"]
        if await (await service.threads()).get(thread_id) is None:
            raise not_found("thread", thread=thread_id)
        return thread_id

    @table.post(CHAT_PATH)
    @guarded
    async def chat(request: web.Request) -> web.StreamResponse:
        req: ChatRequest = await read_json(request, opts.chat_body_limit, check=parse_chat_request)
        if req.parent is not None:  # what is new: the rest of the thread is stored
            req = await with_stored_history(await service.threads(), req)
        req = await with_answer_replaced(await service.threads(), req)
        debug = request.query.get("debug") == "context"
        async with ChatTurn(service, req, debug=debug) as turn:
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

    @table.get("/api/assistant/threads/{id}/delegations/{call}")
    @guarded
    async def delegation(request: web.Request) -> web.StreamResponse:
        """The full trace of a delegated task, by the id of the `delegate` call."""
        call = request.match_info["call"]
        if not 0 < len(call) <= 200:
            raise RequestError("a tool call id has 1 to 200 characters")
        thread_id = await existing_thread(request)
        trace = await Delegations(await service.store()).get(thread_id, call)
        if trace is None:
            raise not_found("delegation", call=call, thread=thread_id)
        return web.json_response({"trace": trace})

    @table.get("/api/assistant/threads/{id}/context")
    @guarded
    async def context_report(request: web.Request) -> web.StreamResponse:
        thread_id = await existing_thread(request)
        state = ThreadState(await service.store())
        return web.json_response({"report": await state.report(thread_id)})

    @table.get("/api/assistant/threads/{id}/summary")
    @guarded
    async def get_summary(request: web.Request) -> web.StreamResponse:
        thread_id = await existing_thread(request)
        state = ThreadState(await service.store())
        stored = dict(await state.summary(thread_id) or {})
        ahead = stored.pop("next", None)  # made ahead, not sent yet
        return web.json_response({"summary": stored or None, "next": ahead})

    @table.post("/api/assistant/threads/{id}/compact")
    @guarded
    async def compact(request: web.Request) -> web.StreamResponse:
        thread_id = await existing_thread(request)
        try:
            threads, provider = await service.threads(), await service.provider()
            return web.json_response(await compact_now(threads, provider, thread_id))
        except ProviderUnreachable as exc:
            raise HTTPProblem(502, message_of(exc)) from None
