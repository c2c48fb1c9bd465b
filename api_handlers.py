"""HTTP routes: parse and check the request, call the core, shape the response. Thin.

`add_routes(table, service)` registers every route on a RouteTableDef: the standalone server's
own, or ComfyUI's `PromptServer.instance.routes`. Nothing is registered at import time.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .agent_prompts import build_system_message
from .core import ui_stream as ui
from .core.chat_request import ChatRequest, RequestError, parse_chat_request
from .core.chat_stream import ChatOutcome, chat_chunks, log_outcome
from .core.provider import Provider
from .core.provider_check import check_provider
from .core.provider_config import validate_update
from .core.service import AssistantService
from .core.sse import ClientGone, pump
from .core.ui_messages import system_texts, to_openai_messages
from .tools_definitions import TOOLS, get_tool

log = logging.getLogger("comfyui_assistant")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HTTPProblem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def guarded(handler: Handler) -> Handler:
    """Client mistakes become 4xx with a message; anything else is our bug, logged, 500."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except RequestError as exc:
            return error_response(400, str(exc))
        except HTTPProblem as exc:
            return error_response(exc.status, exc.message)
        except web.HTTPException:
            raise
        except Exception:
            log.exception("unexpected error in %s %s", request.method, request.path)
            return error_response(500, "internal error in ComfyUI Assistant; see the server log")

    return wrapper


async def read_json(request: web.Request, limit: int) -> Any:
    """The JSON body; only `application/json` is accepted (a cross-site form cannot send it)."""
    if request.content_type != "application/json":
        raise HTTPProblem(415, "send the body as JSON with 'Content-Type: application/json'")
    if request.content_length is not None and request.content_length > limit:
        raise HTTPProblem(413, f"the body is larger than the limit of {limit} bytes")
    data = bytearray()
    while chunk := await request.content.read(1 << 16):
        data += chunk
        if len(data) > limit:
            raise HTTPProblem(413, f"the body is larger than the limit of {limit} bytes")
    if not data.strip():
        raise RequestError("the body is empty; send a JSON object")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RequestError(
            f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def request_tools(req: ChatRequest) -> tuple[list[dict[str, Any]], set[str]]:
    """The registry's tools plus any extra tools the panel declared (the registry wins)."""
    tools = [spec.openai_tool() for spec in TOOLS]
    for tool in req.tools:
        if get_tool(tool.name) is None:
            function = {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            tools.append({"type": "function", "function": function})
    return tools, {t["function"]["name"] for t in tools}


def add_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    opts = service.options

    @table.post("/api/chat")
    @guarded
    async def chat(request: web.Request) -> web.StreamResponse:
        req = parse_chat_request(await read_json(request, opts.chat_body_limit))
        provider = await service.provider()
        extra = [req.system or "", *system_texts(req.messages)]
        messages = [{"role": "system", "content": build_system_message(extra)}]
        messages += to_openai_messages(req.messages)
        tools, names = request_tools(req)
        response = web.StreamResponse(headers=ui.SSE_HEADERS)
        await response.prepare(request)
        outcome = ChatOutcome()

        def connected() -> bool:
            transport = request.transport
            return transport is not None and not transport.is_closing()

        chunks = chat_chunks(provider, req.messages, messages, tools, names, outcome)
        try:
            await pump(chunks, response.write, connected, opts.pump)
            status = "completed"
        except ClientGone:
            status = "stopped: the browser disconnected"
        log_outcome(req.thread_id, outcome, status)
        return response

    @table.get("/api/assistant/tools")
    @guarded
    async def tools(request: web.Request) -> web.StreamResponse:
        return web.json_response({"tools": [spec.as_json() for spec in TOOLS]})

    @table.get("/api/assistant/provider")
    @guarded
    async def get_provider(request: web.Request) -> web.StreamResponse:
        return web.json_response((await service.provider_settings()).public())

    @table.put("/api/assistant/provider")
    @guarded
    async def put_provider(request: web.Request) -> web.StreamResponse:
        update = validate_update(await read_json(request, opts.json_body_limit))
        settings = await service.update_provider(update)
        log.info("provider settings updated: %s", ", ".join(sorted(update)))
        return web.json_response(settings.public())

    @table.post("/api/assistant/provider/test")
    @guarded
    async def test_provider(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, opts.json_body_limit) if request.can_read_body else {}
        overrides = validate_update(body) if body else {}
        settings = await service.provider_settings(overrides)
        provider = Provider(settings)
        try:
            return web.json_response(await check_provider(provider))
        finally:
            await provider.close()
