"""The MCP endpoint when the `mcp` package is not installed (a ComfyUI updated with `git pull`
and no `pip install -r requirements.txt`): the rest of the assistant loads as before, and the
endpoint and its routes answer 503 saying what to install. Imports nothing of the SDK."""

from __future__ import annotations

import logging

from aiohttp import web

log = logging.getLogger("comfyui_assistant")

MCP_PATH = "/api/assistant/mcp"
TOKEN_ENV = "COMFY_ASSISTANT_MCP_TOKEN"  # the stdio relay's token for a ComfyUI on another machine


def unavailable_message(missing: ImportError) -> str:
    return (
        f"the MCP server needs the Python package 'mcp' (importing {missing.name or 'it'} "
        "failed): run `pip install -r requirements.txt` from the assistant's folder in "
        "ComfyUI's Python environment, then restart ComfyUI"
    )


def add_unavailable_mcp_routes(table: web.RouteTableDef, missing: ImportError) -> None:
    message = unavailable_message(missing)
    log.warning("ComfyUI Assistant: %s; the chat panel works without it", message)

    async def mcp_unavailable(request: web.Request) -> web.StreamResponse:
        return web.json_response({"error": message}, status=503)

    for path in (MCP_PATH, MCP_PATH + "/{rest:.*}"):
        table.route("*", path)(mcp_unavailable)
