"""build_context as a whole, with whole expected outputs: the assembled messages, the report,
compaction plans, summaries, the persona, the system prompt's cut, the budget error, the learned
correction, the message cap, oversized results and batched digests."""

from __future__ import annotations

import gc
import json
import math
import weakref
from typing import Any

import pytest
from comfyui_assistant.core.base.ui_messages import to_openai_messages, tool_result_text
from comfyui_assistant.core.context import context_steps as steps
from comfyui_assistant.core.context.context_blocks import Block
from comfyui_assistant.core.context.context_cache import BlockCache
from comfyui_assistant.core.context.context_engine import (
    Assembled,
    ContextInputs,
    ContextSettings,
    Summary,
    build_context,
)
from comfyui_assistant.core.context.context_stages import (
    SUMMARY_FLOOR,
    SUMMARY_LIMIT_SHARE,
    SUMMARY_SHARE,
    covered_needed,
    summary_allowance,
    summary_cap,
)
from comfyui_assistant.core.context.context_steps import (
    SUMMARY_CLOSE,
    SUMMARY_OPEN,
    compaction_plan,
)
from comfyui_assistant.core.context.context_validate import problems
from comfyui_assistant.core.provider.budget import ContextBudgetError, Window, compute_budget
from comfyui_assistant.core.store.sent_turns import SentTurn, turn_note
from comfyui_assistant.core.tokens.token_correction import Factors
from comfyui_assistant.core.tokens.tokens import REPLY_PRIMING, TokenCounter, counter_for
from comfyui_assistant.tools_definitions import openai_tools
from hypothesis import given, settings
from hypothesis import strategies as st

MODEL = "gpt-4"  # counted with cl100k_base, exactly
COUNTER = counter_for(MODEL)
NOW = "2026-11-22 10:00 UTC"
SYSTEM = "You are ComfyUI Assistant."
REMINDER = turn_note([], NOW)
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


# --- builders ---------------------------------------------------------------------------------


def user(text: str, id: str, image: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if image:
        parts.append({"type": "file", "mediaType": "image/png", "url": image})
    return {"id": id, "role": "user", "parts": parts}


def assistant(text: str, id: str) -> dict[str, Any]:
    return {"id": id, "role": "assistant", "parts": [{"type": "step-start"}, text_part(text)]}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_part(
    call_id: str, name: str = "getWorkflow", output: Any = None, **input: Any
) -> dict[str, Any]:
    return {
        "type": f"tool-{name}",
        "toolCallId": call_id,
        "state": "output-available",
        "input": input or {"detail": "compact"},
        "output": {"nodes": [{"id": 1, "type": "KSampler"}]} if output is None else output,
    }


def tool_turn(id: str, call_id: str, text: str = "Done.", output: Any = None) -> dict[str, Any]:
    """An assistant message with one tool round, then text."""
    parts = [{"type": "step-start"}, tool_part(call_id, output=output)]
    parts += [{"type": "step-start"}, text_part(text)]
    return {"id": id, "role": "assistant", "parts": parts}


def chat(turns: int, words: int = 5) -> list[dict[str, Any]]:
    """`turns` question/answer pairs of about `words` words each, then the latest question."""
    ui: list[dict[str, Any]] = []
    for i in range(turns):
        ui.append(user(f"Question {i}: " + "tell me about samplers " * words, f"u{i}"))
        ui.append(assistant(f"Answer {i}: " + "the euler sampler is fast " * words, f"a{i}"))
    ui.append(user("And the latest question?", f"u{turns}"))
    return ui


def inputs(ui: list[dict[str, Any]], window: int = 32_000, **kw: Any) -> ContextInputs:
    kw.setdefault("system", SYSTEM)
    kw.setdefault("tools", [])
    reminders = kw.pop("reminders", [])
    if "sent" not in kw:  # the latest user message as first sent: with its reminder block
        latest = next((m["id"] for m in reversed(ui) if m["role"] == "user"), None)
        kw["sent"] = {} if latest is None else {latest: SentTurn(turn_note(reminders, NOW))}
    return ContextInputs(
        ui_messages=ui, model=MODEL, window=Window(window, "settings", "Settings"), **kw
    )


def build(ui: list[dict[str, Any]], window: int = 32_000, **kw: Any) -> Assembled:
    assembled = build_context(inputs(ui, window, **kw), COUNTER, BlockCache())
    assert problems(assembled.messages) == []
    return assembled


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def ui_tokens(message: dict[str, Any]) -> int:
    """What one UI message costs in the history, as sent (no reminder)."""
    return sum(COUNTER.message(m) for m in to_openai_messages([message]))


def fixed_tokens(system: str = SYSTEM, reminder: str = REMINDER) -> int:
    """The system message, the latest message's reminder block and the reply priming."""
    return COUNTER.message({"role": "system", "content": system}) + COUNTER.text(reminder) + 3


# --- the assembled request --------------------------------------------------------------------


def test_a_small_thread_in_a_roomy_window_is_sent_whole_with_the_reminder_last():
    first = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "The user wants a sampler."},
            text_part("Adding it."),
            tool_part("call-1", "addNode", {"nodeId": 5}, nodeType="KSampler"),
            {"type": "step-start"},
            text_part("Done: node 5."),
        ],
    }
    ui = [user("Add a KSampler.", "u1"), first, user("Now connect it.", "u2")]
    assembled = build(ui, reminders=["Use metric units."])
    assert assembled.messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Add a KSampler."},
        {
            "role": "assistant",
            "content": "Adding it.",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "addNode", "arguments": '{"nodeType":"KSampler"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call-1", "content": '{"nodeId":5}'},
        {"role": "assistant", "content": "Done: node 5."},
        {
            "role": "user",
            "content": "Now connect it.\n\n<system-reminder>\n- Use metric units.\n"
            f"- Current date and time: {NOW}\n</system-reminder>",
        },
    ]
    assert assembled.compaction is None
    assert assembled.exact == COUNTER.messages(assembled.messages)
    assert assembled.tokens == assembled.exact


def test_a_thread_ending_with_a_tool_result_gets_no_reminder_after_it():
    # the answer continues right after the result: nothing reads as a new user request
    answer = {"id": "a1", "role": "assistant", "parts": [{"type": "step-start"}, tool_part("c1")]}
    assembled = build([user("Look at my workflow.", "u1"), answer])
    assert assembled.messages[1:] == [
        {"role": "user", "content": f"Look at my workflow.\n\n{REMINDER}"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "getWorkflow", "arguments": '{"detail":"compact"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"nodes":[{"id":1,"type":"KSampler"}]}'},
    ]


def test_the_report_has_every_section_and_its_arithmetic_holds():
    tools = openai_tools()[:3]
    user_context = "## User context\nI render with SDXL at 1024x1024."
    system = f"{SYSTEM}\n\n{user_context}"
    ui = [user("Read my workflow.", "u1"), tool_turn("a1", "c1", "It has one KSampler.")]
    ui.append(user("Thanks. What next?", "u2"))
    assembled = build(ui, tools=tools, system=system, user_context=user_context)
    report = assembled.report
    assert set(report) == {
        "model",
        "window",
        "budget",
        "documents",
        "recalled",
        "tokens",
        "counts",
        "summary",
        "counter",
        "correction",
        "factors",
        "calibration",
        "reported",
        "cachedTokens",
        "estimated",
        "exact",
        "limits",
        "repairs",
    }
    assert report["model"] == MODEL
    assert report["window"] == {"tokens": 32_000, "source": "settings", "detail": "Settings"}
    budget = assembled.budget
    tool_tokens = COUNTER.tools(tools)
    # the reserve: 5% of the window (what answers use, with a floor: budget.py)
    assert (budget.reserve, budget.margin, budget.tools) == (1600, 960, tool_tokens)
    assert report["budget"] == budget.available == 32_000 - 1600 - 960 - tool_tokens
    sections = report["tokens"]
    assert set(sections) == {
        "system",
        "userContext",
        "summary",
        "history",
        "toolResults",
        "tools",
        "reminders",
        "recalled",
        "documents",
        "reserve",
    }
    history = to_openai_messages(ui)
    results = [m for m in history if m["role"] == "tool"]
    assert sections == {
        "system": COUNTER.text(system) - COUNTER.text(user_context),
        "userContext": COUNTER.text(user_context),
        "summary": 0,
        "history": sum(map(COUNTER.message, history)) - sum(map(COUNTER.message, results)),
        "toolResults": sum(map(COUNTER.message, results)),
        "tools": tool_tokens,
        "reminders": COUNTER.text(REMINDER),
        "recalled": 0,
        "documents": 0,
        "reserve": 1600,
    }
    assert report["recalled"] is None
    assert report["counts"] == {"kept": 4, "digested": 0, "summarized": 0, "dropped": 0, "cut": 0}
    assert report["summary"] is None
    assert report["counter"] == "tiktoken:cl100k_base"
    assert report["correction"] == 1.0
    assert report["factors"] == {"system": 1.0, "tools": 1.0, "messages": 1.0}
    assert report["calibration"] is None
    assert report["reported"] is None and report["cachedTokens"] is None
    assert report["limits"] == []
    messages = assembled.messages
    assert report["exact"] == assembled.exact == COUNTER.messages(messages) + tool_tokens
    assert report["estimated"] == assembled.tokens == assembled.exact
    # the sections add up to what is sent, but for the system message's own overhead, the
    # reply priming and the blank line that joins the reminder to the last user message
    overhead = COUNTER.message(messages[0]) - COUNTER.text(system) + REPLY_PRIMING
    parts = sum(v for k, v in sections.items() if k != "reserve") + overhead
    joint = COUNTER.text(text_of(messages[-1])) - COUNTER.text("Thanks. What next?")
    assert assembled.exact == parts + joint - COUNTER.text(REMINDER)
    assert 0 <= assembled.exact - parts <= 2


def test_the_request_depends_only_on_the_inputs_not_on_earlier_builds():
    # two threads that share message and call ids but differ in a tool call's arguments and
    # output: each request carries its own (blocks are memoized per thread, the cache scope)
    def thread(detail: str, nodes: int) -> list[dict[str, Any]]:
        part = tool_part("c1", output={"nodes": nodes}, detail=detail)
        return [user("Read my workflow.", "u1"), {"id": "a1", "role": "assistant", "parts": [part]}]

    cache = BlockCache()
    for scope, detail, nodes in (("t1", "summary", 1), ("t2", "full", 2), ("t1", "summary", 1)):
        built = build_context(inputs(thread(detail, nodes), cache_scope=scope), COUNTER, cache)
        sent = built.messages
        assert sent[2]["tool_calls"][0]["function"]["arguments"] == f'{{"detail":"{detail}"}}'
        assert sent[3] == {"role": "tool", "tool_call_id": "c1", "content": f'{{"nodes":{nodes}}}'}


def test_a_tool_part_that_moves_on_is_seen_by_the_cache():
    # within a thread a call's result is set once, with its state; the cache keys on the
    # state (and a streamed tool's `preliminary` flag), so each step of a call is sent as is
    cache = BlockCache()
    steps_of_a_call = [
        {"state": "input-available"},
        {"state": "output-available", "output": {"progress": 1}, "preliminary": True},
        {"state": "output-available", "output": {"progress": 2}},
        {"state": "output-error", "errorText": "the queue was cleared"},
    ]
    for step in steps_of_a_call:
        part = {k: v for k, v in tool_part("c1").items() if k != "output"} | step
        ui = [user("Run it.", "u1"), {"id": "a1", "role": "assistant", "parts": [part]}]
        built = build_context(inputs(ui, cache_scope="t"), COUNTER, cache)
        assert built.messages[3]["content"] == tool_result_text(part)


def test_the_block_cache_keeps_no_request_output():
    # old rounds are digested from the parts of the request at hand; the cache keeps the
    # digests and rendered results, never the parsed outputs (a thread's worth of objects)
    class Output(dict[str, Any]):  # a dict that can be weakly referenced
        pass

    cache, refs = BlockCache(), []
    ui = [user("Build it.", "u0")]
    for i in range(6):
        output = Output(nodes=[{"id": n, "type": "KSampler"} for n in range(20)])
        refs.append(weakref.ref(output))
        ui.append(tool_turn(f"a{i}", f"c{i}", output=output))
        ui.append(user(f"next {i}", f"u{i + 1}"))
    built = build_context(inputs(ui, cache_scope="t"), COUNTER, cache)
    assert built.report["counts"]["digested"] > 0
    del ui, output
    gc.collect()
    assert all(ref() is None for ref in refs)


# --- compaction -------------------------------------------------------------------------------


def _history_after(ui: list[dict[str, Any]], ids: list[str]) -> int:
    return sum(ui_tokens(m) for m in ui if m["id"] not in ids)


EARLY = ContextSettings(high_watermark=0.75, low_watermark=0.45)  # (the mechanism, not defaults)


def test_over_the_high_watermark_the_oldest_messages_are_named_for_compaction():
    ui = chat(17, words=30)
    window = 8192
    budget = compute_budget(Window(window, "settings", "S"), None, 0).available
    # the history's budget: the budget less the system message, the reminder (merged, or in
    # a message of its own: up to 8 tokens more) and the reply priming
    most = budget - fixed_tokens()
    least = most - 8
    assert _history_after(ui, []) > 0.75 * most  # above the high watermark

    assembled = build(ui, window, settings=EARLY)
    ids = assembled.compaction
    assert ids is not None
    # the oldest messages, in order, up to just before a user message that is not the latest
    assert ids == [m["id"] for m in ui[: len(ids)]]
    assert ui[len(ids)]["role"] == "user" and ui[len(ids)]["id"] != "u17"
    # as few as free the margin (the thread fits: no overflow; 1 - 0.45 of the history's
    # room) once the new summary (a quarter of what it covers, within its cap) is in
    cap = summary_cap(budget, 1.0)
    history = _history_after(ui, [])

    def freed(ids: list[str]) -> int:
        covered = history - _history_after(ui, ids)
        return covered - min(cap, max(SUMMARY_FLOOR, covered // 4))

    assert freed(ids) >= int(0.55 * least)
    assert freed(ids[:-2]) < int(0.55 * most)
    covered = history - _history_after(ui, ids)
    assert assembled.summary_room == min(cap, max(SUMMARY_FLOOR, covered // 4))
    assert ids == [f"{r}{i}" for i in range(len(ids) // 2) for r in "ua"]
    # nothing is left out while the window still holds it all
    assert assembled.report["counts"]["dropped"] == 0

    # the caller summarizes those messages and builds again: below the watermark, the covered
    # messages are not sent, the summary opens the history (the system prompt is untouched)
    summary = Summary("The user asked about samplers; euler is fast.", until=ids[-1])
    again = build(ui, window, summary=summary, settings=EARLY)
    assert again.compaction is None
    assert again.messages[0]["content"] == SYSTEM
    first = text_of(again.messages[1])
    assert first.startswith(
        f"{SUMMARY_OPEN}{summary.text}{SUMMARY_CLOSE}\n\nQuestion {len(ids) // 2}: "
    )
    assert again.report["counts"]["summarized"] == len(ids)


def test_below_the_watermark_or_with_summaries_off_nothing_is_compacted():
    assert build(chat(3)).compaction is None
    ui = chat(17, words=30)
    assert build(ui, 8192).compaction is None  # the defaults: 90% of the history budget
    off = build(ui, 8192, settings=ContextSettings(summarize=False, high_watermark=0.75))
    assert off.compaction is None
    assert off.messages == build(ui, 8192).messages


def test_compaction_never_names_the_latest_user_message_or_the_turn_in_progress():
    # a huge latest question and an answer in progress put the history over the watermark;
    # the cut falls before an earlier user message: the exchange right before the latest
    # question, the latest question and the answer in progress stay
    ui = chat(10)[:-1]
    ui.append(user("Explain this: " + "sampler " * 4000, "u10"))
    ui.append(assistant("Working on it. " * 200, "a10"))
    assembled = build(ui, 8192, settings=EARLY)
    assert assembled.compaction == [f"{r}{i}" for i in range(9) for r in "ua"]
    # with no earlier user message to cut before, there is nothing to compact
    alone = build([user("hi", "u0"), assistant("hello", "a0"), *ui[-2:]], 8192, settings=EARLY)
    assert alone.compaction is None


# --- summary and persona ----------------------------------------------------------------------


def test_a_summary_replaces_the_messages_it_covers_and_opens_the_history():
    # after the system prompt and tools, so a compaction re-processes the summary and the
    # kept history only; merged into the first kept message (never two user turns in a row)
    ui = chat(2)
    summary = Summary("The user compared samplers.\n", until="a0")
    assembled = build(ui, summary=summary)
    assert assembled.messages == [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"{SUMMARY_OPEN}The user compared samplers.{SUMMARY_CLOSE}\n\n"
            "Question 1: " + "tell me about samplers " * 5,
        },
        {"role": "assistant", "content": "Answer 1: " + "the euler sampler is fast " * 5},
        {"role": "user", "content": f"And the latest question?\n\n{REMINDER}"},
    ]
    report = assembled.report
    assert report["summary"] == {"covers": 2, "fallback": False}
    assert report["counts"]["summarized"] == 2
    opened = f"{SUMMARY_OPEN}The user compared samplers.{SUMMARY_CLOSE}"
    assert report["tokens"]["summary"] == COUNTER.message({"role": "user", "content": opened})

    # a summary of messages this thread no longer has (an edited branch) is not used
    stale = build(ui, summary=Summary("Something else.", until="gone"))
    assert stale.messages == build(ui).messages
    assert stale.report["summary"] is None


def test_a_summary_over_its_share_keeps_its_newest_lines_and_the_report_counts_what_is_sent():
    # (the summarizer sizes summaries to SUMMARY_SHARE; the engine cuts only past the limit)
    ui = chat(2)
    lines = "".join(f"- Turn {i}: seed {1000 + i}, 30 steps on node {i}.\n" for i in range(300))
    window = 8192
    available = compute_budget(Window(window, "settings", "S"), None, 0).available
    assert COUNTER.text(lines) > SUMMARY_LIMIT_SHARE * available
    assembled = build(ui, window, summary=Summary(lines, until="a0"))
    assert assembled.messages[0]["content"] == SYSTEM
    first = text_of(assembled.messages[1])
    assert first.startswith(SUMMARY_OPEN + "…- Turn ")
    sent = first.removeprefix(SUMMARY_OPEN).split(SUMMARY_CLOSE)[0]
    assert lines.endswith(sent[1:] + "\n")  # whole lines, the newest
    assert COUNTER.text(sent) <= int(SUMMARY_LIMIT_SHARE * available)
    assert assembled.report["summary"] == {"covers": 2, "fallback": False}
    tokens = assembled.report["tokens"]
    # what is reported is what is sent: the summary as cut (its message), the system prompt
    opened = {"role": "user", "content": f"{SUMMARY_OPEN}{sent}{SUMMARY_CLOSE}"}
    assert tokens["summary"] == COUNTER.message(opened)
    assert tokens["system"] == COUNTER.text(SYSTEM)


def test_each_user_message_is_sent_as_it_was_first_sent():
    # the reminder blocks stay with the messages they were first sent with (byte for byte),
    # so the next request is this one plus new messages; a /skill expansion is resent too
    ui = chat(2)
    first, second, latest = (m["id"] for m in ui if m["role"] == "user")
    sent = {
        first: SentTurn(turn_note(["Use metric units."], "2026-11-20 09:00 UTC")),
        second: SentTurn(turn_note([], NOW), text='<skill name="x">Do X.</skill>'),
    }
    before = build(ui, sent=sent)
    assert [m["content"] for m in before.messages if m["role"] == "user"] == [
        f"{ui[0]['parts'][0]['text']}\n\n{sent[first].note}",
        f'<skill name="x">Do X.</skill>\n\n{REMINDER}',
        "And the latest question?",  # not recorded: sent as typed
    ]
    sent[latest] = SentTurn(REMINDER)
    after = build([*ui, assistant("An answer.", "a9"), user("Next.", "u9")], sent=sent)
    # the previous request (with its latest message now recorded) is a prefix of the next one
    assert after.messages[: len(before.messages)] == build(ui, sent=sent).messages
    with_image = [*ui[:-1], user("What is in this picture?", latest, image=PNG)]
    assert build(with_image, sent=sent).messages[-1]["content"] == [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": PNG}},
        {"type": "text", "text": REMINDER},
    ]


def test_an_unanswered_message_is_never_merged_into_the_next_one():
    ui = [user("Make it blue.", "u1"), user("Why no answer?", "u2")]
    assembled = build(ui)
    assert [m["role"] for m in assembled.messages] == ["system", "user", "assistant", "user"]
    assert assembled.messages[1]["content"] == "Make it blue."
    assert assembled.messages[2]["content"].startswith("[No answer:")
    assert assembled.messages[3]["content"].startswith("Why no answer?")
    # the same words again (the user retried): the failed copy is left out
    retried = build([user("Make it blue.", "u1"), user("Make it blue.", "u2")])
    assert [m["role"] for m in retried.messages] == ["system", "user"]


def test_a_system_prompt_over_half_the_budget_is_cut_to_30_percent_with_the_marker():
    rules = "".join(
        f"Rule {i}: always check the node's inputs before linking it.\n" for i in range(400)
    )
    window = 8192
    available = compute_budget(Window(window, "settings", "S"), None, 0).available
    assert COUNTER.text(rules) > available // 2
    assembled = build(chat(1), window, system=rules)
    system = assembled.messages[0]["content"]
    assert system.endswith(f"\n\n{steps.TRUNCATED_SYSTEM}")
    kept = system.removesuffix(f"\n\n{steps.TRUNCATED_SYSTEM}")
    assert rules.startswith(kept) and kept.endswith("linking it.")  # cut at a line end
    assert COUNTER.text(system) <= int(available * 0.3)
    assert "system prompt truncated to 30% of the budget" in assembled.report["limits"]
    assert [m["role"] for m in assembled.messages] == ["system", "user", "assistant", "user"]

    half = rules[: len(rules) // 3]
    assert COUNTER.text(half) <= available // 2
    whole = build(chat(1), window, system=half)
    assert whole.messages[0]["content"] == half
    assert whole.report["limits"] == []


def test_a_latest_message_too_large_for_the_window_raises_with_both_numbers():
    ui = [*chat(2)[:-1], user("Summarize this log: " + "error at step 17; " * 3000, "u2")]
    with pytest.raises(ContextBudgetError) as caught:
        build(ui, 4096)
    error = caught.value
    available = compute_budget(Window(4096, "settings", "S"), None, 0).available
    assert error.limit == available == 3155
    # what the smallest request (the system message and this message) would cost
    reminded = {
        "role": "user",
        "content": f"{text_of(to_openai_messages([ui[-1]])[0])}\n\n{REMINDER}",
    }
    smallest = COUNTER.messages([{"role": "system", "content": SYSTEM}, reminded])
    assert smallest <= error.needed <= smallest + 8
    assert error.needed > error.limit
    message = str(error)
    assert f"needs {error.needed:,} tokens" in message
    assert f"only {error.limit:,} fit" in message
    assert "window 4,096 from Settings" in message


def test_the_correction_scales_every_count_so_fewer_messages_fit():
    ui = chat(40, words=10)
    tools = openai_tools()[:2]
    plain = build(ui, 8192, tools=tools)
    scaled = build(ui, 8192, tools=tools, correction=Factors.uniform(1.5))
    assert scaled.budget.tools == math.ceil(COUNTER.tools(tools) * 1.5)
    assert scaled.budget.available < plain.budget.available
    assert scaled.tokens == math.ceil(scaled.exact * 1.5)
    assert scaled.exact == COUNTER.messages(scaled.messages) + COUNTER.tools(tools)
    assert scaled.tokens <= scaled.budget.available + scaled.budget.tools
    assert len(scaled.messages) < len(plain.messages)
    assert scaled.report["counts"]["kept"] < plain.report["counts"]["kept"]
    assert scaled.report["correction"] == 1.5
    # what is kept is the newest part of the same history
    assert scaled.messages[-1] == plain.messages[-1]
    tail = len(scaled.messages) - 2
    assert scaled.messages[-tail:] == plain.messages[-tail:]


def test_the_message_cap_keeps_the_newest_messages():
    ui = chat(10, words=1)
    assembled = build(ui, settings=ContextSettings(max_history_messages=5))
    assert [text_of(m)[:10] for m in assembled.messages] == [
        SYSTEM[:10],
        "Question 8",
        "Answer 8: ",
        "Question 9",
        "Answer 9: ",
        "And the la",
    ]
    assert assembled.report["counts"]["dropped"] == 16
    assert assembled.report["limits"] == ["16 older blocks left out by the priority window"]


def test_the_message_cap_counts_the_note_that_opens_a_cut_history():
    # a cap of 4 would keep [a8, u9, a9, u10]; a history must start with a user message, and the
    # note that makes it so is a message sent too: the cap is kept by letting a8 go instead
    ui = chat(10, words=1)
    assembled = build(ui, settings=ContextSettings(max_history_messages=4))
    history = assembled.messages[1:]
    assert len(history) <= 4, [text_of(m)[:20] for m in history]
    assert [text_of(m)[:10] for m in history] == ["Question 9", "Answer 9: ", "And the la"]


def _workflow(nodes: int) -> dict[str, Any]:
    return {
        "nodes": [
            {
                "id": i,
                "type": "KSampler",
                "pos": [i * 10, i * 3],
                "widgets_values": [i, "euler", 20, 7.5],
            }
            for i in range(nodes)
        ],
        "links": [[i, i, 0, i + 1, 0, "LATENT"] for i in range(nodes - 1)],
    }


def test_a_huge_result_in_the_newest_round_is_cut_to_its_share_and_stays_json():
    huge = _workflow(2000)
    assert len(json.dumps(huge)) > 200_000
    # (the turn in progress: a finished turn's large results are digested, see below)
    ui = [user("Show me the whole workflow.", "u1")]
    parts = [{"type": "step-start"}, tool_part("c1", output=huge)]
    ui.append({"id": "a1", "role": "assistant", "parts": parts})
    assembled = build(ui)
    available = assembled.budget.available
    result = next(m for m in assembled.messages if m["role"] == "tool")
    assert result["tool_call_id"] == "c1"
    assert COUNTER.text(result["content"]) <= int(available * 0.25)
    cut = json.loads(result["content"])
    assert set(cut) == {"nodes", "links", "_truncated"}
    assert cut["nodes"][0] == huge["nodes"][0]
    assert "call recallToolResult for the full text" in cut["_truncated"]
    assert assembled.report["counts"]["cut"] == 1
    assert "1 oversized tool results cut" in assembled.report["limits"]
    assert assembled.tokens <= available
    assert [m["role"] for m in assembled.messages] == ["system", "user", "assistant", "tool"]


def test_the_large_results_of_a_finished_turn_are_digested_at_the_next_turn():
    # issue 14: a turn's lookups do not ride along in every later request, whatever became of
    # its answer; small ones stay whole (the prefix changes only when it pays)
    big = _workflow(80)
    ui = [user("Show me the workflow.", "u1"), tool_turn("a1", "c1", "80 samplers.", output=big)]
    in_turn = build([*ui[:1], {"id": "a1", "role": "assistant", "parts": ui[1]["parts"][:2]}])
    assert json.loads(next(m for m in in_turn.messages if m["role"] == "tool")["content"]) == big
    later = build([*ui, user("Thanks. Make the image warmer.", "u2")])
    result = next(m for m in later.messages if m["role"] == "tool")
    assert result["content"] == "[digest] getWorkflow compact -> 80 nodes, 79 links (recall: c1)"
    assert later.report["counts"]["digested"] == 1
    assert any(
        line.startswith("the tool results of earlier turns digested: ")
        for line in later.report["limits"]
    )
    # an answer that never came changes nothing: the round of the failed turn is digested too
    failed = {"id": "a1", "role": "assistant", "parts": ui[1]["parts"][:2]}
    retried = build([ui[0], failed, user("Try again?", "u2")])
    assert next(m for m in retried.messages if m["role"] == "tool")["content"].startswith(
        "[digest] getWorkflow compact"
    )
    # a small result of a finished turn stays whole, as before
    small = build([user("Add it.", "u1"), tool_turn("a1", "c1"), user("Thanks!", "u2")])
    assert small.report["counts"]["digested"] == 0
    # the share is a setting
    roomy = build([*ui, user("Thanks.", "u2")], settings=ContextSettings(finished_share=1.0))
    assert roomy.report["counts"]["digested"] == 0


def test_parallel_huge_results_of_the_turn_in_progress_are_cut_until_the_turn_fits():
    # an agent step read the workflow five times at once: the latest user message is tiny and
    # the turn in progress must be sent (rounds whole), so its results must shrink to fit
    huge = _workflow(2000)
    parts = [{"type": "step-start"}]
    parts += [tool_part(f"c{i}", output=huge, detail="full") for i in range(5)]
    ui = [user("Show me the workflow.", "u1"), {"id": "a1", "role": "assistant", "parts": parts}]
    assembled = build(ui)
    assert assembled.tokens <= assembled.budget.available
    sent = [m.get("tool_call_id") for m in assembled.messages if m["role"] == "tool"]
    assert sent == ["c0", "c1", "c2", "c3", "c4"]
    assert assembled.messages[-1]["role"] == "tool"  # nothing after the turn's results
    # the stage that shortened them says so (and the whole-result cut said what it cut first)
    limits = assembled.report["limits"]
    assert "the tool results of the turn in progress shortened to fit" in limits
    assert "5 oversized tool results cut" not in limits  # one round of five results: 1 cut
    assert "1 oversized tool results cut" in limits


def test_the_report_has_exactly_the_fields_of_its_type():
    # the panel's type is generated from ContextReport: the report must be what it says
    from comfyui_assistant.core.base.wire_types import ContextReport, ReportCounts, ReportTokens

    report = build(rounds_thread(3)).report
    assert set(report) == set(ContextReport.__annotations__)
    assert set(report["tokens"]) == set(ReportTokens.__annotations__)
    assert set(report["counts"]) == set(ReportCounts.__annotations__)


def test_the_cache_remembers_derivations_and_never_changes_a_block():
    # the same thread built twice on one cache: the second build derives nothing anew (its
    # digests and counts are the first build's objects), and no block was changed in place
    cache = BlockCache()
    settings = ContextSettings(keep_last_rounds=1, digest_batch=1)
    ui = rounds_thread(4)
    first = build_context(inputs(ui, settings=settings, cache_scope="t"), COUNTER, cache)
    derived = dict(cache._derived)
    assert any(variant == "digest" for _, variant in derived)
    assert any(variant == COUNTER.source for _, variant in derived)
    again = build_context(
        inputs(rounds_thread(4), settings=settings, cache_scope="t"), COUNTER, cache
    )
    assert again.messages == first.messages and cache._derived == derived
    assert all(a is b for a, b in zip(cache._derived.values(), derived.values(), strict=True))
    block = next(iter(derived.values()))
    with pytest.raises(AttributeError):
        block.tokens = 1  # type: ignore[misc]


@pytest.mark.parametrize("ending", ["user", "tool"])
def test_the_exact_count_never_exceeds_the_budget_at_the_boundary(ending):
    # grow the oldest message a word at a time across the edge where it stops fitting: at every
    # size the request sent, reminder included, stays within the budget (the thread ends with
    # the latest user message, or with a tool result of the turn in progress)
    def thread(words: int) -> list[dict[str, Any]]:
        ui = [user("word " * words, "u1"), assistant("answer", "a1"), user("q", "u2")]
        if ending == "tool":
            ui.append({"id": "a2", "role": "assistant", "parts": [tool_part("c2", output={})]})
        return ui

    sizes = range(1330, 1440)
    built = [build(thread(n), 2048) for n in sizes]
    dropped = [a.report["counts"]["dropped"] for a in built]
    assert dropped[0] == 0 and dropped[-1] == 1  # the sweep crosses the edge
    over = {n: a.tokens - a.budget.available for n, a in zip(sizes, built, strict=True)}
    assert {n: d for n, d in over.items() if d > 0} == {}


def test_the_tools_given_are_sent_and_counted_whatever_the_window():
    # which tools, and in which form, the prompt profile decides (tests/test_prompt_profile.py);
    # the engine sends what it is given and takes their count from the budget
    tools = openai_tools()
    # (every tool in full, about 3,200 tokens since the template tools, issue 40: more than a
    # 4K window leaves after its answer's reserve, so the smallest window here is 8K)
    for window in (8192, 200_000):
        built = build(chat(1), window, tools=tools)
        assert built.tools == tools and built.budget.tools == COUNTER.tools(tools)
        assert built.exact == COUNTER.messages(built.messages) + COUNTER.tools(tools)
    small = build(chat(1), 4096, tools=tools[:3], profile="small")
    assert small.report["limits"] == [
        "small prompt profile for a 4,096-token window: compact instructions, 3 brief tool "
        "definitions"
    ]


# --- digests ----------------------------------------------------------------------------------


def rounds_thread(rounds: int) -> list[dict[str, Any]]:
    ui: list[dict[str, Any]] = []
    for i in range(rounds):
        ui.append(user(f"Check the workflow ({i}).", f"u{i}"))
        ui.append(tool_turn(f"a{i}", f"call-{i}", f"Checked ({i})."))
    ui.append(user("And now?", f"u{rounds}"))
    return ui


def results(assembled: Assembled) -> list[str]:
    return [m["content"] for m in assembled.messages if m["role"] == "tool"]


WHOLE = '{"nodes":[{"id":1,"type":"KSampler"}]}'


def test_older_rounds_are_digested_and_the_newest_kept_whole():
    settings = ContextSettings(keep_last_rounds=2, digest_batch=1)
    assembled = build(rounds_thread(10), settings=settings)
    assert results(assembled) == [
        *(f"[digest] getWorkflow compact -> 1 node (recall: call-{i})" for i in range(8)),
        WHOLE,
        WHOLE,
    ]
    # the calls themselves are kept
    calls = [m["tool_calls"][0]["id"] for m in assembled.messages if m.get("tool_calls")]
    assert calls == [f"call-{i}" for i in range(10)]
    assert assembled.report["counts"]["digested"] == 8
    assert "8 older tool rounds digested" in assembled.report["limits"]


def test_the_limits_count_the_rounds_digested_whether_kept_or_left_out():
    settings = ContextSettings(keep_last_rounds=2, digest_batch=1, summarize=False)
    assembled = build(rounds_thread(60), window=4_000, settings=settings)
    counts = assembled.report["counts"]
    assert counts["dropped"] > 0 and 0 < counts["digested"] < 58  # some digests left out
    assert "58 older tool rounds digested" in assembled.report["limits"]


def test_the_digest_boundary_moves_in_steps_of_the_batch():
    settings = ContextSettings(keep_last_rounds=2, digest_batch=3)
    digested = []
    previous: list[str] = []
    for rounds in range(1, 15):
        now = results(build(rounds_thread(rounds), settings=settings))
        count = sum(r.startswith("[digest] ") for r in now)
        assert all(r.startswith("[digest] ") for r in now[:count])
        assert now[count:] == [WHOLE] * (rounds - count)
        if count == (digested[-1] if digested else 0):
            assert now[: len(previous)] == previous  # older results did not change
        digested.append(count)
        previous = now
    assert digested == [0, 0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 9, 12]


def _plan_by_walking(ui: list[dict[str, Any]], blocks: list[Block], target: int) -> Any:
    """The compaction plan's definition, message by message (the oracle)."""
    last_user = max((i for i, b in enumerate(blocks) if b.kind == "user"), default=None)
    if last_user is None:
        return None
    protected = {b.source_id for b in blocks[last_user:]}
    tokens: dict[str, int] = {}
    for b in blocks:
        tokens[b.source_id] = tokens.get(b.source_id, 0) + b.tokens
    remaining, chosen, best = sum(tokens.values()), [], None
    for message in ui:
        if message["id"] in protected:
            break
        if message["role"] == "user" and chosen:
            best = list(chosen)
            if remaining <= target:
                break
        chosen.append(message["id"])
        remaining -= tokens.get(message["id"], 0)
    return best


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.integers(0, 50)), max_size=30),
    st.integers(0, 800),
)
def test_the_compaction_plan_is_its_definition(shape: list[tuple[str, int]], target: int):
    ui = [{"id": f"m{i}", "role": role} for i, (role, _) in enumerate(shape)]
    blocks = [
        Block("user" if role == "user" else "assistant", (), f"m{i}", tokens=n)
        for i, (role, n) in enumerate(shape)
        if n % 7  # some messages have no block (empty, or already summarized)
    ]
    assert compaction_plan(ui, blocks, target) == _plan_by_walking(ui, blocks, target)


def test_the_cyclic_collector_is_paused_only_while_assembling():
    seen = []

    class Probe(list[dict[str, Any]]):  # the thread, read while the engine runs
        def __iter__(self):
            seen.append(gc.isenabled())
            return super().__iter__()

    ui = Probe([user("hello", "u1")])
    assert gc.isenabled()
    build(ui)
    assert seen and not any(seen) and gc.isenabled()
    with pytest.raises(ContextBudgetError):  # restored when assembly fails, too
        build([user("word " * 5000, "u1")], window=2048)
    assert gc.isenabled()
    gc.disable()
    try:
        build([user("hello", "u1")])
        assert not gc.isenabled()  # an application's own choice is kept
    finally:
        gc.enable()


def test_a_thread_counted_by_one_model_then_another_has_each_ones_counts():
    # blocks are counted in place by the first counter; another (a change of model) gets
    # its own counts, and the first keeps its own
    ui = [user("Build a graph.", "u1"), tool_turn("a1", "c1"), user("Thanks! Again?", "u2")]
    estimate = TokenCounter(use_tiktoken=False)
    cache = BlockCache()
    exact_first = build_context(inputs(ui, cache_scope="t"), COUNTER, cache).exact
    estimated = build_context(inputs(ui, cache_scope="t"), estimate, cache).exact
    assert estimated == build_context(inputs(ui, cache_scope="t"), estimate, BlockCache()).exact
    assert estimated != exact_first
    assert build_context(inputs(ui, cache_scope="t"), COUNTER, cache).exact == exact_first


def test_the_summary_is_not_cut_anew_when_the_factor_moves_a_little():
    # a summary sized to its share stays byte for byte when the learned messages factor rises
    # (a near-limit count pinned it higher): cutting it anew would make a local server re-read
    # the whole history after the system prompt and tools
    ui = chat(2)
    window = 8192
    available = compute_budget(Window(window, "settings", "S"), None, 0).available
    line = "- Turn {i}: seed {s}, 30 steps.\n"
    lines = "".join(line.format(i=i, s=1000 + i) for i in range(400))
    cut = lines[-int(len(lines) * SUMMARY_SHARE * available / COUNTER.text(lines)) :]
    summary = Summary(cut[cut.index("- Turn") :], until="a0")
    plain = build(ui, window, summary=summary)
    pinned = build(ui, window, summary=summary, correction=Factors(1.0, 1.0, 1.4))
    assert plain.messages[1] == pinned.messages[1]


def test_recalled_passages_are_resent_until_another_summary_is_taken():
    # a user message's recalled passages ride along, byte for byte, while the summary it was
    # sent with is in use; when another is taken the request changes from the history's
    # start anyway, and they go (else a tenth of the budget a message would pile up)
    from comfyui_assistant.core.store.sent_turns import Recall, Recalled

    ui = chat(6)
    block = "<recalled>\nSaid earlier...\n- user, Tue 14 May: the teal sky\n</recalled>"
    recall = Recall(block, (Recalled("u0", "user", 0.0, 12),), since="a1")
    sent = {"u4": SentTurn(turn_note([], NOW), recall=recall)}
    first = Summary("Earlier: samplers.", until="a1")
    kept = build(ui, sent=sent, summary=first)
    (u4,) = [m for m in kept.messages if str(m["content"]).startswith("Question 4")]
    assert str(u4["content"]).endswith(block)
    assert kept.report["tokens"]["recalled"] == COUNTER.text(block)
    later = build(ui, sent=sent, summary=Summary("Earlier: samplers, more.", until="a2"))
    (u4,) = [m for m in later.messages if str(m["content"]).startswith("Question 4")]
    assert block not in str(u4["content"]) and str(u4["content"]).endswith("</system-reminder>")
    assert later.report["tokens"]["recalled"] == 0


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60_000), st.integers(0, 6_000), st.integers(64, 8_000))
def test_a_compaction_covers_the_fewest_tokens_that_free_what_is_needed(
    free: int, now: int, cap: int
):
    # what a summary frees: what it covers less what it takes beyond the summary it replaces
    # (a quarter of what it covers, at least the floor, at most its cap); the plan covers the
    # fewest tokens that free `free` (the overflow and the margin), not ten times that
    def freed(covered: int) -> int:
        return covered - summary_allowance(covered, now, cap) + now

    covered = covered_needed(free, now, cap)
    assert freed(covered) >= free
    assert covered <= 1 or freed(covered - 2) < free
