"""Counting what the server really sees: a llama.cpp-like server's own counts (its /apply-template
and /tokenize) calibrate the per-component correction once, later requests are sized from it
without asking again, and a server that does not count leaves the learned estimate standing.

The scripted provider renders requests with a ChatML template (tools as indented JSON, or
dropped) and counts a token per word and punctuation mark: another tokenizer than ours, as a
local model's is."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from comfyui_assistant.core.provider import server_counts

from .helpers import (
    assistant_message,
    chat_body,
    context_report,
    sse_events,
    summary_text,
    user,
)
from .scripted_provider import Completion, Counted, ScriptedProvider

LLAMA_PROPS = {
    "default_generation_settings": {"n_ctx": 32768},
    "chat_template_caps": {"supports_tools": True},
}
COUNTING = ("/apply-template", "/tokenize")


pytestmark = pytest.mark.usefixtures("fresh_probes")  # (conftest: no cached probe or count)


def asked(provider: ScriptedProvider) -> list[str]:
    """The counting requests the server got, in order."""
    return [path for _, path, _ in provider.seen if path in COUNTING]


def turns(n: int) -> Iterator[list[dict[str, Any]]]:
    """A thread growing by a user message (longer each time) and an answer per turn."""
    thread: list[dict[str, Any]] = []
    for i in range(n):
        words = " ".join(f"step{k} uses seed {k * 7} and cfg 7.5," for k in range(20 * (i + 1)))
        thread.append(user(f"Turn {i}: {words}", f"u{i}"))
        yield thread
        thread.append(assistant_message("ok", f"a{i}"))


async def reports_of(assistant: Any, provider: ScriptedProvider, n: int) -> list[dict[str, Any]]:
    """The context reports of `n` turns of a growing thread, each answered with usage as the
    server counts the request."""
    reports = []
    for thread in turns(n):
        provider.enqueue(Counted("ok"))
        status, body = await assistant.chat(chat_body(*thread))
        assert status == 200
        reports.append(context_report(body))
    return reports


def off_by(report: dict[str, Any]) -> float:
    """How far our estimate of a request was from the server's own count of it."""
    return abs(report["estimated"] - report["reported"]) / report["reported"]


async def test_the_servers_own_counts_calibrate_once_and_size_every_later_request(
    assistant, provider
):
    provider.props, provider.counts = LLAMA_PROPS, True
    reports = await reports_of(assistant, provider, 3)
    # once: the first request whole, without its tools, without its system message, each
    # rendered and tokenized; no network call per request after that
    assert sorted(asked(provider)) == sorted([*COUNTING] * 3)
    for report in reports:
        assert report["calibration"] == server_counts.SOURCE
        assert off_by(report) < 0.03, report
    # the server's template prints the tool schemas indented: more than their compact JSON
    factors = reports[-1]["factors"]
    assert factors["tools"] > factors["system"] + 0.2


async def test_the_response_starts_before_the_server_has_counted(assistant, provider):
    # the calibration's round trips come after the first byte (a busy local server answers
    # slowly); the first model request still has the calibrated factors
    provider.props, provider.counts, provider.counts_delay = LLAMA_PROPS, True, 0.4
    provider.enqueue(Counted("ok"))
    # (the node data loads on the first use: not what this measures)
    async with assistant.session.get(assistant.base + "/api/assistant/environment/summary") as r:
        assert r.status == 200
    started = time.monotonic()
    async with await assistant.post(
        "/api/assistant/chat", chat_body(user("Hello there.", "u0"))
    ) as r:
        first_byte = time.monotonic() - started
        body = await r.text()
    # the server's counts (0.4 s: asked at once) were waited for after the first byte
    assert first_byte + 0.35 < time.monotonic() - started
    assert context_report(body)["calibration"] == server_counts.SOURCE


async def test_a_server_that_drops_the_tools_counts_them_as_nothing_and_messages_stay_right(
    assistant, provider
):
    # its /props says nothing of tools; its template drops them silently
    provider.props = {"default_generation_settings": {"n_ctx": 32768}}
    provider.counts, provider.renders_tools = True, False
    reports = await reports_of(assistant, provider, 4)
    assert "tools" in provider.requests[0]  # (sent: the server drops them)
    for report in reports:
        assert report["factors"]["tools"] == 0.0
        assert report["tokens"]["tools"] == 0
        assert off_by(report) < 0.03, report
    # the usage totals of the growing thread leave the message factor where the server's
    # counts put it (one factor for the whole request would have fallen by the tools' share)
    messages = [r["factors"]["messages"] for r in reports]
    assert max(messages) - min(messages) < 0.05, messages
    whole = reports[-1]["reported"] / reports[-1]["exact"]
    assert messages[-1] > whole + 0.2


async def test_a_server_that_does_not_count_is_asked_once_and_the_estimate_stands(
    assistant, provider
):
    provider.props = LLAMA_PROPS  # llama.cpp-like, but without /apply-template and /tokenize
    reports = await reports_of(assistant, provider, 2)
    for _ in range(100):  # the attempt runs beside the answer: on a loaded machine it may end last
        if asked(provider):
            break
        await asyncio.sleep(0.05)
    assert asked(provider) == ["/apply-template"] * len(asked(provider))
    assert 1 <= len(asked(provider)) <= 3  # one attempt (its variants at once), not per request
    assert [r["calibration"] for r in reports] == [None, None]
    # the first request's usage taught the second
    assert reports[0]["factors"] == {"system": 1.0, "tools": 1.0, "messages": 1.0}
    assert reports[1]["factors"] != reports[0]["factors"]
    assert off_by(reports[1]) < off_by(reports[0])


async def test_a_request_near_the_limit_is_counted_by_the_server_and_fits(provider, tmp_path):
    # the learned factor is an average; a pasted text whose tokenizer ratio is far above it
    # (here 1.9 against prose's ~1.2) would overflow the window. A request near the limit is
    # counted by the server first (no calibration due: the first turn just did it): the
    # request sent leaves out more of the older turns, and fits as the server counts it.
    from .conftest import start_app

    provider.props = {**LLAMA_PROPS, "default_generation_settings": {"n_ctx": 4096}}
    provider.counts = True
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "4096"}
    app = await start_app(tmp_path / "data", env)
    try:
        prose = "we keep the warm palette and the slow push-in for the lighthouse shot, " * 4
        thread: list[dict[str, Any]] = []
        for i in range(8):
            thread += [user(f"Turn {i}: {prose}", f"u{i}"), assistant_message("Noted.", f"a{i}")]
        provider.enqueue(Counted("ok"), Counted("ok"))
        _, body = await app.chat(chat_body(*thread[:-1]))
        report = context_report(body)
        calibrated = len(asked(provider))
        free = report["budget"] - report["tokens"]["system"] - report["tokens"]["history"]
        paste = "Log: " + "a-b-c-d-e-f-g " * int(free / 8.5)  # ~all that is left, to us
        thread.append(user(paste, "u9"))
        # (room is made by a summary of the older turns, made before the request)
        provider.summaries.append(Completion(summary_text("the lighthouse shot")))
        status, body = await app.chat(chat_body(*thread))
        errors = [e["errorText"] for e in sse_events(body) if e["type"] == "error"]
        assert status == 200 and not errors, errors
        assert len(asked(provider)) > calibrated  # counted again: near the limit
        after = context_report(body)
        assert after["factors"]["messages"] > report["factors"]["messages"] + 0.2
        assert after["counts"]["dropped"] + after["counts"]["summarized"] > 0
        # as the server counts what was sent: it fits beside the answer's reserve
        assert provider.prompt_tokens(provider.requests[-1]) <= 4096 - report["tokens"]["reserve"]
    finally:
        await app.close()


async def test_a_usage_without_the_tools_never_sends_a_request_over_the_window(provider, tmp_path):
    """A provider whose usage leaves the tool definitions out teaches a tools factor near 0
    (seen: 0.035; requests then went over an 8K window by the tools' size). The learned factors
    are applied with our exact count as the floor: every request fits as we count it."""
    from comfyui_assistant.core.tokens.tokens import counter_for

    from .conftest import start_app

    provider.renders_tools = False  # its usage counts no tools; nothing says so
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "8192",
        "LLM_HISTORY_SUMMARIZE": "0",
    }
    app = await start_app(tmp_path / "data", env)
    counter = counter_for("scripted-model")
    try:
        factors = None
        for thread in turns(9):
            provider.enqueue(Counted("ok"))
            status, body = await app.chat(chat_body(*thread))
            assert status == 200
            factors = context_report(body)["factors"]
    finally:
        await app.close()
    assert factors is not None and factors["tools"] < 0.3  # what it learned
    sent = [r for r in provider.requests if r.get("tools")]
    assert len(sent) == 9
    for request in sent:
        exact = counter.messages(request["messages"]) + counter.tools(request["tools"])
        assert exact <= 8192 - request["max_tokens"], (exact, request["max_tokens"])


async def test_a_chinese_chat_calibrated_by_the_server_uses_the_window_the_server_counts(
    provider, tmp_path
):
    # A tokenizer with a large vocabulary counts Chinese (or Arabic, Japanese) at a fraction of
    # what ours does. Once the server's own counts calibrated the correction, the messages'
    # factor below 1 is trusted: the request keeps the older turns that fit as the server
    # counts them (with our count as the floor it kept a fraction), and still fits.
    from .conftest import start_app

    prose = "我们保留暖色调和缓慢推进的镜头，灯塔在黄昏时亮起，海浪拍打着岩石，远处有一艘小船。"
    thread: list[dict[str, Any]] = []
    for i in range(30):
        thread += [user(f"第{i}轮：{prose * 2}", f"u{i}"), assistant_message("好的。", f"a{i}")]
    thread = thread[:-1]
    provider.props = {**LLAMA_PROPS, "default_generation_settings": {"n_ctx": 4096}}
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "m",
        "LLM_CONTEXT_WINDOW": "4096",
        "LLM_HISTORY_SUMMARIZE": "0",
    }
    kept = {}
    for counts in (False, True):
        provider.counts = counts
        app = await start_app(tmp_path / f"data-{counts}", env)
        try:
            provider.enqueue(Counted("好的。"))
            status, body = await app.chat(chat_body(*thread))
            errors = [e["errorText"] for e in sse_events(body) if e["type"] == "error"]
            assert status == 200 and not errors, errors
            report = context_report(body)
            kept[counts] = len(provider.requests[-1]["messages"])
            sent = provider.requests[-1]
            assert provider.prompt_tokens(sent) <= 4096 - sent["max_tokens"]
        finally:
            await app.close()
    assert report["factors"]["messages"] < 0.5  # what the server's counts taught
    # the whole thread (59 messages and the system message) against its newest 32 of 59 (the
    # small profile's tools grew by the two template tools)
    assert kept == {False: 33, True: 60}, kept
