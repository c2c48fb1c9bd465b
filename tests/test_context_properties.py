"""Property tests of the whole context engine over random threads and random windows.

Threads: alternating user / assistant turns; assistant turns of 0-3 steps, each with text and/or
1-3 parallel tool calls (output, error, never ran), small or huge (20-200 KB) results; images in
user messages; a running summary over a prefix; sometimes an answer in progress after the latest
user message. Windows from 2K to 200K, random output reserves, corrections and settings.

For every thread either the engine raises ContextBudgetError, and then the latest user message
with the system message really cannot fit, or the request it builds is valid, within the budget,
holds the latest user message whole and the turn in progress, keeps rounds whole, keeps the UI
order, and is byte-identical when built again.

Every text carries a unique marker `mNNNN` (tool call ids are markers too), so what was sent can
be traced back to the UI message it came from.
"""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from comfyui_assistant.core.base.ui_messages import tool_name_of, tool_result_text
from comfyui_assistant.core.context import context_steps as steps
from comfyui_assistant.core.context.context_blocks import blocks_of, flatten
from comfyui_assistant.core.context.context_cache import BlockCache
from comfyui_assistant.core.context.context_engine import (
    ContextInputs,
    ContextSettings,
    Summary,
    build_context,
)
from comfyui_assistant.core.context.context_stages import SUMMARY_LIMIT_SHARE
from comfyui_assistant.core.context.context_validate import problems
from comfyui_assistant.core.context.round_fold import terse_digest
from comfyui_assistant.core.provider.budget import ContextBudgetError, Window, compute_budget
from comfyui_assistant.core.store.sent_turns import SentTurn, turn_note
from comfyui_assistant.core.tokens.token_correction import Factors, Parts
from comfyui_assistant.core.tokens.tokens import TokenCounter, counter_for
from comfyui_assistant.core.tools.digests import DIGEST_PREFIX, digest_tool_result
from comfyui_assistant.tools_definitions import openai_tools
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

MODEL = "gpt-4"
COUNTER = counter_for(MODEL)
NOW = "2026-11-22 10:00 UTC (Sunday)"
MARKER = re.compile(r"\bm(\d{4})\b")
ALL_TOOLS = openai_tools()
WORDS = ("sampler", "latent", "node", "seed", "prompt", "model", "image", "upscale", "vae", "cfg")


# --- material ---------------------------------------------------------------------------------


@cache
def png(width: int, height: int) -> str:
    """A data URL whose PNG header states the size (what the counter reads)."""
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    header += width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return "data:image/png;base64," + base64.b64encode(header + b"\x00" * 7).decode()


@cache
def huge_output(kilobytes: int, kind: str) -> Any:
    """A 20-200 KB result: a workflow (JSON), a node listing, or a plain-text log."""
    if kind == "workflow":
        nodes = [
            {"id": i, "type": "KSampler", "pos": [i * 10, 40], "widgets_values": [i, "euler", 20]}
            for i in range(kilobytes * 1000 // 80)
        ]
        return {"nodes": nodes, "links": [[i, i, 0, i + 1, 0, "LATENT"] for i in range(50)]}
    if kind == "listing":
        return [f"CustomNode{i:05d} (category/sub{i % 17})" for i in range(kilobytes * 1000 // 36)]
    lines = [f"[{i:06d}] loading weights block {i % 97}: ok" for i in range(kilobytes * 1000 // 40)]
    return "\n".join(lines)


def words(n: int, seed: int) -> str:
    return " ".join(WORDS[(seed + i * 7) % len(WORDS)] for i in range(n))


# --- the thread strategy ----------------------------------------------------------------------


@dataclass
class Thread:
    ui: list[dict[str, Any]]
    latest: int  # index of the latest user message
    groups: list[list[str]] = field(default_factory=list)  # the call ids of each UI step
    marks: dict[int, int] = field(default_factory=dict)  # marker -> UI message index


@dataclass
class Huge:
    """How many huge results a stretch of the thread may still get, and their odds (1 in n)."""

    left: int
    odds: int


class Markers:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"m{self.n:04d}"


TOOL_INPUTS = {
    "getWorkflow": {"detail": "full"},
    "addNode": {"nodeType": "KSampler", "widgets": {"seed": 42}},
    "connectNodes": {"fromNodeId": 4, "fromOutput": 0, "toNodeId": 5, "toInput": "model"},
    "searchInstalledNodes": {"query": "upscale"},
    "customPanelTool": {"target": "x", "n": 3},  # not in the registry
}


@st.composite
def tool_call(draw: st.DrawFn, marks: Markers, huge: Huge) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(TOOL_INPUTS)))
    part: dict[str, Any] = {
        "type": f"tool-{name}",
        "toolCallId": marks.next(),
        "input": TOOL_INPUTS[name],
    }
    state = draw(st.sampled_from(["output-available"] * 5 + ["output-error", "input-available"]))
    part["state"] = state
    if state == "output-error":
        part["errorText"] = "Node type not found: " + words(draw(st.integers(1, 30)), 3)
    elif state == "output-available":
        if huge.left > 0 and draw(st.integers(1, huge.odds)) == 1:
            huge.left -= 1
            kilobytes = draw(st.integers(20, 200))
            part["output"] = huge_output(
                kilobytes, draw(st.sampled_from(["workflow", "listing", "log"]))
            )
        else:
            part["output"] = {"nodeId": draw(st.integers(1, 99)), "ok": True}
    return part


@st.composite
def assistant_turn(
    draw: st.DrawFn, marks: Markers, huge: Huge, groups: list[list[str]], id: str
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        parts.append({"type": "step-start"})
        if draw(st.integers(0, 4)) == 0:
            parts.append({"type": "reasoning", "text": "Thinking about it."})
        with_text = draw(st.booleans())
        calls = draw(st.integers(0, 3)) if with_text else draw(st.integers(1, 3))
        if with_text:
            length = draw(st.integers(1, 80))
            parts.append({"type": "text", "text": f"{marks.next()} {words(length, length)}"})
        step = [draw(tool_call(marks, huge)) for _ in range(calls)]
        if step:
            groups.append([p["toolCallId"] for p in step])
        parts.extend(step)
    return {"id": id, "role": "assistant", "parts": parts}


@st.composite
def user_turn(draw: st.DrawFn, marks: Markers, id: str, latest: bool = False) -> dict[str, Any]:
    big = latest and draw(st.integers(0, 5)) == 0
    length = draw(st.integers(300, 6000)) if big else draw(st.integers(1, 120))
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"{marks.next()} {words(length, 1)}"}]
    if draw(st.integers(0, 6)) == 0:
        size = draw(st.sampled_from([(64, 64), (512, 512), (1024, 768), (2048, 4096)]))
        parts.append({"type": "file", "mediaType": "image/png", "url": png(*size)})
    return {"id": id, "role": "user", "parts": parts}


@st.composite
def threads(draw: st.DrawFn) -> Thread:
    marks, groups, history = Markers(), [], Huge(2, 6)
    ui: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 3) | st.integers(4, 12))):
        ui.append(draw(user_turn(marks, f"u{i}")))
        ui.append(draw(assistant_turn(marks, history, groups, f"a{i}")))
    latest = len(ui)
    ui.append(draw(user_turn(marks, "latest", latest=True)))
    if draw(st.booleans()):  # an answer in progress: agent steps often read big results
        ui.append(draw(assistant_turn(marks, Huge(4, 2), groups, "answer")))
    thread = Thread(ui, latest, groups)
    for index, message in enumerate(ui):
        for mark in MARKER.findall(json.dumps(message)):
            thread.marks[int(mark)] = index
    return thread


windows = (
    st.integers(2048, 200_000)
    | st.integers(2048, 16_384)
    | st.sampled_from([2048, 4096, 8192, 32_768, 131_072, 200_000])
)


def describe_part(part: dict[str, Any]) -> str:
    kind = part["type"]
    if kind in ("text", "reasoning"):
        return f"{kind}({part['text'][:5]}…{len(part['text'])} chars)"
    if kind == "file":
        return f"image({len(part['url'])} chars)"
    if kind.startswith("tool-"):
        output = part.get("output")
        size = len(output if isinstance(output, str) else json.dumps(output)) if output else 0
        return f"{kind}({part['toolCallId']}, {part['state']}, {size:,} chars)"
    return kind


@dataclass
class Case:
    thread: Thread
    inputs: ContextInputs
    covered: int  # UI messages under the summary

    def __repr__(self) -> str:
        """Short enough to read: huge results as their sizes."""
        i = self.inputs
        lines = [f"{m['id']}: {', '.join(map(describe_part, m['parts']))}" for m in i.ui_messages]
        summary = i.summary and (i.summary.until, len(i.summary.text), i.summary.fallback)
        return "\n  ".join(
            [
                "Case(",
                f"window={i.window.tokens}, max_output_tokens={i.max_output_tokens}, "
                f"correction={i.correction}, system={len(i.system)} chars, "
                f"tools={[t['function']['name'] for t in i.tools]}",
                f"{i.settings}",
                f"summary={summary}, sent={dict(i.sent)}",
                *lines,
                ")",
            ]
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # what Hypothesis prints
        printer.text(repr(self))


@st.composite
def cases(draw: st.DrawFn) -> Case:
    thread = draw(threads())
    summary, covered = None, 0
    if thread.latest > 0 and draw(st.booleans()):
        covered = draw(st.integers(1, thread.latest))
        text = "Earlier: " + words(draw(st.integers(1, 300) | st.integers(300, 1500)), 5)
        summary = Summary(text, until=thread.ui[covered - 1]["id"], fallback=draw(st.booleans()))
    high = draw(st.floats(0.5, 0.95))
    context_settings = ContextSettings(
        keep_last_rounds=draw(st.integers(1, 4)),
        digest_batch=draw(st.integers(1, 5)),
        max_result_share=draw(st.floats(0.05, 0.5)),
        high_watermark=high,
        low_watermark=draw(st.floats(0.1, high - 0.05)),
        max_history_messages=draw(st.none() | st.integers(2, 40)),
        summarize=draw(st.booleans()),
    )
    rules = draw(st.sampled_from([0, 5]) | st.integers(0, 600))
    system = "You are ComfyUI Assistant.\n" + "".join(
        f"Rule {i}: check the {WORDS[i % 10]} before you change it.\n" for i in range(rules)
    )
    tools = draw(st.lists(st.sampled_from(ALL_TOOLS), max_size=4, unique_by=lambda t: id(t)))
    # what each user message was first sent with: the latest always, older ones mostly
    # (a /skill expansion keeps the user's words, as skill_message does)
    users = [m for m in thread.ui if m["role"] == "user"]
    sent = {
        m["id"]: SentTurn(
            turn_note(reminders, NOW),
            draw(st.none() | st.just(f"<skill>Do it.</skill>\n\n{m['parts'][0]['text']}")),
        )
        for m in users
        if m is users[-1] or draw(st.booleans())
        for reminders in [draw(st.lists(st.sampled_from(["Metric units.", "Brief."]), max_size=2))]
    }
    inputs = ContextInputs(
        system=system,
        ui_messages=thread.ui,
        tools=tools,
        model=MODEL,
        window=Window(draw(windows), "settings", "Settings"),
        max_output_tokens=draw(st.none() | st.integers(64, 16_384)),
        summary=summary,
        sent=sent,
        correction=Factors(
            system=draw(st.sampled_from([0.5, 0.9, 1.0, 1.0, 1.25, 2.0])),
            tools=draw(st.sampled_from([0.0, 0.7, 1.0, 1.0, 1.5, 2.0])),  # 0: a server drops them
            messages=draw(st.sampled_from([0.3, 0.5, 0.8, 1.0, 1.0, 1.25, 1.6, 2.0])),
        ),
        # calibrated by the server's counts: a messages factor below 1 is trusted
        calibration=draw(st.sampled_from([None, "llama.cpp /tokenize"])),
        settings=context_settings,
    )
    return Case(thread, inputs, covered)


# --- what was sent ----------------------------------------------------------------------------


def texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def sent_marks(messages: list[dict[str, Any]]) -> list[int]:
    """Markers in the order they are sent: texts, then tool call ids (results repeat them)."""
    out: list[int] = []
    for message in messages:
        if message["role"] == "tool":
            continue
        out += [int(m) for m in MARKER.findall(texts(message))]
        out += [int(c["id"][1:]) for c in message.get("tool_calls") or []]
    return out


def arguments(part: dict[str, Any]) -> str:
    return json.dumps(part["input"], ensure_ascii=False, separators=(",", ":"))


def check_result(message: dict[str, Any], part: dict[str, Any]) -> None:
    """A result sent is the UI part's result whole, its one-line digest, or a shorter cut."""
    whole = tool_result_text(part)
    content = message["content"]
    if content == whole:
        return
    call_id = part["toolCallId"]
    digest = digest_tool_result(tool_name_of(part) or "", arguments(part), whole, call_id)
    if content.startswith(DIGEST_PREFIX):
        # (a turn that fits only in its smallest form sends its digests terse: round_fold)
        assert content in (digest, terse_digest(digest)), (content, digest)
        return
    assert len(content) < len(whole), f"{call_id}: neither whole, digested nor cut"
    try:
        json.loads(whole)
    except ValueError:
        return
    json.loads(content)  # a cut JSON result stays JSON


def minimal_need(inputs: ContextInputs, covered: int, available: int) -> int:
    """Tokens of the smallest request: the system message (summary included, cut as the engine
    cuts it) and the latest user message as sent."""
    factors = fitted(inputs)
    system, _ = steps.truncate_system(
        inputs.system, available, lambda t: math.ceil(COUNTER.text(t) * factors.system)
    )
    head = []
    if inputs.summary is not None and covered:  # its newest part, cut past its limit share
        cap = max(64, int(available * SUMMARY_LIMIT_SHARE / factors.messages))
        text = steps.keep_tail(inputs.summary.text, cap, COUNTER.text)
        head = [steps.summary_block(text)]
    latest = next(m for m in reversed(inputs.ui_messages) if m["role"] == "user")
    blocks = [steps.as_sent(b, inputs.sent[latest["id"]]) for b in blocks_of(latest)]
    history = steps.merge_adjacent_users(flatten([*head, *blocks]))
    first = {"role": "system", "content": system}
    return factors.scale(Parts(COUNTER.message(first), 0, COUNTER.messages(history)))


def fitted(inputs: ContextInputs) -> Factors:
    """The factors a request is fitted with: the learned ones, our exact count the floor (a
    factor below 1 makes no room), but for the messages' once the server calibrated them."""
    system, tools, messages = inputs.correction
    return Factors(
        max(1.0, system), max(1.0, tools), messages if inputs.calibration else max(1.0, messages)
    )


# --- the property -----------------------------------------------------------------------------


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # no shrinking: with 200 KB results each attempt is slow, and the report of a failing
    # case (Case.__repr__) is already short
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],
)
@given(cases())
def test_every_request_is_valid_within_budget_whole_ordered_and_deterministic(case: Case):
    inputs, thread = case.inputs, case.thread
    factors = fitted(inputs)
    try:
        assembled = build_context(inputs, COUNTER, BlockCache())  # examples reuse ids
    except ContextBudgetError as error:
        # only when the latest user message and the fixed parts cannot fit
        budget = compute_budget(
            inputs.window,
            inputs.max_output_tokens,
            math.ceil(COUNTER.tools(inputs.tools) * factors.tools),
        )
        need = minimal_need(inputs, case.covered, budget.available)
        # (the engine may reserve a few tokens more: rounding, the reminder's own message)
        assert need > budget.available - 8, (
            f"raised although the latest message fits: {need} of {budget.available}: {error}"
        )
        assert error.limit == max(budget.available, 0)
        assert error.needed > error.limit, str(error)
        event("ContextBudgetError")
        return

    messages = assembled.messages
    budget = assembled.budget
    counts = assembled.report["counts"]
    for name in ("digested", "summarized", "dropped", "cut"):
        event(f"{name}: {'some' if counts[name] else 'none'}")
    event(f"compaction: {assembled.compaction is not None}")
    event(f"rounds: {min(len(thread.groups), 10) // 5 * 5}+")
    event(f"window: {inputs.window.tokens // 10_000 * 10}K+")

    # (a) valid for every provider
    assert problems(messages) == []

    # (b) within the budget, counted exactly and scaled by the correction of each component
    parts = assembled.parts
    assert assembled.exact == COUNTER.messages(messages) + COUNTER.tools(assembled.tools)
    assert parts == Parts(
        COUNTER.message(messages[0]),
        COUNTER.tools(assembled.tools),
        COUNTER.messages(messages[1:]),
    )
    assert assembled.tokens == factors.scale(parts)
    assert budget.tools == math.ceil(parts.tools * factors.tools)
    assert factors.scale(Parts(parts.system, 0, parts.messages)) <= budget.available
    window = inputs.window.tokens
    assert assembled.tokens <= window - budget.reserve - budget.margin
    if not inputs.calibration:  # our exact count is the floor, but for a server-calibrated one
        assert assembled.exact <= window - budget.reserve - budget.margin

    # (c) the latest user message whole, with its images, and only the turn in progress after it
    latest = thread.ui[thread.latest]
    latest_mark = int(MARKER.search(latest["parts"][0]["text"]).group(1))  # type: ignore[union-attr]
    holders = [i for i, m in enumerate(messages) if latest_mark in sent_marks([m])]
    assert len(holders) == 1
    at = holders[0]
    assert messages[at]["role"] == "user"
    assert latest["parts"][0]["text"] in texts(messages[at])
    for part in latest["parts"][1:]:
        image = {"type": "image_url", "image_url": {"url": part["url"]}}
        assert image in messages[at]["content"]
    for message in messages[at + 1 :]:  # (nothing after the turn's results)
        assert message["role"] in ("assistant", "tool"), message
    # ... and of the turn in progress, its newest part always, the rest newest first: when
    # the whole turn cannot fit even with its results digested, older steps give way before
    # the request fails (only the latest user message alone may make it fail)
    marks = sent_marks(messages)
    in_progress = sorted(m for m, index in thread.marks.items() if index > thread.latest)
    sent_of_turn = [m for m in in_progress if m in set(marks)]
    assert sent_of_turn == in_progress[len(in_progress) - len(sent_of_turn) :] or (
        in_progress and in_progress[-1] in sent_of_turn
    )

    # (d) every call has its result right after it, every round is a UI step's calls, whole
    groups = {tuple(g) for g in thread.groups}
    for i, message in enumerate(messages):
        calls = [c["id"] for c in message.get("tool_calls") or []]
        if calls:
            assert tuple(calls) in groups
            following = messages[i + 1 : i + 1 + len(calls)]
            assert [m.get("tool_call_id") for m in following] == calls
            assert all(m["role"] == "tool" for m in following)
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    sent_calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    assert results == sent_calls
    # ... and each is this thread's own call and result: whole, digested or cut
    parts = {p["toolCallId"]: p for m in thread.ui for p in m["parts"] if "toolCallId" in p}
    for message in messages:
        for call in message.get("tool_calls") or []:
            part = parts[call["id"]]
            assert call["function"] == {"name": tool_name_of(part), "arguments": arguments(part)}
        if message["role"] == "tool":
            check_result(message, parts[message["tool_call_id"]])

    # (e) chronological: markers rise, none twice, none from under the summary
    assert marks == sorted(set(marks))
    assert all(thread.marks[m] >= case.covered for m in marks)
    # the summary opens the history (the system message never carries it)
    opened = texts(messages[1]).startswith(steps.SUMMARY_OPEN) if len(messages) > 1 else False
    assert opened == (case.covered > 0)
    assert steps.SUMMARY_OPEN not in messages[0]["content"]
    if case.covered:  # the summary's newest part is never cut away
        assert inputs.summary is not None
        assert inputs.summary.text.strip()[-60:] + steps.SUMMARY_CLOSE in texts(messages[1])

    # the report's sections are token counts: never negative
    assert all(v >= 0 for v in assembled.report["tokens"].values()), assembled.report["tokens"]

    # compaction, when asked, names a prefix of older messages ending before a user message
    if assembled.compaction is not None:
        assert inputs.settings.summarize
        ids = [m["id"] for m in thread.ui]
        plan = assembled.compaction
        assert plan == ids[: len(plan)]
        assert len(plan) < thread.latest
        assert thread.ui[len(plan)]["role"] == "user"

    # (f) deterministic: a second build, even with a fresh counter, is byte-identical
    again = build_context(inputs, TokenCounter("cl100k_base"), BlockCache())
    assert json.dumps(again.messages) == json.dumps(messages)
    assert json.dumps(again.report) == json.dumps(assembled.report)
    assert again.compaction == assembled.compaction
