"""Compaction only as deep as needed (issue 36, item 2), through /api/assistant/chat with the
real summarizer: a thread that fits is never summarized, sent at once or grown turn by turn;
one that overflows by N tokens has about N freed (the overflow and the stated margin, 10% of
the history's room), not ten times that. Long and short messages mixed."""

from __future__ import annotations

from typing import Any

import pytest
from comfyui_assistant.core.base.ui_messages import to_openai_messages
from comfyui_assistant.core.context.context_stages import SUMMARY_FLOOR
from comfyui_assistant.core.context.context_steps import SUMMARY_OPEN
from comfyui_assistant.core.provider.budget import Window, compute_budget
from comfyui_assistant.core.tokens.tokens import counter_for

from .conftest import start_app
from .helpers import assistant_message, chat_body, context_report, summary_text, user
from .scripted_provider import Completion, Status, error_body, text_reply
from .test_context_e2e import env_for, summaries_done

WINDOW = 8192
COUNTER = counter_for("scripted-model")
TOPICS = ("lighthouse", "forest", "harbor", "portrait", "city", "desert", "garden", "glacier")


def said(i: int) -> tuple[str, str]:
    """Exchange `i`: short and long messages mixed (a long one every third exchange, a
    paragraph of 250-400 tokens on either side)."""
    topic = TOPICS[i % len(TOPICS)]
    long = (
        f"For the {topic} render we used seed {1000 + i}, {20 + i % 9} steps, cfg {5 + i % 4}. "
        + f"The {topic} looked softer at dusk and the colours of scene {i} held up well. " * 12
    )
    if i % 3 == 1:
        return long, "Noted."
    if i % 3 == 2:
        return f"How did the {topic} one turn out?", long
    return f"Thanks, the {topic} picture {i} works.", f"Glad the {topic} {i} works."


def exchanges(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        question, answer = said(i)
        out += [user(question, f"u{i}"), assistant_message(answer, f"a{i}")]
    return out


# the model's summary, or the deterministic digest standing in for a failed one (it fills the
# room it is given: a summary sized to its cap whatever it covers took ten times the overflow)
SUMMARIES = pytest.mark.parametrize(
    "summary",
    [Completion(summary_text("renders")), Status(500, error_body("down"))],
    ids=["model", "digest"],
)


def request_tokens(body: dict[str, Any]) -> int:
    """A request as the engine counts it: its messages (with the reply priming), its tools."""
    return COUNTER.messages(body["messages"]) + COUNTER.tools(body.get("tools") or [])


def limit_of(body: dict[str, Any]) -> tuple[int, int]:
    """What a request may take in an 8K window (less the answer's reserve and the margin),
    and the history's room in it (less the system message and the reply priming)."""
    budget = compute_budget(Window(WINDOW, "settings", "S"), None, 0)
    limit = WINDOW - budget.reserve - budget.margin
    room = limit - COUNTER.tools(body["tools"]) - COUNTER.message(body["messages"][0]) - 3
    return limit, room


def summary_requests(provider: Any) -> list[dict[str, Any]]:
    return [r for r in provider.requests if not r.get("stream")]


def chats(provider: Any) -> list[dict[str, Any]]:
    return [r for r in provider.requests if r.get("stream")]


def plain(messages: list[dict[str, Any]]) -> list[str]:
    """The texts of a request's history, without the reminder blocks."""
    return [str(m["content"]).split("\n\n<system-reminder>")[0] for m in messages[1:]]


def texts(thread: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in to_openai_messages(thread)]


async def grow(app: Any, provider: Any, thread: list[dict[str, Any]], until: int) -> None:
    """Turn by turn: each exchange's user message posted with the thread so far, the
    scripted answer appended as the panel resends it, until the request takes `until`."""
    i = len(thread) // 2
    while True:
        question, answer = said(i)
        provider.enqueue(text_reply(answer))
        thread.append(user(question, f"u{i}"))
        status, body = await app.chat(chat_body(*thread))
        assert status == 200, body
        await summaries_done(app)
        thread.append(assistant_message(answer, f"a{i}"))
        request = chats(provider)[-1]
        # it fits: every message sent whole, in order, no summary, nothing left out
        assert plain(request["messages"]) == texts(thread[:-1])
        assert not request["messages"][1]["content"].startswith(SUMMARY_OPEN)
        assert context_report(body)["counts"]["dropped"] == 0
        if request_tokens(request) + 2 * COUNTER.text(said(i + 1)[0] + said(i + 1)[1]) > until:
            return
        i += 1


def check_depth(before: dict[str, Any], after: dict[str, Any], covered: int) -> None:
    """`after` (the request with the new summary) fits, and leaves free at most the margin
    and one message more: the summary freed about the overflow, no more. `before`: the
    request that sent the covered messages whole (the size they were sent at)."""
    limit, room = limit_of(after)
    margin = room // 10  # 1 - LLM_HISTORY_LOW_WATERMARK of the history's room
    biggest = max(COUNTER.message(m) for m in before["messages"][1:])
    slack = limit - request_tokens(after)
    assert 0 <= slack <= margin + biggest, (slack, margin, biggest)
    # what the summary covers: about 4/3 of what it frees (it takes a quarter), no more
    sent = sum(COUNTER.message(m) for m in before["messages"][1 : 1 + covered])
    freed = sent - (
        COUNTER.message(after["messages"][1]) - COUNTER.message(before["messages"][1 + covered])
    )
    overflow = request_tokens(after) + freed - limit
    assert overflow > 0  # (it did not fit whole)
    assert sent <= 4 * (overflow + margin) // 3 + biggest + SUMMARY_FLOOR, (sent, overflow)


async def test_a_thread_that_fits_sent_at_once_is_sent_whole_without_a_summary(provider, tmp_path):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW=str(WINDOW)))
    provider.summaries.append(Completion(summary_text("renders")))
    try:
        # the largest prefix of the conversation (ending on a question) that fits
        provider.enqueue(text_reply("ok"))
        await app.chat({**chat_body(user("hi", "p")), "id": "probe"})
        limit, _ = limit_of(chats(provider)[0])
        fixed = request_tokens(chats(provider)[0]) - COUNTER.message(user_message("hi"))
        n = 1
        while fixed + history_tokens(exchanges(n + 1)[:-1]) + 40 <= limit:
            n += 1
        thread = exchanges(n)[:-1]
        provider.enqueue(text_reply("Here it is."))
        status, body = await app.chat(chat_body(*thread))
        assert status == 200
        await summaries_done(app)
        request = chats(provider)[-1]
        assert limit - request_tokens(request) < 600  # (nearly full: the case that matters)
        assert plain(request["messages"]) == texts(thread)
        # nothing summarized (one may be prepared ahead for the next turns, not used)
        async with app.session.get(app.base + "/api/assistant/threads/thread-1/summary") as r:
            assert (await r.json())["summary"] is None
        report = context_report(body)
        assert report["summary"] is None and report["counts"]["dropped"] == 0
    finally:
        await app.close()


@SUMMARIES
async def test_a_thread_that_overflows_sent_at_once_has_about_the_overflow_freed(
    provider, tmp_path, summary
):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW=str(WINDOW)))
    provider.summaries.append(summary)
    try:
        # the largest prefix that fits, sent whole first (on a thread of its own) ...
        provider.enqueue(text_reply("ok"))
        await app.chat({**chat_body(user("hi", "p")), "id": "probe"})
        limit, _ = limit_of(chats(provider)[0])
        fixed = request_tokens(chats(provider)[0]) - COUNTER.message(user_message("hi"))
        n = 1
        while fixed + history_tokens(exchanges(n + 1)[:-1]) + 40 <= limit:
            n += 1
        fitting = exchanges(n)[:-1]
        provider.enqueue(text_reply("ok"))
        await app.chat({**chat_body(*fitting), "id": "whole"})
        before = chats(provider)[-1]
        assert plain(before["messages"]) == texts(fitting)
        # ... then with its answer and a long paste: over by about a thousand tokens
        paste = user("Here is the log: " + "error at step 12; " * 160, "u_paste")
        thread = [*fitting, assistant_message("Noted.", "a_x"), paste]
        provider.enqueue(text_reply("Read it."))
        status, body = await app.chat(chat_body(*thread))
        assert status == 200
        await summaries_done(app)
        after = chats(provider)[-1]
        report = context_report(body)
        assert report["counts"]["dropped"] == 0 and report["summary"] is not None
        assert len(summary_requests(provider)) >= 1
        assert report["summary"]["fallback"] is isinstance(summary, Status)
        covered = report["counts"]["summarized"]
        assert plain(after["messages"])[1:] == texts(thread)[covered + 1 :]
        check_depth(before, after, covered)
    finally:
        await app.close()


@SUMMARIES
async def test_grown_turn_by_turn_what_fits_is_never_summarized_and_an_overflow_frees_about_itself(
    provider, tmp_path, summary
):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW=str(WINDOW)))
    provider.summaries.append(summary)
    try:
        thread: list[dict[str, Any]] = []
        provider.enqueue(text_reply("ok"))
        await app.chat({**chat_body(user("hi", "p")), "id": "probe"})
        limit, _ = limit_of(chats(provider)[0])
        await grow(app, provider, thread, limit)  # (each turn checked: whole, no summary)
        before = chats(provider)[-1]
        paste = user("Here is the log: " + "error at step 12; " * 160, "u_paste")
        thread.append(paste)
        provider.enqueue(text_reply("Read it."))
        status, body = await app.chat(chat_body(*thread))
        assert status == 200
        await summaries_done(app)
        after = chats(provider)[-1]
        report = context_report(body)
        assert report["counts"]["dropped"] == 0 and report["summary"] is not None
        covered = report["counts"]["summarized"]
        check_depth(before, after, covered)
    finally:
        await app.close()


def user_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def history_tokens(thread: list[dict[str, Any]]) -> int:
    return sum(COUNTER.message(m) for m in to_openai_messages(thread))
