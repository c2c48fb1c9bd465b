"""`GET /view`, as ComfyUI serves a run's files: `filename`, `subfolder` and `type` (output,
temp or input) under the stand-in's folders; a name that leads out of its folder is refused (403)
and a missing file is 404, as ComfyUI answers them."""

from __future__ import annotations

import os
from pathlib import Path

from aiohttp import web

TYPES = ("output", "temp", "input")


def add_view_route(routes: web.RouteTableDef, folders: dict[str, Path]) -> None:
    @routes.get("/view")
    @routes.get("/api/view")
    async def view(request: web.Request) -> web.StreamResponse:
        kind = request.query.get("type", "output")
        name = request.query.get("filename", "")
        if kind not in TYPES or not name or name.startswith("/") or ".." in name:
            return web.Response(status=400)
        root = folders[kind].resolve()
        path = (root / request.query.get("subfolder", "") / name).resolve()
        if os.path.commonpath([root, path]) != str(root):
            return web.Response(status=403)
        if not path.is_file():
            return web.Response(status=404)
        return web.FileResponse(path)


def standin_folders(data_dir: Path) -> dict[str, Path]:
    """The stand-in's output, temp and input folders (made on first use)."""
    folders = {kind: data_dir / "comfyui" / kind for kind in TYPES}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return folders
