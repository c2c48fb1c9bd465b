"""A run's outputs, looked at: `POST /api/assistant/outputs/look` with the files ComfyUI named
in its `executed` events ({"outputs": ["ComfyUI_00001_.png [output]", …] or
[{"filename", "subfolder", "type"}, …], "expected": {"width", "height"}?, "decoded": [names]?})
answers each one's format, size and what looks wrong (core/files/output_checks.py), read from
ComfyUI's output and temp folders only (core/files/run_outputs.py). `decoded` names the files
whose output node has a latent decode upstream in the prompt that ran (the panel reads the
prompt's links): only for those is an all-black image said to be a failed decode."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..core.base import RequestError
from ..core.files import OutputRef, look_output, ref_of
from ..core.service import AssistantService
from .common import guarded, read_json

BASE = "/api/assistant/outputs"
MAX_LOOKED = 16  # files in one request (a batch of 16 is the most the panel sends)


def add_output_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    @table.post(BASE + "/look")
    @guarded
    async def look(request: web.Request) -> web.StreamResponse:
        body = await read_json(request, service.options.json_body_limit)
        if not isinstance(body, dict):
            raise RequestError('send a JSON object: {"outputs": ["ComfyUI_00001_.png [output]"]}')
        refs = _refs(body.get("outputs"))
        expected = _expected(body.get("expected"))
        decoded = {ref.annotated() for ref in _refs(body.get("decoded") or [], "decoded")}
        looks = [
            await look_output(service.outputs, ref, expected, ref.annotated() in decoded)
            for ref in refs
        ]
        return web.json_response({"outputs": looks})


def _refs(value: Any, field: str = "outputs") -> list[OutputRef]:
    if not isinstance(value, list) or (field == "outputs" and not value):
        raise RequestError(
            f'{field} must be a list of the files a run made, e.g. ["ComfyUI_00001_.png [output]"]'
        )
    if len(value) > MAX_LOOKED:
        raise RequestError(f"{field} has {len(value)} files; send at most {MAX_LOOKED} at a time")
    return [ref_of(item) for item in value]  # (OutputRefused: a 400 that says why)


def _expected(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    width = value.get("width") if isinstance(value, dict) else None
    height = value.get("height") if isinstance(value, dict) else None
    if not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 32_768 for v in (width, height)
    ):
        raise RequestError("expected must be {width, height} in pixels (1 to 32768)")
    return (width, height)  # type: ignore[return-value]
