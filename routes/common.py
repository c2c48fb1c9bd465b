"""What every route shares: JSON bodies checked the same way, errors as `{"error": ...}`."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..core.chat_request import RequestError
from ..core.gc_pause import cyclic_gc_paused

log = logging.getLogger("comfyui_assistant")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HTTPProblem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def not_found(what: str) -> HTTPProblem:
    return HTTPProblem(404, f"{what} does not exist")


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
        with cyclic_gc_paused():  # a long thread's body: tens of thousands of objects, no cycles
            return json.loads(data.decode("utf-8"), parse_constant=_no_constants)
    except UnicodeDecodeError:
        raise RequestError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RequestError(
            f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")


def int_param(request: web.Request, name: str) -> int:
    raw = request.match_info[name]
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise RequestError(f"'{name}' must be a number (got {raw!r})")
    return int(raw)


def refuse_forms(request: web.Request) -> None:
    """A POST without a JSON body still must not come from a cross-site HTML form."""
    if request.content_type in FORM_TYPES:
        raise HTTPProblem(415, "send the body as JSON with 'Content-Type: application/json'")


def _no_constants(name: str) -> Any:
    raise RequestError(f"the body contains {name}, which is not valid JSON; send a number")
