"""The standalone server: the same routes as inside ComfyUI, without ComfyUI, plus the playground.

`python -m comfyui_assistant serve` runs it. `/` is the playground: a real LiteGraph canvas with
the environment's node types and the panel in a bottom area, the way ComfyUI hosts it, with a
simulated queue. It needs what ComfyUI itself serves around an extension:

| route | what |
| --- | --- |
| `/` | `ui/playground/index.html` |
| `/playground/*` | the playground's build, `ui/playground-dist` |
| `/extensions/comfyui-assistant/*` | the panel's build, `ui/dist` (ComfyUI's `WEB_DIRECTORY`) |
| `/scripts/app.js` | `export const app = window.app` (ComfyUI's app module, for the panel) |
| `GET /api/extensions` | the extension scripts to load, as ComfyUI lists them |
| `GET /api/object_info` | the environment's node definitions, as ComfyUI serves them |
| `GET /api/view` | a placeholder for the simulated queue's images |
| `/status` | what this server talks to, and its API routes |

Every other `/api/*` route comes from `api_handlers.add_routes`, as inside ComfyUI.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

from aiohttp import web

from .api_handlers import add_routes
from .core.provider import origin
from .core.service import AssistantService, ServiceOptions
from .routes.guard import LOOPBACK, HostPolicy, refusal

UI_DIR = Path(__file__).resolve().parent / "ui"
PANEL_DIST = UI_DIR / "dist"
PLAYGROUND_PAGE = UI_DIR / "playground" / "index.html"
PLAYGROUND_DIST = UI_DIR / "playground-dist"
EXTENSION_PREFIX = "/extensions/comfyui-assistant"

# ComfyUI's frontend exports its app object from this module; the playground sets window.app
# before it loads any extension.
APP_MODULE = "export const app = window.app;\nexport default app;\n"

STATUS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>ComfyUI Assistant</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto">
<h1>ComfyUI Assistant</h1>
<p>The assistant's API is running. Provider: <b>{provider}</b> at <code>{base_url}</code>,
model <code>{model}</code>.</p>
<ul>
<li><a href="/">/</a> — {playground}</li>
<li><a href="/api/assistant/provider">GET /api/assistant/provider</a> — provider settings</li>
<li><a href="/api/assistant/tools">GET /api/assistant/tools</a> — the tools the model can call</li>
<li><code>POST /api/assistant/chat</code> — the chat stream (AI SDK UI Message Stream v1)</li>
</ul>
</body></html>
"""

PLACEHOLDER_IMAGE = """<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512"
 viewBox="0 0 512 512">
<rect width="512" height="512" fill="#2b2b2b"/>
<rect x="16" y="16" width="480" height="480" fill="none" stroke="#f0b35a" stroke-width="4"
 stroke-dasharray="16 10"/>
<text x="256" y="240" fill="#ddd" font-family="sans-serif" font-size="28"
 text-anchor="middle">simulated image</text>
<text x="256" y="280" fill="#999" font-family="sans-serif" font-size="18"
 text-anchor="middle">{name}</text>
</svg>
"""

NO_CACHE = {"Cache-Control": "no-cache"}


SERVICE = web.AppKey("service", AssistantService)
WARMING = web.AppKey("warming", asyncio.Future)


def playground_built() -> bool:
    return PLAYGROUND_PAGE.is_file() and (PLAYGROUND_DIST / "playground.js").is_file()


def panel_scripts() -> list[str]:
    """The panel's scripts, as ComfyUI lists a custom node's `WEB_DIRECTORY` files in
    `/api/extensions` (served at `/extensions/<folder>/`)."""
    scripts = sorted(p.name for p in PANEL_DIST.glob("*.js")) if PANEL_DIST.is_dir() else []
    return [f"{EXTENSION_PREFIX}/{name}" for name in scripts]


async def object_info_response(service: AssistantService) -> web.Response:
    """`/api/object_info` as ComfyUI answers it: the environment's node definitions."""
    env = await service.environment.get()
    response = web.json_response(dict(env.nodes))
    response.enable_compression()
    return response


def add_playground_routes(routes: web.RouteTableDef, service: AssistantService) -> None:
    @routes.get("/")
    async def index(request: web.Request) -> web.StreamResponse:
        if not playground_built():
            raise web.HTTPFound("/status")
        return web.FileResponse(PLAYGROUND_PAGE, headers=NO_CACHE)

    @routes.get("/scripts/app.js")
    async def app_module(request: web.Request) -> web.Response:
        return web.Response(text=APP_MODULE, content_type="text/javascript", headers=NO_CACHE)

    @routes.get("/api/extensions")
    async def extensions(request: web.Request) -> web.Response:
        return web.json_response(panel_scripts())

    @routes.get("/api/object_info")
    async def object_info(request: web.Request) -> web.Response:
        return await object_info_response(service)

    @routes.get("/api/view")
    async def view(request: web.Request) -> web.Response:
        name = html.escape(request.query.get("filename", "")[:80])
        return web.Response(
            text=PLACEHOLDER_IMAGE.format(name=name), content_type="image/svg+xml", headers=NO_CACHE
        )

    if PANEL_DIST.is_dir():
        routes.static(EXTENSION_PREFIX, PANEL_DIST)
    if PLAYGROUND_DIST.is_dir():
        routes.static("/playground", PLAYGROUND_DIST)


def _guard(hosts: HostPolicy) -> Any:
    """Every page of this server, the playground's included, answers only to its own host
    names (DNS rebinding); a static file name the file system refuses (too long, say) is
    simply not there."""

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        reason = refusal(request, hosts)
        if reason is not None:
            return web.json_response({"error": reason}, status=415 if "JSON" in reason else 403)
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except OSError:
            if request.method != "GET" or not request.path.startswith(STATIC_PREFIXES):
                raise
            raise web.HTTPNotFound(text="no such file") from None

    return guard


STATIC_PREFIXES = (EXTENSION_PREFIX + "/", "/playground/")


async def _no_cache_for_static(request: web.Request, response: web.StreamResponse) -> None:
    # Rebuilt files must reach the browser at once: revalidate every time (ETag makes it cheap).
    if request.path.startswith(STATIC_PREFIXES):
        response.headers["Cache-Control"] = "no-cache"


def create_app(options: ServiceOptions, hosts: HostPolicy = LOOPBACK) -> web.Application:
    service = AssistantService(options)
    app = web.Application(client_max_size=options.chat_body_limit + 1, middlewares=[_guard(hosts)])
    routes = web.RouteTableDef()
    add_routes(routes, service, hosts)
    add_playground_routes(routes, service)

    @routes.get("/status")
    async def status(request: web.Request) -> web.Response:
        settings = await service.provider_settings()
        page = STATUS_PAGE.format(
            provider=html.escape(settings.label),
            base_url=html.escape(origin(settings.base_url)),
            model=html.escape(settings.model or "first listed by the provider"),
            playground="the playground"
            if playground_built()
            else "the playground (not built: run <code>npx vite build --mode playground</code> "
            "in ui/)",
        )
        return web.Response(text=page, content_type="text/html")

    app.add_routes(routes)
    app.on_response_prepare.append(_no_cache_for_static)

    async def warm(app: web.Application) -> None:  # (the first chat need not wait for it)
        app[WARMING] = asyncio.ensure_future(service.warm())

    async def close(app: web.Application) -> None:
        warming = app.get(WARMING)
        if warming is not None:
            warming.cancel()
        await service.close()

    app.on_startup.append(warm)
    app.on_cleanup.append(close)
    app[SERVICE] = service
    return app


def default_data_dir() -> Path:
    return Path.home() / ".comfyui-assistant"
