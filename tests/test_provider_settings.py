"""Provider settings: environment, stored settings (which win), the masked view, the test
verdict, and the API key never leaving the server."""

from __future__ import annotations

import json
import socket

import httpx2 as httpx  # the openai SDK's HTTP library
import openai
import pytest
from comfyui_assistant.core.provider.provider_config import resolve
from comfyui_assistant.core.stream.redact import redact

from .conftest import start_app
from .helpers import chat_body, user
from .scripted_provider import ScriptedProvider, Status, error_body, text_reply

SECRET = "sk-proj-abcdefghij0123456789"


async def get_settings(app):
    async with app.session.get(app.base + "/api/assistant/provider") as resp:
        assert resp.status == 200
        return await resp.json()


async def put_settings(app, body):
    async with app.session.put(app.base + "/api/assistant/provider", json=body) as resp:
        return resp.status, await resp.json()


async def test_environment_settings_are_shown_without_the_key(provider, tmp_path):
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_API_KEY": SECRET,
        "LLM_MODEL": "qwen3:8b",
        "LLM_CONTEXT_WINDOW": "32768",
        "LLM_MAX_OUTPUT_TOKENS": "2048",
    }
    app = await start_app(tmp_path, env)
    try:
        async with app.session.get(app.base + "/api/assistant/provider") as resp:
            raw = await resp.text()
        assert SECRET not in raw
        assert await get_settings(app) == {
            "baseUrl": provider.base_url,
            "origin": provider.base_url.removesuffix("/v1"),
            "model": "qwen3:8b",
            "contextWindow": 32768,
            "maxOutputTokens": 2048,
            "timeoutSeconds": 300.0,
            "apiKeySet": True,
            "provider": "The provider",
            "problems": [],
            "sources": {
                "baseUrl": "environment",
                "apiKey": "environment",
                "model": "environment",
                "contextWindow": "environment",
                "maxOutputTokens": "environment",
            },
        }
    finally:
        await app.close()


async def test_stored_settings_win_over_the_environment_and_survive_a_restart(provider, tmp_path):
    env = {"LLM_BASE_URL": "http://127.0.0.1:11434/v1", "LLM_MODEL": "llama3.2"}
    app = await start_app(tmp_path, env)
    try:
        status, body = await put_settings(
            app, {"baseUrl": provider.base_url + "/", "model": "scripted-model", "apiKey": SECRET}
        )
        assert status == 200
        assert SECRET not in str(body)
        assert body["baseUrl"] == provider.base_url  # trailing slash removed
        assert body["sources"]["baseUrl"] == "settings"
    finally:
        await app.close()

    provider.enqueue(text_reply("stored settings used"))
    app = await start_app(tmp_path, env)  # a restart: same data directory
    try:
        settings = await get_settings(app)
        assert (settings["baseUrl"], settings["model"], settings["apiKeySet"]) == (
            provider.base_url,
            "scripted-model",
            True,
        )
        status, _ = await app.chat(chat_body(user("hi")))
        assert status == 200
        assert provider.headers[0]["Authorization"] == f"Bearer {SECRET}"
        # null resets a setting to the environment's value
        status, body = await put_settings(app, {"model": None})
        assert (body["model"], body["sources"]["model"]) == ("llama3.2", "environment")
    finally:
        await app.close()
    db = (tmp_path / "assistant.sqlite3").stat()
    assert db.st_mode & 0o077 == 0  # it holds the key: owner-only


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"baseUrl": "ftp://x"},
            "baseUrl must be an http(s) URL such as http://127.0.0.1:11434/v1",
        ),
        (
            {"baseUrl": "http://0177.0.0.1:1/v1"},
            "baseUrl is not a URL the HTTP client accepts (Invalid IPv4 address: '0177.0.0.1')",
        ),
        ({"baseUrl": "http://127.0.0.1\t:1/v1"}, "baseUrl contains a tab (U+0009) at position 17"),
        ({"baseUrl": "http://127.0.0.1:0/v1"}, "baseUrl's port must be between 1 and 65535"),
        ({"contextWindow": "big"}, "contextWindow must be a number"),
        ({"contextWindow": 12.5}, "contextWindow must be a whole number"),
        ({"contextWindow": 10}, "contextWindow must be between 512 and 1e+07 (got 10)"),
        ({"model": 5}, "model must be a string of at most 2000 characters"),
        ({"colour": "red"}, "nothing to update: send one or more of baseUrl, apiKey, model"),
        ([1], "the body must be a JSON object of provider settings"),
    ],
)
async def test_invalid_settings_are_refused_and_nothing_changes(assistant, provider, body, message):
    before = await get_settings(assistant)
    status, answer = await put_settings(assistant, body)
    assert status == 400
    assert answer["error"].startswith(message)
    assert await get_settings(assistant) == before
    provider.enqueue(text_reply("still fine"))
    status, _ = await assistant.chat(chat_body(user("hi")))
    assert status == 200


@pytest.mark.parametrize("base_url", ["http://0177.0.0.1:1/v1", "http://127.0.0.1\t:1/v1"])
async def test_a_base_url_stored_by_an_older_version_that_the_client_refuses_is_dropped(
    provider, tmp_path, base_url, caplog
):
    from comfyui_assistant.core.store.store import Store

    store = await Store.open(tmp_path)
    await store.update_settings("provider", {"baseUrl": base_url, "apiKey": SECRET})
    await store.close()
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path, env)
    try:
        provider.enqueue(text_reply("the environment's provider"))
        status, body = await app.chat(chat_body(user("hi")))
        settings = await get_settings(app)
    finally:
        await app.close()
    assert status == 200 and '"type":"error"' not in body and len(provider.requests) == 1
    assert (settings["baseUrl"], settings["apiKeySet"]) == (provider.base_url, False)
    assert "dropping the stored baseUrl" in caplog.text


async def test_the_test_button_verdicts(provider, tmp_path):
    app = await start_app(tmp_path, {"LLM_BASE_URL": provider.base_url})
    provider.models = ["qwen3:8b", "llama3.2"]
    try:

        async def verdict(body=None):
            kwargs = {"json": body if body is not None else {}}
            async with app.session.post(
                app.base + "/api/assistant/provider/test", **kwargs
            ) as resp:
                assert resp.status == 200
                return await resp.json()

        ok = await verdict()
        assert ok == {
            "ok": True,
            "provider": "The provider",
            "baseUrl": provider.base_url,
            "reachable": True,
            "auth": "ok",
            "model": "qwen3:8b",
            "modelFound": True,
            "models": ["qwen3:8b", "llama3.2"],
            "message": (
                f"The provider at {provider.base_url} works with qwen3:8b. No model is set, so "
                f"the first listed, qwen3:8b, is used."
            ),
        }

        provider.enqueue(Status(404, error_body("model 'mistral' not found")))
        missing = await verdict({"model": "mistral"})
        assert (missing["ok"], missing["modelFound"]) == (False, False)
        assert "does not know model 'mistral'" in missing["message"]

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        down = await verdict({"baseUrl": dead})
        assert (down["ok"], down["reachable"]) == (False, False)
        assert down["message"] == (
            f"The provider is not reachable at {dead} — start it or set the provider in Settings."
        )
        # testing unsaved values saved nothing
        assert (await get_settings(app))["baseUrl"] == provider.base_url
    finally:
        await app.close()


async def test_the_test_button_reports_a_rejected_key(tmp_path):
    guarded = await ScriptedProvider(api_key="the-right-key").start()
    app = await start_app(tmp_path, {"LLM_BASE_URL": guarded.base_url, "LLM_API_KEY": SECRET})
    try:
        async with app.session.post(app.base + "/api/assistant/provider/test", json={}) as resp:
            raw = await resp.text()
            verdict = await resp.json()
        assert SECRET not in raw
        assert (verdict["ok"], verdict["reachable"], verdict["auth"]) == (False, True, "failed")
        assert "unauthorized (HTTP 401)" in verdict["message"]
    finally:
        await app.close()
        await guarded.stop()


async def test_servers_without_a_models_list_are_checked_with_one_token(provider, tmp_path):
    provider.models_status = 404
    provider.enqueue(text_reply("p"))
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path, env)
    try:
        async with app.session.post(app.base + "/api/assistant/provider/test", json={}) as resp:
            verdict = await resp.json()
        assert (verdict["ok"], verdict["auth"], verdict["modelFound"]) == (True, "ok", True)
        assert provider.requests[0]["max_tokens"] == 1
    finally:
        await app.close()


def test_redact_removes_keys_and_bearer_tokens():
    text = (
        f"Incorrect API key provided: {SECRET}. Header: Bearer abc.def-123 and key gsk-{'x' * 30}"
    )
    assert redact(text, [SECRET]) == (
        "Incorrect API key provided: [redacted]. Header: Bearer [redacted] and key [redacted]"
    )


def test_bad_environment_values_are_ignored_not_fatal():
    settings = resolve({}, {"LLM_CONTEXT_WINDOW": "lots", "LLM_BASE_URL": "localhost:11434"})
    assert (settings.context_window, settings.base_url) == (None, "http://127.0.0.1:11434/v1")
    assert settings.problems == (
        "LLM_BASE_URL is ignored: the value must start with http:// or https://, such as "
        "http://127.0.0.1:11434/v1.",
        "LLM_CONTEXT_WINDOW is ignored: the value must be a number.",
    )


@pytest.mark.parametrize(
    ("base_url", "kind", "subject"),
    [
        ("http://127.0.0.1:11434/v1", "ollama", "Ollama"),
        ("http://localhost:1234/v1", "lmstudio", "LM Studio"),
        ("http://127.0.0.1:8080/v1", "llamacpp", "the llama.cpp server"),
        ("https://api.openai.com/v1", "openai", "OpenAI"),
        ("https://openrouter.ai/api/v1", "openrouter", "OpenRouter"),
        ("http://10.0.0.5:9000/v1", "generic", "the provider"),
    ],
)
def test_provider_profiles_by_base_url(base_url, kind, subject):
    from comfyui_assistant.core.provider.provider_profiles import profile_for

    profile = profile_for(base_url)
    assert (profile.kind.value, profile.subject) == (kind, subject)


async def test_a_broken_stream_names_a_custom_endpoint_mid_sentence(provider, tmp_path):
    from comfyui_assistant.core.provider.provider import describe_error
    from comfyui_assistant.core.provider.provider_config import ProviderSettings

    settings = ProviderSettings(base_url="http://10.0.0.5:9000/v1")
    request = httpx.Request("POST", "http://10.0.0.5:9000/v1/chat/completions")
    error = describe_error(openai.APIConnectionError(request=request), settings, "m", started=True)
    assert error.message.startswith("The connection to the provider broke off")


@pytest.mark.parametrize(
    ("base_url", "shown"),
    [
        ("https://api.example.com/v1", "https://api.example.com:443"),
        ("http://LOCALHOST:1234/api/v1/key-in-path-abc", "http://localhost:1234"),
        ("http://[::1]/v1", "http://[::1]:80"),
    ],
)
def test_the_origin_settings_shows_is_where_requests_go_and_nothing_more(base_url, shown):
    """Settings shows scheme://host:port, as the HTTP client reads the base URL: never its
    path (which may hold a key), never the key."""
    public = resolve({}, {"LLM_BASE_URL": base_url, "LLM_API_KEY": SECRET}).public()
    assert public["origin"] == shown
    assert SECRET not in str(public["origin"]) and "key-in-path" not in public["origin"]


async def test_a_refused_base_url_in_settings_is_named_never_quoted(tmp_path):
    """Settings' answer to each refused form names the problem: the path, query or password
    (where a key may be) never comes back (tests/test_standalone_process.py: the start-up
    line)."""
    from .test_standalone_process import REFUSED_URLS
    from .test_standalone_process import SECRET as IN_URL

    app = await start_app(tmp_path, {})
    try:
        for url, says in REFUSED_URLS.values():
            status, body = await put_settings(app, {"baseUrl": url})
            assert status == 400 and says.replace("the value", "baseUrl") in body["error"], body
            assert IN_URL not in json.dumps(body)
    finally:
        await app.close()
