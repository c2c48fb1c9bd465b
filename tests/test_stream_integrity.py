"""What a provider sends back cannot corrupt the stream, leak the key, or leave the user
without a word: characters split across chunks, the key echoed in text, an empty or HTML
answer, the step limit, an internal failure after the response started."""

from __future__ import annotations

import itertools
import json
import logging
from pathlib import Path

import pytest
from comfyui_assistant.core.stream import ui_stream as ui
from comfyui_assistant.core.stream.redact import REDACTED, StreamCleaner, redact, valid_text
from comfyui_assistant.core.stream.sse import FAILED_TEXT, PumpOptions, StreamFailed, pump
from hypothesis import given
from hypothesis import strategies as st

from .conftest import start_app
from .helpers import chat_body, content_parts, sse_events, user
from .scripted_provider import (
    Raw,
    ScriptedProvider,
    Status,
    Stream,
    call_piece,
    chunk,
    error_body,
    text_reply,
)

KEY = "sk-live-ABCDEFGHIJ0123456789"


# --- the cleaner alone -------------------------------------------------------------------


@given(
    pieces=st.lists(
        st.one_of(st.text(max_size=8), st.just(KEY), st.sampled_from(["sk-", "\ud83d", "\ude00"])),
        max_size=8,
    ),
    cuts=st.lists(st.integers(0, 200), max_size=6),
)
def test_a_cleaned_stream_is_the_cleaned_text_however_it_is_cut(pieces, cuts):
    text = "".join(pieces)
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    cleaner = StreamCleaner([KEY])
    out = "".join(cleaner.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    out += cleaner.flush()
    assert out == valid_text(text).replace(KEY, REDACTED)
    assert KEY not in out
    out.encode("utf-8")  # always valid: a split pair joined, a lone half replaced


def test_redact_cleans_errors_and_keeps_ordinary_text():
    assert redact(f"bad key {KEY} (Bearer {KEY})", [KEY]) == (
        f"bad key {REDACTED} (Bearer {REDACTED})"
    )
    assert redact("a skill-based plan") == "a skill-based plan"


# --- through the server ------------------------------------------------------------------


@pytest.fixture
async def keyed(tmp_path: Path):
    provider = await ScriptedProvider(api_key=KEY, models=["scripted-model"]).start()
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_API_KEY": KEY,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "32768",
    }
    app = await start_app(tmp_path / "data", env)
    yield app, provider, tmp_path / "data" / "assistant.sqlite3"
    await app.close()
    await provider.stop()


async def _stored_text(app) -> str:
    async with app.session.get(app.base + "/api/assistant/threads/thread-1") as resp:
        return await resp.text()


async def test_a_character_split_across_chunks_arrives_whole(assistant, provider, sdk):
    provider.enqueue(text_reply("smile \ud83d", "\ude00 and a lone \ud83d", "!"))
    status, body = await assistant.chat(chat_body(user("hi")))
    assert status == 200 and body.endswith("data: [DONE]\n\n")
    result = sdk.check(body)
    assert content_parts(result["message"])[-1]["text"] == "smile 😀 and a lone \ufffd!"
    stored = json.loads(await _stored_text(assistant))["messages"][-1]
    assert content_parts(stored)[-1]["text"] == "smile 😀 and a lone \ufffd!"


async def test_the_key_never_comes_back_out(keyed, sdk, caplog):
    app, provider, database = keyed
    half = len(KEY) // 2
    provider.enqueue(
        Stream(
            [
                chunk(reasoning_content=f"the key is {KEY[:5]}"),
                chunk(reasoning_content=f"{KEY[5:]}."),
                chunk(f"Your key: {KEY[:half]}"),
                chunk(f"{KEY[half:]} — keep it safe."),
                chunk(finish_reason="stop"),
            ]
        ),
        Status(400, error_body(f"Incorrect API key provided: {KEY}")),
    )
    caplog.set_level(logging.DEBUG)
    _, body = await app.chat(chat_body(user("what is my key?")))
    result = sdk.check(body)
    assert content_parts(result["message"])[-1]["text"] == f"Your key: {REDACTED} — keep it safe."
    _, failed = await app.chat(chat_body(user("again", "u2")))
    errors = [e for e in sse_events(failed) if e["type"] == "error"]
    assert errors and REDACTED in errors[0]["errorText"]
    provider.models = [f"model-{KEY}"]
    async with app.session.post(app.base + "/api/assistant/provider/test", json={}) as resp:
        verdict = await resp.text()
    assert json.loads(verdict)["models"] == [f"model-{REDACTED}"]
    for seen in (body, failed, verdict, await _stored_text(app), caplog.text):
        assert KEY not in seen
    stored = database.read_bytes() + database.with_name(database.name + "-wal").read_bytes()
    assert KEY.encode() not in stored


@pytest.mark.parametrize(
    "reply",
    [
        Stream([], done=True),  # only [DONE]
        Stream(
            [Raw(b"<!doctype html><html><body>Welcome to nginx!</body></html>\n\n")], done=False
        ),
    ],
)
async def test_an_answer_without_events_is_a_readable_error(assistant, provider, sdk, reply):
    provider.enqueue(reply)
    _, body = await assistant.chat(chat_body(user("hi")))
    sdk.check(body)
    errors = [e["errorText"] for e in sse_events(body) if e["type"] == "error"]
    assert errors and "sent no completion" in errors[0] and "/v1" in errors[0]


async def test_the_step_limit_ends_with_words_that_say_so(provider, tmp_path, sdk):
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_MAX_TOOL_STEPS": "2",
    }
    add_node = call_piece(0, id="a1", name="addNode", arguments='{"type": "KSampler"}')
    provider.enqueue(
        Stream(
            [
                chunk(tool_calls=[call_piece(0, id="l1", name="listSystemSkills", arguments="{}")]),
                chunk(finish_reason="tool_calls"),
            ]
        ),
        Stream([chunk(tool_calls=[add_node]), chunk(finish_reason="tool_calls")]),
    )
    app = await start_app(tmp_path, env)
    try:
        _, body = await app.chat(chat_body(user("build it all")))
    finally:
        await app.close()
    result = sdk.check(body)
    assert result["autoResubmit"] is False
    parts = result["message"]["parts"]
    refused = [p for p in parts if p["type"] == "tool-addNode"]
    assert refused and refused[0]["errorText"].startswith("Not run: this answer reached its limit")
    last = content_parts(result["message"])[-1]["text"]
    assert last.startswith("I stopped here") and "addNode" in last and "continue" in last
    finish = [e for e in sse_events(body) if e["type"] == "finish"]
    assert finish[0]["finishReason"] == "stop"


async def test_a_failure_after_the_response_started_ends_the_stream_cleanly():
    """The source raises half-way: the client gets an error chunk and [DONE], never a second
    HTTP response written into the body."""

    async def source():
        yield ui.Start("msg_1")
        yield ui.TextStart("t")
        yield ui.TextDelta("t", "partial")
        raise RuntimeError("a bug")

    written: list[bytes] = []

    async def write(data: bytes) -> None:
        written.append(data)

    with pytest.raises(StreamFailed):
        await pump(source(), write, lambda: True, PumpOptions())
    body = b"".join(written).decode()
    events = sse_events(body)
    assert [e["type"] for e in events] == ["start", "text-start", "text-delta", "error"]
    assert json.loads(events[-1]["errorText"]) == {
        "error": FAILED_TEXT,
        "code": "stream.failed",
        "params": {},
    }
