"""Errors keep their owner. A provider's failure is told as the provider's, with what to do; a
bug of ours (in a context stage, in a server tool) is logged with its traceback and told as a
bug in the assistant, never as the provider failing; an answer that could not be saved is
logged with its traceback and, when it is stored nowhere, told before the stream ends. Real
app, scripted provider over a socket, real SQLite, the real AI SDK parser; never the key."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.context import context_engine
from comfyui_assistant.core.store.store import DB_NAME
from comfyui_assistant.core.tools import tool_registry

from .conftest import App, start_app
from .helpers import chat_body, error_said, sse_events, types, user
from .scripted_provider import Pause, Raw, ScriptedProvider, Status, Stream, call_piece, chunk

SECRET = "sk-test-0123456789abcdefSECRET"
BUG = "this is a bug in the assistant: the log has the details"


def env(provider: ScriptedProvider) -> dict[str, str]:
    return {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "32768",
        "LLM_API_KEY": SECRET,
    }


@pytest.fixture
async def app(provider: ScriptedProvider, tmp_path: Path) -> Any:
    app = await start_app(tmp_path / "data", env(provider))
    yield app
    await app.close()


async def chat(app: App, sdk: Any, caplog: Any, text: str = "hi") -> tuple[list[Any], Any]:
    """One turn: its events and what the AI SDK client made of it (no key anywhere)."""
    with caplog.at_level(logging.DEBUG):
        status, body = await app.chat(chat_body(user(text)))
    assert status == 200
    assert SECRET not in body and SECRET not in caplog.text
    return sse_events(body), sdk.check(body)


def logged(caplog: Any, message: str) -> logging.LogRecord:
    """The one record logged with `message`; it carries its traceback."""
    (record,) = [r for r in caplog.records if r.getMessage() == message]
    assert record.levelno == logging.ERROR and record.exc_info is not None
    return record


async def open_store(app: App) -> None:
    async with app.session.get(f"{app.base}/api/assistant/threads") as resp:
        assert resp.status == 200 and (await resp.json())["threads"] == []


async def stored(app: App, thread: str = "thread-1") -> list[dict[str, Any]]:
    async with app.session.get(f"{app.base}/api/assistant/threads/{thread}") as resp:
        assert resp.status == 200
        messages: list[dict[str, Any]] = (await resp.json())["messages"]
        return messages


async def test_a_bug_in_a_context_stage_is_ours_logged_with_its_traceback(
    app, provider, sdk, caplog, monkeypatch
):
    def project_documents(assembly: Any) -> None:
        raise RuntimeError("a stage with a bug")

    stages = tuple(
        project_documents if s.__name__ == "project_documents" else s for s in context_engine.STAGES
    )
    monkeypatch.setattr(context_engine, "STAGES", stages)
    events, result = await chat(app, sdk, caplog)
    assert types(events) == ["start", "error"]
    assert [error_said(e) for e in result["errors"]] == [
        f"The answer stopped on an error of ours (RuntimeError) — {BUG}."
    ]
    assert "failed unexpectedly" not in caplog.text and provider.requests == []
    record = logged(caplog, "a chat turn failed on a bug of ours")
    assert record.exc_info is not None and str(record.exc_info[1]) == "a stage with a bug"
    assert "Traceback" in caplog.text and "in project_documents" in caplog.text


async def test_a_bug_in_a_server_tool_is_ours_and_the_answer_so_far_is_kept(
    app, provider, sdk, caplog, monkeypatch
):
    async def node_definition(args: dict[str, Any], ctx: Any) -> Any:
        raise RuntimeError("a tool with a bug")

    spec = tool_registry.get_tool("getNodeDefinition")
    assert spec is not None
    broken = replace(spec, handler=node_definition)
    monkeypatch.setitem(tool_registry._BY_NAME, "getNodeDefinition", broken)
    args = '{"nodeType": "KSampler"}'
    call = call_piece(0, id="c1", name="getNodeDefinition", arguments=args)
    provider.enqueue(
        Stream(
            [chunk("Let me look. "), chunk(tool_calls=[call]), chunk(finish_reason="tool_calls")]
        )
    )
    events, result = await chat(app, sdk, caplog)
    assert [error_said(e) for e in result["errors"]] == [
        f"The answer stopped on an error of ours (RuntimeError) — {BUG}."
    ]
    assert types(events)[-1] == "error" and "finish" not in types(events)
    assert len(provider.requests) == 1  # (the model is not asked again)
    text = [p for p in result["message"]["parts"] if p["type"] == "text"]
    assert [p["text"] for p in text] == ["Let me look. "]
    record = logged(caplog, "a chat turn failed on a bug of ours")
    assert record.exc_info is not None and str(record.exc_info[1]) == "a tool with a bug"
    assert "in node_definition" in caplog.text
    # what the client was shown is stored, as interrupted
    answer = (await stored(app))[-1]
    assert answer["role"] == "assistant" and answer["metadata"]["status"] == "interrupted"
    assert [p["text"] for p in answer["parts"] if p["type"] == "text"] == ["Let me look. "]


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (
            Status(500, {"error": {"message": "out of memory"}}),
            "The provider failed with HTTP 500 (out of memory) — try again; if it keeps "
            "failing, look at the server's log.",
        ),
        (
            Stream([chunk("Partial"), Raw(b"data: {not json\n\n")], done=False),
            "The provider sent a malformed stream chunk that is not JSON — the answer stopped "
            "there; try again, and if it repeats, check that the base URL points at an "
            "OpenAI-compatible /v1 endpoint.",
        ),
    ],
    ids=["an HTTP error", "bytes the client cannot decode"],
)
async def test_a_provider_error_is_still_the_providers(app, provider, sdk, caplog, reply, said):
    provider.enqueue(reply)
    events, result = await chat(app, sdk, caplog)
    assert [error_said(e) for e in result["errors"]] == [said]
    assert types(events)[-1] == "error"
    assert BUG not in caplog.text and "bug of ours" not in caplog.text


def refuse_answers(data: Path, when: str = "NEW.role = 'assistant'") -> None:
    """The database refuses to store an answer (a trigger in the real SQLite file)."""
    with closing(sqlite3.connect(data / DB_NAME)) as db:
        for event in ("INSERT", "UPDATE"):
            db.execute(
                f"CREATE TRIGGER refuse_{event.lower()} BEFORE {event} ON messages "
                f"WHEN {when} BEGIN SELECT RAISE(ABORT, 'answers refused'); END"
            )
        db.commit()


async def test_an_answer_stored_nowhere_is_said_before_the_stream_ends(
    app, provider, sdk, caplog, tmp_path
):
    await open_store(app)
    refuse_answers(tmp_path / "data")
    provider.enqueue(Stream([chunk("Hello "), chunk("there."), chunk(finish_reason="stop")]))
    events, result = await chat(app, sdk, caplog)
    assert types(events)[-2:] == ["finish", "error"]
    assert [error_said(e) for e in result["errors"]] == [
        "This answer could not be saved (IntegrityError), so it is not in the thread: copy what "
        "you need from it before you reload; the log has the details."
    ]
    text = [p["text"] for p in result["message"]["parts"] if p["type"] == "text"]
    assert text == ["Hello there."]
    record = logged(caplog, "saving the answer failed")
    assert record.exc_info is not None and str(record.exc_info[1]) == "answers refused"
    assert [m["role"] for m in await stored(app)] == ["user"]  # (true: it is stored nowhere)


async def test_an_answer_a_partial_save_holds_is_not_said_lost(
    app, provider, sdk, caplog, tmp_path
):
    await open_store(app)
    refuse_answers(tmp_path / "data", "NEW.role = 'assistant' AND NEW.status = 'complete'")
    provider.enqueue(Stream([chunk("Hello there."), Pause(0.5), chunk(finish_reason="stop")]))
    events, result = await chat(app, sdk, caplog)
    assert result["errors"] == [] and types(events)[-1] == "finish"
    logged(caplog, "saving the answer failed")
    answer = (await stored(app))[-1]  # the partial save, as it streamed
    assert [p["text"] for p in answer["parts"] if p["type"] == "text"] == ["Hello there."]
    assert answer["metadata"]["status"] == "streaming"
