"""A stand-in for the Comfy Registry (api.comfy.org) on 127.0.0.1, serving the two endpoints the
scan asks (/work/notes/registry_api.md), in the Registry's own shapes:

- `GET /nodes/{nodeId}` (operationId `getNode`): 200 a `Node`, 404 an `ErrorResponse`
  `{"error", "message"}` (Comfy-Org/registry-backend openapi.yml, schemas Node, NodeVersion,
  Publisher, ErrorResponse);
- `GET /comfy-nodes/{comfyNodeName}/node` (operationId `getNodeByComfyNodeName`): 200 the
  `Node` that provides the type, 404 when none does (Comfy-Org/ComfyUI_frontend
  src/services/comfyRegistryService.ts `inferPackFromNodeName`, typed
  `components['schemas']['Node']`).

`Node` fields as the spec names them: id, name, description, author, license (a string: the
serialised pyproject table, e.g. `{"file": "LICENSE"}`, or a name), repository, downloads,
latest_version (a NodeVersion: id, version, createdAt, downloadUrl, status, ...), publisher
(id, name), status. The packs' values are illustrative, not recorded (no internet here).

`mode` makes every answer fail as a Registry (or what stands between) can: "slow" (answers
after `delay` seconds), "500" (an ErrorResponse with HTTP 500), "html" (a captive portal's page
with 200), "huge" (a 200 body over the client's cap). `requests` lists every path asked.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


def node(
    pack_id: str,
    name: str,
    repository: str,
    license: str,
    version: str,
    downloads: int,
    publisher: str,
    description: str,
) -> dict[str, Any]:
    """A `Node` as GET /nodes/{nodeId} answers it."""
    return {
        "id": pack_id,
        "name": name,
        "description": description,
        "author": "",
        "license": license,
        "icon": "",
        "repository": repository,
        "tags": [],
        "category": "",
        "latest_version": {
            "id": f"{pack_id}-{version}",
            "version": version,
            "createdAt": "2026-10-01T12:00:00Z",
            "changelog": "",
            "dependencies": [],
            "deprecated": False,
            "downloadUrl": f"https://cdn.comfy.org/{publisher}/{pack_id}/{version}/node.zip",
            "status": "NodeVersionStatusActive",
            "status_reason": "",
            "node_id": pack_id,
        },
        "rating": 0,
        "downloads": downloads,
        "publisher": {"id": publisher, "name": publisher},
        "status": "NodeStatusActive",
        "status_detail": "",
    }


PACKS = {
    "comfyui-impact-pack": node(
        "comfyui-impact-pack",
        "ComfyUI Impact Pack",
        "https://github.com/ltdrdata/ComfyUI-Impact-Pack",
        '{"file": "LICENSE.txt"}',
        "8.22.2",
        2_100_000,
        "drltdata",
        "Detector, detailer, upscaler and pipe nodes.",
    ),
    "comfyui-kjnodes": node(
        "comfyui-kjnodes",
        "KJNodes for ComfyUI",
        "https://github.com/kijai/ComfyUI-KJNodes",
        '{"text": "GPL-3.0"}',
        "1.1.9",
        1_500_000,
        "kijai",
        "Various quality of life and masking related nodes.",
    ),
    "comfyui_tinyterranodes": node(
        "comfyui_tinyterranodes",
        "tinyterraNodes",
        "https://github.com/TinyTerra/ComfyUI_tinyterraNodes",
        "GPL-3.0",
        "2.0.7",
        400_000,
        "tinyterra",
        "Pipes, loaders and xy plots.",
    ),
}
NODE_TYPES = {
    "AddMask": "comfyui-impact-pack",
    "SAMLoader": "comfyui-impact-pack",
    "BlockifyMask": "comfyui-kjnodes",
    "ttN pipeLoader_v9": "comfyui_tinyterranodes",
}


@dataclass
class RegistryStandin:
    mode: str = "ok"  # ok | slow | 500 | html | huge
    delay: float = 5.0  # "slow": longer than the client's 3 s
    packs: dict[str, dict[str, Any]] = field(default_factory=lambda: dict(PACKS))
    node_types: dict[str, str] = field(default_factory=lambda: dict(NODE_TYPES))
    requests: list[str] = field(default_factory=list)
    url: str = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/nodes/{nodeId}", self._pack)
        app.router.add_get("/comfy-nodes/{comfyNodeName}/node", self._pack_for_node)
        return app

    async def _pack(self, request: web.Request) -> web.StreamResponse:
        return await self._answer(request, request.match_info["nodeId"])

    async def _pack_for_node(self, request: web.Request) -> web.StreamResponse:
        pack_id = self.node_types.get(request.match_info["comfyNodeName"], "")
        return await self._answer(request, pack_id)

    async def _answer(self, request: web.Request, pack_id: str) -> web.StreamResponse:
        self.requests.append(request.raw_path)
        if self.mode == "slow":
            await asyncio.sleep(self.delay)
        if self.mode == "500":
            error = {"error": "internal", "message": "Internal server error"}
            return web.json_response(error, status=500)
        if self.mode == "html":
            return web.Response(text="<html><body>Sign in to the Wi-Fi</body></html>")
        if self.mode == "huge":
            return web.Response(body=json.dumps({"id": "x", "pad": "x" * (2 << 20)}).encode())
        pack = self.packs.get(pack_id)
        if pack is None:
            error = {"error": "not found", "message": "Node not found"}
            return web.json_response(error, status=404)
        return web.json_response(pack)

    async def __aenter__(self) -> RegistryStandin:
        self._runner = web.AppRunner(self.app(), handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()
