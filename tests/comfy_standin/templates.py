"""`/templates/...`, as ComfyUI serves the PyPI package `comfyui-workflow-templates` (its
`templates/` folder as static files): `index.json`, the template browser's list, and each
`<name>.json`. Here the folder is `tests/fixtures/workflows` (real templates of 0.1.95, unchanged;
`index.json` is the package's index cut to them). The frontends (1.27.10, 1.58.1) load a template
with `fetch("/templates/<name>.json")` and `app.loadGraphData(json, true, true, name)`: many
templates share one workflow id (`api_openai_dall_e_2_t2i` and `api_kling_i2v` do), which the
browser suite opens to check that each tab keeps threads of its own."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

TEMPLATES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "workflows"


def add_template_routes(routes: web.RouteTableDef, folder: Path = TEMPLATES_DIR) -> None:
    names = {p.name for p in folder.glob("*.json")}

    @routes.get("/templates/{name}")
    async def template(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in names:  # only the folder's own files, by exact name
            raise web.HTTPNotFound(text=f"no template {name}")
        return web.FileResponse(folder / name, headers={"Content-Type": "application/json"})
