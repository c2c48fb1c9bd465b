"""Coded errors: the server's table of codes (core/base/error_codes.py) and the panel's
`error.<code>` messages agree, and a route or a stream sends the code and its parameters beside
the English text."""

from __future__ import annotations

import base64
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.base.error_codes import ERRORS, WORDS, coded, placeholders
from comfyui_assistant.core.provider.provider_profiles import PROFILES, ProviderKind

from .conftest import start_app
from .helpers import assistant_message, chat_body, sse_events, user
from .scripted_provider import Status, error_body, text_reply

MESSAGES = Path(__file__).parent.parent / "ui" / "src" / "i18n" / "messages.ts"
ENTRY = re.compile(r'^\s*"(error\.[^"]+)":\s*("(?:[^"\\]|\\.)*"),?\s*$', re.MULTILINE)
SECRET = "sk-test-0123456789abcdefSECRET"


def panel_errors() -> dict[str, str]:
    """The `error.*` keys of the panel's English table and their texts."""
    return {key: json.loads(text) for key, text in ENTRY.findall(MESSAGES.read_text("utf-8"))}


def test_every_code_has_the_panels_message_with_the_same_english_text():
    panel = panel_errors()
    ours = {f"error.{code}": text for code, text in ERRORS.items()}
    ours |= {f"error.word.{key}": word for key, word in WORDS.items()}
    assert sorted(panel) == sorted(ours)  # none missing, none stale
    for key, text in ours.items():
        assert panel[key] == text, key
        assert placeholders(text) == set(re.findall(r"\{(\w+)\}", text)), key


def test_a_provider_named_in_words_is_one_the_panel_translates():
    worded = [p for p in PROFILES.values() if p.name.startswith("The ")]  # not a product name
    assert {p.kind for p in worded} == {ProviderKind.GENERIC, ProviderKind.LLAMA_CPP}
    for profile in worded:
        assert {profile.name, profile.subject} <= set(WORDS.values()), profile.kind


def test_a_code_takes_exactly_its_placeholders():
    assert str(coded("not_found.thread", thread="t1")) == "thread t1 does not exist"
    with pytest.raises(ValueError, match="takes"):
        coded("not_found.thread")
    with pytest.raises(ValueError, match="takes"):
        coded("not_found.thread", thread="t1", key="sk-x")


async def answer(app, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with app.session.request(method, app.base + path, json=body) as resp:
        return resp.status, await resp.json()


async def test_routes_send_the_code_and_parameters_beside_the_english_text(assistant):
    assert await answer(assistant, "GET", "/api/assistant/threads/nope") == (
        404,
        {
            "error": "thread nope does not exist",
            "code": "not_found.thread",
            "params": {"thread": "nope"},
        },
    )
    empty = {"thread": "t1", "name": "notes.txt", "data": base64.b64encode(b"").decode()}
    assert await answer(assistant, "POST", "/api/assistant/attachments", empty) == (
        400,
        {
            "error": "notes.txt is empty",
            "code": "attachment.empty",
            "params": {"name": "notes.txt"},
        },
    )
    pdf = {**empty, "name": "paper.pdf", "data": base64.b64encode(b"%PDF-1.7 ...").decode()}
    status, body = await answer(assistant, "POST", "/api/assistant/attachments", pdf)
    assert (status, body["code"], body["params"]) == (
        415,
        "attachment.binary_kind",
        {"name": "paper.pdf", "kind": "PDF"},
    )
    assert body["error"].startswith("paper.pdf is a PDF, which cannot be attached: attach images")
    assert await answer(assistant, "PUT", "/api/assistant/provider", {"timeoutSeconds": 0}) == (
        400,
        {
            "error": "timeoutSeconds must be between 1 and 3600 (got 0)",
            "code": "settings.out_of_range",
            "params": {"key": "timeoutSeconds", "low": "1", "high": "3600", "value": "0"},
        },
    )
    assert (await answer(assistant, "POST", "/api/assistant/projects", {"name": "P"}))[0] == 201
    assert await answer(assistant, "POST", "/api/assistant/projects", {"name": "P"}) == (
        409,
        {
            "error": "a project named 'P' exists already",
            "code": "project.exists",
            "params": {"name": "P"},
        },
    )


async def test_a_developers_mistake_keeps_the_plain_shape(assistant):
    status, body = await answer(assistant, "POST", "/api/assistant/projects", ["not", "an object"])
    assert status == 400 and body == {"error": 'send {"name": "<project name>"}'}


async def test_a_provider_failure_ends_the_stream_with_the_code_and_parameters(provider, tmp_path):
    provider.enqueue(Status(429, error_body(f"Rate limit reached for {SECRET}")))
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_API_KEY": SECRET}
    app = await start_app(tmp_path / "data", env)
    try:
        status, body = await app.chat(chat_body(user("hi")))
    finally:
        await app.close()
    assert status == 200 and SECRET not in body
    (error,) = [e["errorText"] for e in sse_events(body) if e["type"] == "error"]
    said = json.loads(error)
    assert said["code"] == "provider.rate_limit"
    assert said["params"] == {"name": "The provider", "detail": "Rate limit reached for [redacted]"}
    assert said["error"] == str(coded("provider.rate_limit", **said["params"]))
    assert said["error"].startswith("The provider is rate-limiting requests (HTTP 429: Rate")


async def test_compact_says_why_the_provider_cannot_be_reached_with_the_code(provider, tmp_path):
    app = await start_app(tmp_path / "data", {"LLM_BASE_URL": provider.base_url})
    try:
        provider.enqueue(text_reply("noted"))
        history = [user("first", "u1"), assistant_message("the first answer")]
        status, _ = await app.chat(chat_body(*history, user("second", "u2"), id="t1"))
        assert status == 200
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            gone = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        assert (await answer(app, "PUT", "/api/assistant/provider", {"baseUrl": gone}))[0] == 200
        status, body = await answer(app, "POST", "/api/assistant/threads/t1/compact", {})
    finally:
        await app.close()
    assert (status, body.get("code"), body.get("params")) == (
        502,
        "provider.unreachable",
        {"name": "The provider", "url": gone},
    )
    assert body["error"] == str(coded("provider.unreachable", name="The provider", url=gone))
