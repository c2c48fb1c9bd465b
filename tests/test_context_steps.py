"""Each context-engine step alone, with whole expected outputs."""

from __future__ import annotations

import pytest
from comfyui_assistant.core.context import context_steps as steps
from comfyui_assistant.core.context.context_blocks import (
    Block,
    blocks_of,
    build_blocks,
    flatten,
    parts_of,
    render_results,
)
from comfyui_assistant.core.context.context_validate import (
    ContextInvariantError,
    problems,
    repair,
    validate,
)
from comfyui_assistant.core.store.sent_turns import SentTurn, turn_note


def user(text, id):
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def tool_turn(id, call_id, name="getWorkflow", output=None, text=None):
    parts = [
        {
            "type": f"tool-{name}",
            "toolCallId": call_id,
            "state": "output-available",
            "input": {"detail": "compact"},
            "output": output if output is not None else {"nodes": 3},
        }
    ]
    if text:
        parts.append({"type": "text", "text": text})
    return {"id": id, "role": "assistant", "parts": parts}


def sized(blocks, tokens):
    return [Block(b.kind, b.messages, b.source_id, tokens=tokens) for b in blocks]


def test_blocks_keep_rounds_atomic_and_remember_their_message():
    blocks = blocks_of(tool_turn("a1", "c1", text="Done."))
    assert [(b.kind, b.source_id, len(b.messages)) for b in blocks] == [
        ("round", "a1", 2),
        ("assistant", "a1", 1),
    ]
    assert blocks[0].messages[1] == {"role": "tool", "tool_call_id": "c1", "content": '{"nodes":3}'}


def test_a_pending_round_renders_to_the_round_built_whole():
    ui = tool_turn("a1", "c1", text="Done.", output={"nodes": [1, 2], "text": "é"})
    pending = blocks_of(ui, render=False)
    line = "[digest] getWorkflow compact -> 2 nodes (recall: c1)"
    assert pending[0].offset == 0 and pending[0].messages[1]["content"] == line  # its digest
    rendered = [render_results(b, parts_of(b, ui)) for b in pending]
    assert rendered == blocks_of(ui) and all(b.offset == -1 for b in rendered)
    digest = steps.digest_round(pending[0])
    assert digest.digested and digest.offset == -1 and digest.messages == pending[0].messages
    assert digest.messages == steps.digest_round(rendered[0]).messages


def test_pending_rounds_find_their_parts_among_several_rounds_of_a_message():
    ui = tool_turn("a1", "c1", output={"n": 1})
    second = {**ui["parts"][0], "toolCallId": "c2", "output": {"n": 2}}
    third = {**ui["parts"][0], "toolCallId": "c3", "output": {"n": 3}}
    ui["parts"] += [{"type": "step-start"}, second, third, {"type": "text", "text": "ok"}]
    pending = [b for b in blocks_of(ui, render=False) if b.kind == "round"]
    assert [b.offset for b in pending] == [0, 1]
    rendered = [render_results(b, parts_of(b, ui)) for b in pending]
    assert rendered == [b for b in blocks_of(ui) if b.kind == "round"]


@pytest.mark.parametrize(
    ("rounds", "keep", "batch", "digested"),
    [
        (0, 2, 3, 0),
        (2, 2, 3, 0),
        (3, 2, 3, 0),
        (4, 2, 3, 0),
        (5, 2, 3, 3),
        (7, 2, 3, 3),
        (8, 2, 3, 6),
        (5, 2, 1, 3),
        (6, 2, 1, 4),
    ],
)
def test_digests_advance_in_batches(rounds, keep, batch, digested):
    assert steps.digest_count(rounds, keep, batch) == digested


def test_old_rounds_are_digested_the_newest_kept_whole():
    ui = [user("go", "u1")] + [tool_turn(f"a{i}", f"c{i}") for i in range(5)]
    blocks = steps.digest_rounds(build_blocks(ui), keep_last=2, batch=1)
    results = [b.messages[1]["content"] for b in blocks if b.kind == "round"]
    assert [b.digested for b in blocks if b.kind == "round"] == [True, True, True, False, False]
    assert results[0].startswith("[digest] getWorkflow compact") and "c0" in results[0]
    assert results[3:] == ['{"nodes":3}', '{"nodes":3}']
    # the calls themselves are kept: the model still sees what it did
    assert blocks[1].messages[0]["tool_calls"][0]["id"] == "c0"


def test_a_huge_result_is_cut_to_its_share_and_stays_json():
    import json

    huge = {"nodes": [{"id": i, "type": "KSampler", "widgets": [i] * 20} for i in range(2000)]}
    blocks = build_blocks([user("x", "u"), tool_turn("a", "c", output=huge)])
    out = steps.cut_oversized(blocks, 500, lambda t: len(t) // 3)
    content = out[1].messages[1]["content"]
    assert out[1].cut and len(content) // 3 <= 500
    assert "nodes" in json.loads(content)


def test_a_user_message_is_sent_with_its_note_and_its_expansion():
    (block,) = build_blocks([user("/skill x make it", "u1")])
    note = turn_note(["Use metric units."], "2026-11-22 10:00 UTC")
    assert note == (
        "<system-reminder>\n- Use metric units.\n"
        "- Current date and time: 2026-11-22 10:00 UTC\n</system-reminder>"
    )
    assert flatten([steps.as_sent(block, SentTurn(note))]) == [
        {"role": "user", "content": f"/skill x make it\n\n{note}"}
    ]
    assert flatten([steps.as_sent(block, SentTurn(note, text="Do X."))]) == [
        {"role": "user", "content": f"Do X.\n\n{note}"}
    ]


def test_an_unanswered_user_message_gets_a_note_or_goes_when_retried():
    blocks = build_blocks([user("a", "u1"), user("b", "u2"), user("b", "u3")])
    out = steps.answer_gaps(blocks)
    assert [(b.kind, b.source_id) for b in out] == [
        ("user", "u1"), ("assistant", "u1"), ("user", "u3"),
    ]  # fmt: skip
    assert out[1].messages == (steps.NO_ANSWER,)


def test_the_system_message_is_cut_only_above_half_the_budget():
    count = len  # one token per character, for the arithmetic
    system = "Line one.\n" * 100  # 1000 "tokens"
    assert steps.truncate_system(system, 2000, count) == (system, False)
    cut, was_cut = steps.truncate_system(system, 1000, count)
    assert was_cut and cut.endswith(steps.TRUNCATED_SYSTEM)
    assert len(cut) <= 300 and cut.startswith("Line one.\n")


def test_priority_window_keeps_the_latest_turn_then_rounds_then_chatter():
    ui = [
        user("old question", "u1"),
        {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "old answer"}]},
        user("use the tool", "u2"),
        tool_turn("a2", "c2", text="ok"),
        user("latest", "u3"),
    ]
    blocks = sized(build_blocks(ui), 10)
    kept, dropped = steps.select_window(blocks, budget=35, note_tokens=5)
    # latest user (10) + the round (10) + the newest chatter (10), then a note: the history
    # must start with a user message; with the note there is no room for the older question
    assert [(b.kind, b.source_id) for b in kept] == [
        ("user", ""),
        ("round", "a2"),
        ("assistant", "a2"),
        ("user", "u3"),
    ]
    assert kept[0].messages[0]["content"] == steps.OMITTED_NOTE
    assert [(b.kind, b.source_id) for b in dropped] == [
        ("user", "u1"),
        ("assistant", "a1"),
        ("user", "u2"),
    ]
    kept, _ = steps.select_window(blocks, budget=40, note_tokens=5)
    assert [b.source_id for b in kept] == ["u2", "a2", "a2", "u3"]  # no note needed


def test_priority_window_never_starts_with_an_orphan():
    ui = [user("q", "u1"), tool_turn("a1", "c1", text="answer"), user("latest", "u2")]
    kept, _ = steps.select_window(sized(build_blocks(ui), 10), budget=20)
    assert [b.kind for b in kept] == ["user", "round", "user"]
    assert kept[0].messages[0]["content"] == steps.OMITTED_NOTE


def test_priority_window_message_cap():
    ui = [user(f"m{i}", f"u{i}") for i in range(10)]
    kept, dropped = steps.select_window(sized(build_blocks(ui), 1), 1000, max_messages=4)
    assert [b.source_id for b in kept] == ["u6", "u7", "u8", "u9"]
    assert len(dropped) == 6


GOOD = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c", "content": "r"},
    {"role": "assistant", "content": "done"},
]


def test_the_validator_accepts_a_valid_request_and_names_each_violation():
    assert problems(GOOD) == []
    assert validate(GOOD) == GOOD
    orphan = [GOOD[0], GOOD[1], GOOD[3]]
    assert problems(orphan) == ["message 2: a tool result without its call"]
    missing = GOOD[:3]
    assert problems(missing) == ["the request ends with calls without results: ['c']"]
    twice = [GOOD[0], GOOD[1], GOOD[1]]
    assert problems(twice) == ["message 2: two user messages in a row"]
    with pytest.raises(ContextInvariantError):
        validate(orphan)  # the suite runs with COMFY_ASSISTANT_STRICT=1


def test_repair_makes_any_violation_valid():
    broken = [GOOD[0], GOOD[2], GOOD[1], GOOD[1], GOOD[3], {"role": "assistant", "content": ""}]
    fixed = repair(broken)
    assert problems(fixed) == []
    assert fixed == [
        GOOD[0],
        {"role": "user", "content": "[Earlier messages were left out.]"},
        GOOD[2],
        {
            "role": "tool",
            "tool_call_id": "c",
            "content": "The tool did not run: no result was recorded.",
        },
        {"role": "user", "content": "u\n\nu"},
    ]
