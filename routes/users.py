"""Whose request this is, and that user's assistant behind every route.

`request_user(request)` is the one function that says who a request is from: ComfyUI's own
resolver inside ComfyUI (`UserManager.get_request_user_id`: the `comfy-user` header under
`--multi-user`, else "default"), the same rule on a users file standalone and in the stand-in
(core/base/users.py). A user it does not know is refused with 403, as ComfyUI refuses one on its own
routes, before any data is read or written.

The routes are written against one `AssistantService`; `RequestsAssistant` stands in for it and
hands each request the requesting user's own (`AssistantService.of_user`): another user's
threads, rules, skills, attachments and settings are not in that assistant's store or folders
at all, so no route can return, change or delete them, and another user's thread id answers
404 like any id that does not exist.

MCP (mcp_server/): a client is served as the user its requests name, as the panel is; a token
for a client on another machine is issued for one user (kept in that user's store:
mcp_server/access.py) and accepted only for that user.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, cast

from aiohttp import web

from ..core.base import USER_HEADER
from ..core.service import SHARED_PARTS, AssistantService
from .common import Handler, HTTPProblem

_SERVING: ContextVar[AssistantService] = ContextVar("comfyui_assistant_user_service")


class UnknownUser(HTTPProblem):
    """A request from a user ComfyUI does not know (403, as ComfyUI's own routes answer)."""


USER_QUERY = "user"  # names the user on a route marked `user_in_query`, when no header does
_IN_QUERY = "_assistant_user_in_query"


def user_in_query(handler: Handler) -> Handler:
    """Marks a GET route the panel loads with a plain `<img src>` or `<a href>` (an attachment's
    bytes), which cannot carry the `comfy-user` header: there the `user` query parameter names
    the user when no header does. The user is resolved by ComfyUI's own rule all the same (an
    unknown user is refused) and sees only their own data: the parameter is exactly as strong as
    the header, which ComfyUI's multi-user mode trusts without authenticating either."""
    setattr(handler, _IN_QUERY, True)
    return handler


def names_user_in_query(handler: Handler) -> bool:
    return bool(getattr(handler, _IN_QUERY, False))


def request_user(request: web.Request, service: AssistantService, in_query: bool = False) -> str:
    """The id of the user `request` is from, as ComfyUI resolves it; UnknownUser (403) when
    ComfyUI would refuse it. `in_query`: the route is marked `user_in_query` (only a GET there
    reads the query)."""
    if in_query:
        request = _query_named(request)
    try:
        return service.options.users.resolve(request)
    except KeyError:
        named = request.headers.get(USER_HEADER)
        who = (
            "this request names no user (no comfy-user header)"
            if named is None
            else f"knows no user {named[:60]!r}"
        )
        raise UnknownUser(
            403,
            f"ComfyUI runs with --multi-user and {who}: choose or create a user in ComfyUI "
            "(its frontend sends the comfy-user header with each request)",
        ) from None


def _query_named(request: web.Request) -> web.Request:
    """`request` as if its `user` query parameter were its comfy-user header (a GET that names
    no user in a header, only)."""
    named = request.query.get(USER_QUERY)
    if request.method not in ("GET", "HEAD") or named is None or USER_HEADER in request.headers:
        return request
    return request.clone(headers={**request.headers, USER_HEADER: named})


@contextmanager
def serving(service: AssistantService) -> Iterator[None]:
    """Within this block (one request's handling), RequestsAssistant is `service`."""
    token = _SERVING.set(service)
    try:
        yield
    finally:
        _SERVING.reset(token)


class RequestsAssistant:
    """The assistant of the user whose request is being answered. The parts every user shares
    (SHARED_PARTS) and the options' limits may be read when the routes are added; anything else
    only while a request is served (`serving`), or it raises."""

    def __init__(self, root: AssistantService) -> None:
        self._root = root

    def __getattr__(self, name: str) -> Any:
        current = _SERVING.get(None)
        if current is not None:
            return getattr(current, name)
        if name in SHARED_PARTS or name == "options":
            return getattr(self._root, name)
        raise RuntimeError(f"the assistant's {name!r} is a user's: read it while serving a request")


def for_routes(root: AssistantService) -> AssistantService:
    """What the route modules are given: the requesting user's assistant, whoever asks."""
    return cast(AssistantService, RequestsAssistant(root))
