"""Files attached in the composer: attach (read, counted, checked against the window, stored),
show (the bytes back, for the panel), the workflow one holds (for loadWorkflow), and remove a
draft. A file is refused whole, with the reason, or stored whole: never half.

A file is decoded, read and counted on a worker thread: an image's data is inflated to check it
(up to hundreds of MB for a large PNG), and the server answers other requests meanwhile."""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import json
from typing import Any

from aiohttp import web

from ..core.base import RequestError, coded
from ..core.chat import attach_file
from ..core.files import (
    Attachment,
    Attachments,
    FileReading,
    human_size,
    read_file,
)
from ..core.service import AssistantService
from .common import HTTPProblem, guarded, not_found, read_json
from .users import user_in_query

BASE = "/api/assistant/attachments"
NAME_CHARS = 255


def _fields(body: Any) -> tuple[str, str, str]:
    if not isinstance(body, dict):
        raise RequestError('send {"thread": ..., "name": ..., "data": "<base64>"}')
    thread, name, data = body.get("thread"), body.get("name"), body.get("data")
    if not isinstance(thread, str) or not 0 < len(thread) <= 200:
        raise RequestError("'thread' must be the chat's id: a string of 1 to 200 characters")
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_CHARS:
        raise RequestError(f"'name' must be the file's name: 1 to {NAME_CHARS} characters")
    if any(c in name for c in "/\\\x00"):
        raise RequestError("'name' must be a file name without a folder")
    if not isinstance(data, str):
        raise RequestError("'data' must be the file's bytes in base64")
    return thread, name.strip(), data


def _decode(name: str, data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise RequestError(f"'data' of {name} is not valid base64") from None


def _read(name: str, encoded: str, max_bytes: int) -> tuple[bytes, FileReading]:
    data = _decode(name, encoded)
    return data, read_file(name, data, max_bytes)  # (FileRefused: answered with its status)


_strict_dumps = functools.partial(json.dumps, allow_nan=False)  # (what JSON.parse reads)


def _answer(value: Any, status: int = 200) -> web.Response:
    return web.json_response(value, status=status, dumps=_strict_dumps)


def workflow_of(att: Attachment) -> Any:
    """The workflow an attachment holds, or a 422 that says why it holds none."""
    if att.reading.workflow is None:
        why = att.reading.note
        raise HTTPProblem(
            422,
            coded("attachment.no_workflow_why", name=att.name, why=why)
            if why
            else coded("attachment.no_workflow", name=att.name),
        )
    return att.reading.workflow


def add_attachment_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    max_bytes = service.options.attachment_max_bytes
    body_limit = max_bytes * 4 // 3 + 64 * 1024  # base64, and the other fields

    async def attachments() -> Attachments:
        return Attachments(await service.store())

    too_big = HTTPProblem(413, coded("attachment.over_limit", limit=human_size(max_bytes)))

    @table.post(BASE)
    @guarded
    async def attach(request: web.Request) -> web.StreamResponse:
        if request.content_length is not None and request.content_length > body_limit:
            raise too_big
        try:
            body = await read_json(request, body_limit)
        except HTTPProblem as exc:
            raise too_big if exc.status == 413 else exc from None
        thread, name, encoded = _fields(body)
        data, reading = await asyncio.to_thread(_read, name, encoded, max_bytes)
        stored, room = await attach_file(await service.turn_parts(), thread, name, data, reading)
        answer = stored.as_json()
        answer["room"] = room.room if room is not None else None
        answer["vision"] = room.vision if room is not None else True
        return _answer(answer, status=201)

    def attachment_id(request: web.Request) -> str:
        aid = request.match_info["id"]
        if not 0 < len(aid) <= 64:
            raise RequestError("an attachment id has 1 to 64 characters")
        return aid

    async def found(request: web.Request) -> tuple[Attachments, Attachment]:
        store, aid = await attachments(), attachment_id(request)
        att = await store.get(aid)
        if att is None:
            raise not_found("attachment", id=aid)
        return store, att

    @table.get(BASE + "/{id}")
    @user_in_query  # (shown with <img src> and <a href>: no header)
    @guarded
    async def show(request: web.Request) -> web.StreamResponse:
        """The file as attached: an image as itself, anything else as plain text (so a
        browser never renders an attached page or script)."""
        store, att = await found(request)
        data = await store.data(att.id)
        if data is None:
            raise not_found("attachment", id=att.id)
        media = att.media_type if att.reading.image is not None else "text/plain; charset=utf-8"
        headers = {
            "Content-Type": media,
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox",
            "Cache-Control": "private, max-age=31536000, immutable",  # never changes
        }
        return web.Response(body=data, headers=headers)

    @table.get(BASE + "/{id}/workflow")
    @guarded
    async def workflow(request: web.Request) -> web.StreamResponse:
        """The workflow an attachment holds (a workflow file, or an image ComfyUI made)."""
        _, att = await found(request)
        held = workflow_of(att)
        try:
            return _answer({"name": att.name, "workflow": held})
        except ValueError:  # (kept before NaN was refused at attach)
            raise HTTPProblem(422, coded("attachment.workflow_not_finite", name=att.name)) from None

    @table.delete(BASE + "/{id}")
    @guarded
    async def remove(request: web.Request) -> web.StreamResponse:
        """Remove a file attached but not sent (a message that holds one keeps it)."""
        aid = attachment_id(request)
        removed = await (await attachments()).delete_draft(aid)
        if removed is None:
            raise not_found("attachment", id=aid)
        if not removed:
            raise HTTPProblem(409, coded("attachment.sent", id=aid))
        return _answer({"deleted": aid})
