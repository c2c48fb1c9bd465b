"""The provider probes' caches are per key (issue 39): with a provider per user
(COMFY_ASSISTANT_PER_USER_PROVIDER=1), two users on one base URL with their own keys each get
what the provider answers their own key, never a model list fetched with the other's key; and
the caches keep a keyed hash of a key, never the key."""

from __future__ import annotations

from aiohttp import web
from comfyui_assistant.core.provider import provider_probes
from comfyui_assistant.core.provider.budget import Window
from comfyui_assistant.core.provider.provider_config import ProviderSettings

from .helpers import serve_routes

LISTS = {"Bearer sk-alice-1": 32768, "Bearer sk-bob-2": 8192}  # what each key may see


async def test_each_key_gets_its_own_answer_and_the_caches_keep_no_key(fresh_probes: None) -> None:
    asked: list[str | None] = []
    routes = web.RouteTableDef()

    @routes.get("/v1/models")
    async def models(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization")
        asked.append(auth)
        if auth not in LISTS:
            return web.json_response({"error": {"message": "invalid key"}}, status=401)
        return web.json_response({"data": [{"id": "m", "context_length": LISTS[auth]}]})

    runner, url = await serve_routes(routes)
    try:
        base = url + "/v1"
        alice, bob, nobody = (
            ProviderSettings(base_url=base, api_key=key) for key in ("sk-alice-1", "sk-bob-2", "")
        )
        got = [await provider_probes.provider_window(s, "m") for s in (alice, bob, nobody)]
        assert got == [
            Window(32768, "provider", "/models context_length=32768"),
            Window(8192, "provider", "/models context_length=8192"),
            None,
        ]
        assert asked == ["Bearer sk-alice-1", "Bearer sk-bob-2", None]
        # asked again: each from its own cache, nobody asks the provider
        again = [await provider_probes.provider_window(s, "m") for s in (alice, bob, nobody)]
        assert again == got and len(asked) == 3
        await provider_probes.provider_capabilities(bob, "m")
    finally:
        await runner.cleanup()
    caches = repr(
        (
            provider_probes._windows,
            provider_probes._lists,
            provider_probes._last_loaded,
            provider_probes._capabilities,
        )
    )
    assert "sk-alice" not in caches and "sk-bob" not in caches
    fingerprints = {key[2] for key in provider_probes._windows}
    assert len(fingerprints) == 3 and "" in fingerprints  # (one per key, and no key)
