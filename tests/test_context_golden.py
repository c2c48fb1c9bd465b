"""Golden tests of the stable prefix: providers and local servers reuse the longest unchanged
prefix of a request (prompt caching, KV reuse), so a steady conversation must keep every earlier
message byte-identical from one turn to the next, and old tool results may change only in rare,
batched steps."""

from __future__ import annotations

import json
import math
from itertools import pairwise
from typing import Any

import pytest
from comfyui_assistant.core.context.context_engine import (
    Assembled,
    ContextInputs,
    ContextSettings,
    build_context,
)
from comfyui_assistant.core.context.context_validate import problems
from comfyui_assistant.core.provider.budget import Window
from comfyui_assistant.core.store.sent_turns import SentTurn, turn_note
from comfyui_assistant.core.tokens.tokens import counter_for
from comfyui_assistant.tools_definitions import openai_tools

MODEL = "gpt-4"
COUNTER = counter_for(MODEL)
SYSTEM = "You are ComfyUI Assistant, an expert in ComfyUI workflows.\n" + "".join(
    f"- Guideline {i}: read the workflow before you edit it, and say what you changed.\n"
    for i in range(60)
)
TURNS = 30
SUBJECTS = ("sampler", "scheduler", "VAE", "LoRA", "upscaler", "ControlNet", "seed", "CFG")


def user(turn: int) -> dict[str, Any]:
    subject = SUBJECTS[turn % len(SUBJECTS)]
    text = f"Turn {turn}: what does the {subject} do here, and should I change it?"
    return {"id": f"u{turn}", "role": "user", "parts": [{"type": "text", "text": text}]}


def tool_step(turn: int, k: int) -> list[dict[str, Any]]:
    return [
        {"type": "step-start"},
        {
            "type": "tool-getWorkflow",
            "toolCallId": f"call-{turn}-{k}",
            "state": "output-available",
            "input": {"detail": "compact"},
            "output": {"nodes": [{"id": turn, "type": "KSampler", "widgets": [turn, 20, 7.5]}]},
        },
    ]


def answer(turn: int, tool_rounds: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for k in range(tool_rounds):
        parts += tool_step(turn, k)
    subject = SUBJECTS[turn % len(SUBJECTS)]
    text = f"Answer {turn}: the {subject} shapes the result; keep it unless the image looks off."
    parts += [{"type": "step-start"}, {"type": "text", "text": text}]
    return {"id": f"a{turn}", "role": "assistant", "parts": parts}


def requests(
    rounds_of: Any, settings: ContextSettings, window: int = 32_000
) -> tuple[list[Assembled], int]:
    """Build the request of every turn: the history so far plus the new user message. Returns
    the requests and the number of tool rounds in the last one."""
    ui: list[dict[str, Any]] = []
    out: list[Assembled] = []
    sent: dict[str, SentTurn] = {}
    rounds = 0
    for turn in range(TURNS):
        if turn:
            n = rounds_of(turn - 1)
            ui.append(answer(turn - 1, n))
            rounds += n
        ui.append(user(turn))
        # each message is recorded with its reminder block (its own time) when first sent
        sent[f"u{turn}"] = SentTurn(turn_note([], f"2026-11-22 10:{turn:02d} UTC (Sunday)"))
        inputs = ContextInputs(
            system=SYSTEM,
            ui_messages=list(ui),
            tools=openai_tools(),
            model=MODEL,
            window=Window(window, "settings", "Settings"),
            sent=dict(sent),
            settings=settings,
        )
        assembled = build_context(inputs, COUNTER)
        assert problems(assembled.messages) == []
        assert assembled.compaction is None
        assert assembled.report["counts"]["dropped"] == 0
        assert assembled.tokens <= assembled.budget.available + assembled.budget.tools
        out.append(assembled)
    return out, rounds


def dumps(messages: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(m) for m in messages]


def common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def reuse(built: list[Assembled]) -> tuple[int, float]:
    """How many requests changed the previous request (each should be the previous one plus
    new messages), and the share of prompt tokens that are a prefix of the previous request."""
    changed, reused, total = 0, 0, 0
    for before, after in pairwise(built):
        prefix = dumps(before.messages)
        same = common_prefix(prefix, dumps(after.messages))
        changed += same < len(prefix)
        reused += sum(COUNTER.message(m) for m in after.messages[:same])
        total += COUNTER.messages(after.messages)
    return changed, reused / total


def test_a_steady_conversation_keeps_a_byte_identical_prefix_turn_after_turn(record_property):
    # text turns with a tool round every seventh turn: four rounds, none old enough to digest
    built, rounds = requests(lambda t: 1 if t % 7 == 3 else 0, ContextSettings())
    assert rounds == 4
    for turn, (before, after) in enumerate(pairwise(built), start=1):
        prefix = dumps(before.messages)  # the whole previous request, its reminders included
        assert dumps(after.messages[: len(prefix)]) == prefix, f"turn {turn} changed the prefix"
        question = user(turn - 1)["parts"][0]["text"]
        assert before.messages[-1]["content"].startswith(f"{question}\n\n<system-reminder>")
        assert after.report["counts"]["digested"] == 0
    assert built[-1].messages[0] == {"role": "system", "content": SYSTEM}
    assert len(built[-1].messages) == 1 + 2 * TURNS - 1 + 2 * rounds
    changed, share = reuse(built)
    assert changed == 0
    record_property("prefix_token_reuse", round(share, 4))
    print(f"steady conversation: {share:.1%} of prompt tokens reused from the previous request")
    assert share > 0.9


@pytest.mark.parametrize("per_turn", [1, 2])
def test_a_tool_heavy_conversation_changes_its_prefix_only_in_digest_batches(
    per_turn, record_property
):
    settings = ContextSettings(keep_last_rounds=2, digest_batch=3)
    built, rounds = requests(lambda t: per_turn, settings)
    assert rounds == per_turn * (TURNS - 1)
    changed, share = reuse(built)
    assert changed <= math.ceil(rounds / 3)
    # the digest boundary moved exactly when a batch of three more rounds became old
    digested = [a.report["counts"]["digested"] for a in built]
    assert all(d % 3 == 0 for d in digested)
    assert digested[-1] == (rounds - 2) - (rounds - 2) % 3
    moves = sum(1 for x, y in pairwise(digested) if x != y)
    assert changed == moves
    # ... and what changed is old tool results: every request still starts with the system
    # message and the first question, and the first difference is a tool result
    assert all(a.messages[:2] == built[0].messages[:2] for a in built)
    assert built[0].messages[1]["content"].startswith(user(0)["parts"][0]["text"])
    for before, after in pairwise(built):
        prefix = dumps(before.messages[:-1])
        same = common_prefix(prefix, dumps(after.messages))
        if same < len(prefix):
            assert after.messages[same]["role"] == "tool"
            assert after.messages[same]["content"].startswith("[digest] getWorkflow compact")
    record_property("prefix_token_reuse", round(share, 4))
    record_property("prefix_changes", changed)
    print(
        f"tool-heavy ({per_turn} rounds a turn, {rounds} rounds): prefix changed in {changed} "
        f"of {len(built) - 1} requests; {share:.1%} of prompt tokens reused"
    )
    assert share > 0.75
