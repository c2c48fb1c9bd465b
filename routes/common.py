"""What every route shares: JSON bodies checked the same way, errors as `{"error": ...}`."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from itertools import chain, compress, count
from typing import Any, TypeVar

from aiohttp import web

from ..core.base import (
    RELEASE,
    Message,
    NotStrictJSON,
    RequestError,
    StatusError,
    coded,
    cyclic_gc_paused,
    error_body,
    finite_float,
    message_of,
)
from ..core.store import StoreUnavailable, is_disk_full

log = logging.getLogger("comfyui_assistant")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HTTPProblem(StatusError):
    """An error a route answers with its `status` and message."""


def error_response(status: int, message: Message) -> web.Response:
    """`{"error": text}`, with the code and parameters of a coded error (error_codes)."""
    return web.json_response(error_body(message), status=status)


def not_found(what: str, **params: str) -> HTTPProblem:
    """404 for the thing `what` names (a code of error_codes, `not_found.<what>`)."""
    return HTTPProblem(404, coded(f"not_found.{what}", **params))


def guarded(handler: Handler) -> Handler:
    """Client mistakes become 4xx with a message, a full disk 507 with what to do; anything
    else is our bug, logged, 500."""

    @functools.wraps(handler)
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            return await answer(request)
        finally:
            RELEASE.after_request(request.content_length)

    async def answer(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except RequestError as exc:
            return error_response(exc.status, message_of(exc))
        except StatusError as exc:  # (ours, and core's errors that carry their status)
            return error_response(exc.status, message_of(exc))
        except StoreUnavailable as exc:
            log.error("ComfyUI Assistant cannot use its database: %s", exc)
            return error_response(503, coded("server.database", reason=str(exc)))
        except web.HTTPException:
            raise
        except Exception as exc:
            if is_disk_full(exc):  # 507 Insufficient Storage; what to do, no path
                cause = exc.__cause__ or exc
                log.warning("%s %s: the disk is full (%s)", request.method, request.path, cause)
                return error_response(507, coded("server.disk_full"))
            log.exception("unexpected error in %s %s", request.method, request.path)
            return error_response(500, coded("server.internal"))

    return wrapper


T = TypeVar("T")

# A body at least this large (256 KiB) is parsed and checked on a worker thread: a 27 MB chat
# body of a million tiny parts took 2 s to parse and 4 s to check, 10,000 tiny messages (0.8 MB)
# 0.3 s, and every other request waited.
OFF_LOOP_FROM = 1 << 18


def _as_is(value: Any) -> Any:
    return value


async def read_json(
    request: web.Request, limit: int, empty: Any = None, check: Callable[[Any], Any] = _as_is
) -> Any:
    """The JSON body, passed through `check` (which raises RequestError for what it refuses);
    only `application/json` is accepted (a cross-site form cannot send it). An empty body is
    `empty` where that is given, else an error. A large body is parsed and checked beside the
    event loop (`parse_checked`): the other requests go on meanwhile."""
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
        if empty is not None:
            return check(empty)
        raise RequestError("the body is empty; send a JSON object")
    if len(data) < OFF_LOOP_FROM:
        return check(parse_json(data))
    return await asyncio.to_thread(parse_checked, data, check)


def parse_checked(data: bytes | bytearray, check: Callable[[Any], T]) -> T:
    """`check(parse_json(data))` on a worker thread. `json.loads` holds the GIL while it
    builds containers, so the parse calls back into Python at each object (`_let_loop_in`),
    where the interpreter hands the GIL to the event loop when it asks (every 5 ms), and
    releases it every 1,024 objects. A refused
    body is freed here, not by the loop (its exception carries no frame that holds it)."""
    with cyclic_gc_paused():  # (a collection would walk the whole body holding the GIL)
        value = parse_json(data, _let_loop_in)
        try:
            return check(value)
        except (RequestError, HTTPProblem) as exc:
            problem = exc.with_traceback(None)
        box = [value]
        del value
        free_gradually(box)
    raise problem


_objects = count()


def _let_loop_in(obj: dict[str, Any]) -> dict[str, Any]:
    """Each object of a body parsed on a worker thread; every 1,024th releases the GIL, so a
    waiting event loop goes first (it got in every 1-3 ms instead of every 10-14 ms)."""
    if not next(_objects) & 1023:
        time.sleep(0)
    return obj


def parse_json(
    data: bytes | bytearray, object_hook: Callable[[dict[str, Any]], Any] | None = None
) -> Any:
    """A JSON document every later step can store and send: UTF-8, no NaN or Infinity (nor a
    number like 1e400 that only reads as one), no integer beyond 100 digits, no lone UTF-16
    surrogate in any string, at most MAX_DEPTH levels of nesting. Anything else is a
    RequestError that says what to fix."""
    too_deep = RequestError(
        f"the body's JSON is nested more than {MAX_DEPTH} levels deep; send a flatter object"
    )
    try:
        with cyclic_gc_paused():  # a long thread's body: tens of thousands of objects, no cycles
            value = json.loads(
                data.decode("utf-8"),
                parse_constant=_no_constants,
                parse_int=_bounded_int,
                parse_float=_finite_float,
                object_hook=object_hook,
            )
            if _deeper_than(MAX_DEPTH, value):
                raise too_deep
    except UnicodeDecodeError:
        raise RequestError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RequestError(
            f"the body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise too_deep from None
    if _SURROGATE_ESCAPE.search(data):  # only then can a string hold a lone surrogate
        _refuse_lone_surrogates(value)
    return value


# Real bodies nest a few dozen levels (a message's tool output holding a workflow with
# subgraphs). The parser follows about 1,000 less the stack it runs on, but a turn copies and
# encodes what it got deeper in the stack: a continued answer nested 500 levels failed there.
MAX_DEPTH = 256
_NESTS = frozenset((dict, list)).__contains__


def _deeper_than(limit: int, value: Any) -> bool:
    """Whether `value` nests more than `limit` levels (its children filtered by type at C
    speed: a 5 MB thread's body costs ~25 ms)."""
    return any(depth >= limit for depth, _ in _levels(value))


def _levels(value: Any) -> Iterator[tuple[int, list[Any]]]:
    """The containers of `value`, level by level (its own level 0), without recursion: a
    slice of SLICE items at a time, so that a worker thread hands the GIL over between them."""
    level = [value] if _NESTS(type(value)) else []
    depth = 0
    while level:
        yield depth, level
        nested: list[Any] = []
        for start in range(0, len(level), SLICE):
            children = list(
                chain.from_iterable(
                    item.values() if type(item) is dict else item
                    for item in level[start : start + SLICE]
                )
            )
            nested += compress(children, map(_NESTS, map(type, children)))
        level, depth = nested, depth + 1


SLICE = 4096


def free_gradually(box: list[Any]) -> None:
    """Let go of a large parsed value, the only item of `box` and held nowhere else, a slice
    at a time, not in one deallocation that holds the GIL (a million parts: 0.2 s): every
    container is held by the list of its level, and the levels are let go of from the top, so
    each slice freed frees only its own leaves."""
    levels = [level for _, level in _levels(box.pop())]
    levels.reverse()
    while levels:
        level = levels.pop()
        while level:
            del level[-SLICE:]
            time.sleep(0)  # (as `_let_loop_in`)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
INT_DIGITS = 100  # room for any real value (seeds go to 2**64); Python refuses 4,300+


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > INT_DIGITS:
        raise RequestError(
            f"the body contains a number of {len(text)} digits ({text[:12]}…); send a number "
            f"of at most {INT_DIGITS} digits"
        )
    return int(text)


def _finite_float(text: str) -> float:
    """A number in range (json_text.finite_float), said as a body's RequestError."""
    try:
        return finite_float(text)
    except NotStrictJSON:
        raise RequestError(
            f"the body contains the number {text[:24]}, beyond the range of a 64-bit float "
            "(about 1.8e308); send a smaller number"
        ) from None


def _refuse_lone_surrogates(value: Any) -> None:
    """Raise if any string (or object key) holds half of a UTF-16 surrogate pair: it cannot be
    stored or sent as UTF-8 (a pair written as two escapes is decoded to one character)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings: Any = (item,)
        elif isinstance(item, dict):
            strings = item.keys()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in strings:
            found = _LONE_SURROGATE.search(text)
            if found:
                raise RequestError(
                    f"the body contains a lone UTF-16 surrogate (\\u{ord(found.group()):04x}) "
                    f"in {text[: found.start()][-20:]!r}…, which is not valid text; send "
                    "complete characters"
                )


def query_int(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    if not (
        raw.isascii() and raw.isdigit() and len(raw) <= len(str(high)) and low <= int(raw) <= high
    ):
        raise RequestError(f"'{name}' must be a number from {low} to {high}")
    return int(raw)


def int_param(request: web.Request, name: str) -> int:
    raw = request.match_info[name]
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise RequestError(f"'{name}' must be a number (got {raw!r})")
    return int(raw)


def _no_constants(name: str) -> Any:
    raise RequestError(f"the body contains {name}, which is not valid JSON; send a number")
