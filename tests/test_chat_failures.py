"""Every upstream failure ends the stream with an `error` chunk that says what happened and
what to do: never a hang, never a traceback, never the API key."""

from __future__ import annotations

import asyncio
import logging
import socket

import openai
import pytest
from comfyui_assistant.core.provider.provider import Provider
from comfyui_assistant.core.provider.provider_config import ProviderSettings

from .conftest import start_app
from .helpers import chat_body, content_parts, error_said, sse_events, types, user
from .scripted_provider import (
    Cut,
    Hang,
    Raw,
    ScriptedProvider,
    Status,
    Stream,
    call_piece,
    chunk,
    error_body,
    text_reply,
)

SECRET = "sk-test-0123456789abcdefSECRET"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def run_chat(tmp_path, env, sdk, message="hi"):
    app = await start_app(tmp_path / "data", env)
    try:
        status, body = await app.chat(chat_body(user(message)))
    finally:
        await app.close()
    assert status == 200
    return sse_events(body), sdk.check(body)


def only_error(result) -> str:
    (error,) = result["errors"]
    assert "Traceback" not in error and SECRET not in error
    return error_said(error)


async def test_connection_refused_names_the_provider_and_the_fix(tmp_path, sdk):
    url = f"http://127.0.0.1:{free_port()}/v1"
    env = {"LLM_BASE_URL": url, "LLM_MODEL": "llama3.2"}
    events, result = await run_chat(tmp_path, env, sdk)
    assert only_error(result) == (
        f"The provider is not reachable at {url} — start it or set the provider in Settings."
    )
    assert types(events) == ["start", "message-metadata", "error"]


async def test_a_connection_dropped_before_any_answer_is_not_called_a_timeout(tmp_path, sdk):
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()  # the request has begun: close without a word
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    try:
        _, result = await run_chat(tmp_path, {"LLM_BASE_URL": url, "LLM_MODEL": "m"}, sdk)
    finally:
        server.close()
        await server.wait_closed()
    assert only_error(result) == (
        f"The provider is not reachable at {url} — start it or set the provider in Settings."
    )


def test_the_client_talks_to_the_provider_over_aiohttp_where_the_sdk_offers_it():
    client = Provider(ProviderSettings(base_url="http://127.0.0.1:9/v1")).client
    aiohttp_client = getattr(openai, "DefaultAioHttpClient", None)
    if aiohttp_client is None:
        pytest.skip("this openai release has no aiohttp transport")
    assert isinstance(client._client, aiohttp_client)


async def test_ollama_is_named_when_its_port_is_used(tmp_path, sdk):
    env = {"LLM_MODEL": "llama3.2", "LLM_BASE_URL": "http://127.0.0.1:11434/v1"}
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.fail("something listens on 11434 on this machine; this test needs it closed")
    _, result = await run_chat(tmp_path, env, sdk)
    assert only_error(result) == (
        "Ollama is not reachable at http://127.0.0.1:11434/v1 — start it or set the provider "
        "in Settings."
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Status(401, error_body(f"Incorrect API key provided: {SECRET}", "invalid_api_key")),
            "rejected the request as unauthorized (HTTP 401) — set a valid API key in Settings",
        ),
        (
            Status(404, error_body("model 'nope' not found", "model_not_found")),
            "does not know model 'scripted-model' (HTTP 404: model 'nope' not found) — choose",
        ),
        (
            Status(429, error_body("Rate limit reached")),
            "is rate-limiting requests (HTTP 429: Rate limit reached) — wait a moment",
        ),
        (
            Status(500, error_body("boom")),
            "failed with HTTP 500 (boom) — try again; if it keeps failing, look at the server",
        ),
        (
            Status(503, {"detail": "loading"}),
            "failed with HTTP 503",
        ),
        (
            Status(400, error_body("Invalid value for 'temperature': must be at most 2.")),
            "refused the request (HTTP 400: Invalid value for 'temperature': must be at most 2.)",
        ),
    ],
)
async def test_http_errors_become_actionable_error_chunks(
    provider, tmp_path, sdk, caplog, reply, expected
):
    provider.enqueue(reply)
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model", "LLM_API_KEY": SECRET}
    with caplog.at_level(logging.DEBUG):
        events, result = await run_chat(tmp_path, env, sdk)
    assert expected in only_error(result)
    assert events[-1]["type"] == "error"
    assert SECRET not in caplog.text


async def test_a_silent_provider_times_out_with_a_clear_message(provider, tmp_path, sdk):
    provider.enqueue(Hang())
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_TIMEOUT_SECONDS": "1",
    }
    events, result = await run_chat(tmp_path, env, sdk)
    assert "did not answer within 1 s" in only_error(result)
    assert types(events) == ["start", "message-metadata", "error"]


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        ([Cut()], "broke off in the middle of the answer — the part already shown is kept"),
        ([Raw(b"data: {not json\n\n")], "sent a malformed stream chunk that is not JSON"),
        (
            [Raw(b'data: {"error": {"message": "GPU fell over"}}\n\n')],
            "reported an error mid-answer: GPU fell over",
        ),
    ],
)
async def test_a_stream_that_breaks_keeps_the_partial_answer(
    provider, tmp_path, sdk, tail, expected
):
    provider.enqueue(
        Stream(
            [
                chunk("Partial "),
                chunk("answer"),
                chunk(tool_calls=[call_piece(0, id="c1", name="addNode", arguments='{"no')]),
                *tail,
            ],
            done=False,
        )
    )
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    events, result = await run_chat(tmp_path, env, sdk)
    assert expected in only_error(result)
    parts = content_parts(result["message"])
    assert parts[1] == {"type": "text", "text": "Partial answer", "state": "done"}
    assert parts[2]["state"] == "output-error"
    assert "broke off before this call was complete" in parts[2]["errorText"]
    assert "finish" not in types(events)


async def test_no_model_configured_uses_the_first_listed_and_says_so(provider, tmp_path, sdk):
    provider.models = ["qwen3:8b", "llama3.2"]
    provider.enqueue(Stream([chunk("hi"), chunk(finish_reason="stop")]))
    events, result = await run_chat(tmp_path, {"LLM_BASE_URL": provider.base_url}, sdk)
    assert result["message"]["metadata"]["modelSource"] == "auto"
    assert events[1]["messageMetadata"] == {"model": "qwen3:8b", "modelSource": "auto"}
    assert provider.requests[0]["model"] == "qwen3:8b"


async def test_no_model_configured_and_none_listed(provider, tmp_path, sdk):
    provider.models = []
    _, result = await run_chat(tmp_path, {"LLM_BASE_URL": provider.base_url}, sdk)
    assert only_error(result) == (
        f"The provider at {provider.base_url} lists no models and none is configured — set "
        f"LLM_MODEL or choose a model in Settings."
    )
    assert provider.requests == []


async def test_wrong_key_when_listing_models_is_an_auth_error(tmp_path, sdk):
    guarded = await ScriptedProvider(api_key="right-key").start()
    try:
        env = {"LLM_BASE_URL": guarded.base_url, "LLM_API_KEY": SECRET}
        _, result = await run_chat(tmp_path, env, sdk)
    finally:
        await guarded.stop()
    assert "unauthorized (HTTP 401)" in only_error(result)


async def test_a_model_call_is_not_logged_line_by_line_by_the_http_library(
    assistant, provider, caplog
):
    import logging

    caplog.set_level(logging.INFO)
    provider.enqueue(text_reply("hi"))
    await assistant.chat(chat_body(user("hi")))
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("chat thread=") for line in lines)  # ours: one line per answer
    assert not [line for line in lines if line.startswith("HTTP Request:")]


async def test_a_hosted_provider_is_retried_after_a_rate_limit_as_it_asks(provider, tmp_path, sdk):
    """The retry policy (provider profile: hosted 2, local 0; LLM_MAX_RETRIES overrides): a 429
    and a 503 before any byte, each with Retry-After, then the answer."""
    provider.enqueue(
        Status(429, error_body("Rate limit reached"), headers={"Retry-After": "0"}),
        Status(503, {"detail": "overloaded"}, headers={"Retry-After": "0"}),
        text_reply("third time lucky"),
    )
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model", "LLM_MAX_RETRIES": "2"}
    _events, result = await run_chat(tmp_path, env, sdk)
    text = [p["text"] for p in content_parts(result["message"]) if p["type"] == "text"]
    assert result["errors"] == [] and text == ["third time lucky"]
    assert len(provider.requests) == 3


async def test_a_local_provider_is_not_retried(provider, tmp_path, sdk):
    provider.enqueue(Status(503, {"detail": "loading model"}), text_reply("never asked"))
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}  # 127.0.0.1
    _events, result = await run_chat(tmp_path, env, sdk)
    assert "failed with HTTP 503" in only_error(result)
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    ("base_url", "retries"),
    [
        ("https://api.openai.com/v1", 2),
        ("https://openrouter.ai/api/v1", 2),
        ("https://api.deepseek.com/v1", 2),  # generic, hosted
        ("http://127.0.0.1:11434/v1", 0),  # Ollama
        ("http://192.168.1.20:8000/v1", 0),  # generic, on the LAN (vLLM)
        ("http://vllm:8000/v1", 0),  # a container's name
        ("http://gpu-box.local:8000/v1", 0),
        ("http://[::1]:9000/v1", 0),
    ],
)
def test_retry_policy_by_profile_and_place(base_url, retries):
    assert ProviderSettings(base_url=base_url).retries == retries
    assert Provider(ProviderSettings(base_url=base_url)).client.max_retries == retries
    assert ProviderSettings(base_url=base_url, max_retries=5).retries == 5
