"""The standalone server: the same routes as inside ComfyUI, without ComfyUI.

`python -m comfyui_assistant serve` runs it. Until the panel's playground lands, `/` shows a
short status page.
"""

from __future__ import annotations

import html
from pathlib import Path

from aiohttp import web

from .api_handlers import add_routes
from .core.service import AssistantService, ServiceOptions

STATUS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>ComfyUI Assistant</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto">
<h1>ComfyUI Assistant</h1>
<p>The assistant's API is running. Provider: <b>{provider}</b> at <code>{base_url}</code>,
model <code>{model}</code>.</p>
<ul>
<li><a href="/api/assistant/provider">GET /api/assistant/provider</a> — provider settings</li>
<li><a href="/api/assistant/tools">GET /api/assistant/tools</a> — the tools the model can call</li>
<li><code>POST /api/chat</code> — the chat stream (AI SDK UI Message Stream v1)</li>
</ul>
</body></html>
"""


SERVICE = web.AppKey("service", AssistantService)


def create_app(options: ServiceOptions) -> web.Application:
    service = AssistantService(options)
    app = web.Application(client_max_size=options.chat_body_limit + 1)
    routes = web.RouteTableDef()
    add_routes(routes, service)

    @routes.get("/")
    async def index(request: web.Request) -> web.Response:
        settings = await service.provider_settings()
        page = STATUS_PAGE.format(
            provider=html.escape(settings.label),
            base_url=html.escape(settings.base_url),
            model=html.escape(settings.model or "first listed by the provider"),
        )
        return web.Response(text=page, content_type="text/html")

    app.add_routes(routes)

    async def close(app: web.Application) -> None:
        await service.close()

    app.on_cleanup.append(close)
    app[SERVICE] = service
    return app


def default_data_dir() -> Path:
    return Path.home() / ".comfyui-assistant"
