"""The provider's metadata lookups (its window, what it can do) carry the key: a provider that
redirects them elsewhere gets no answer followed, and the other origin never sees the key."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from comfyui_assistant.core.provider import provider_probes
from comfyui_assistant.core.provider.provider_config import ProviderSettings

from .helpers import serve_routes


async def test_a_redirected_lookup_is_not_followed_and_the_key_stays_home(
    fresh_probes: None,
) -> None:
    seen: list[dict[str, Any]] = []
    other = web.RouteTableDef()

    @other.route("*", "/{tail:.*}")
    async def record(request: web.Request) -> web.Response:
        seen.append({"path": request.path, "auth": request.headers.get("Authorization")})
        return web.json_response({"data": [{"id": "m", "context_length": 4096}]})

    other_runner, other_url = await serve_routes(other)
    provider = web.RouteTableDef()
    asked: list[str] = []

    @provider.route("*", "/{tail:.*}")
    async def redirect(request: web.Request) -> web.Response:
        asked.append(request.path)
        raise web.HTTPFound(other_url + request.path_qs)

    provider_runner, provider_url = await serve_routes(provider)
    try:
        settings = ProviderSettings(base_url=provider_url + "/v1", api_key="sk-secret-123")
        window = await provider_probes.provider_window(settings, "m")
        assert asked, "the provider was asked"
        assert window is None and seen == []
    finally:
        await provider_runner.cleanup()
        await other_runner.cleanup()
