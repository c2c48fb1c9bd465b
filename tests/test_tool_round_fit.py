"""A step of more tool calls than fit an 8K window even as digests: the next request still
carries every call the model made, each answered by its result's digest or a note, within the
window (core/context/round_fold.py, context_stages.fit_turn). Before, the round was left out and
the model made the same calls again, step after step."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.base.json_text import compact_json
from comfyui_assistant.core.context.context_blocks import Block
from comfyui_assistant.core.context.round_fold import folded, short_notes, terse
from comfyui_assistant.core.tokens.tokens import counter_for

from .conftest import start_app
from .helpers import chat_body, sent, sse_events, user
from .scripted_provider import ScriptedProvider, searches_reply, text_reply

WINDOW = 8192
SHORT = "Not run: over the limit of 32 tool calls in one step."


def _digest(i: int) -> re.Pattern[str]:
    return re.compile(
        rf'\[digest\] searchInstalledNodes "load image {i}" -> \d+ results: .+ \(recall: call_{i}\)'
    )


def _calls(ids: range) -> list[dict[str, Any]]:
    """The calls as the request shows them: one not run shows no arguments (as an error part
    holds them: its full result quotes them)."""
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": "searchInstalledNodes",
                "arguments": compact_json({"query": f"load image {i}"}) if i < 32 else "{}",
            },
        }
        for i in ids
    ]


async def _second_request(tmp_path: Path, calls: int) -> tuple[dict[str, Any], str]:
    """What the model's second step was sent after `calls` calls in its first (with the limits
    its context report gave), and what the user was shown."""
    provider = await ScriptedProvider().start()
    provider.enqueue(
        searches_reply({f"call_{i}": f"load image {i}" for i in range(calls)}),
        text_reply("Found them."),
    )
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": str(WINDOW)}
    app = await start_app(tmp_path, env)
    try:
        status, body = await app.chat(chat_body(user("find the nodes that load images")))
    finally:
        await app.close()
        await provider.stop()
    assert status == 200 and len(provider.requests) == 2
    request = provider.requests[1]
    counter = counter_for(None)
    size = counter.messages(request["messages"]) + counter.tools(request["tools"])
    assert size + request["max_tokens"] <= WINDOW  # within the window, the reply's room kept
    events = sse_events(body)
    shown = "".join(e.get("delta", "") for e in events if e["type"] == "text-delta")
    limits = [e["data"]["limits"] for e in events if e["type"] == "data-context"][-1]
    return {**request, "messages": sent(provider, 1), "limits": limits}, shown


def _shape(messages: list[dict[str, Any]]) -> list[Any]:
    return [(m["role"], m.get("tool_call_id")) for m in messages]


async def test_80_calls_in_a_step_are_each_answered_in_the_next_request(tmp_path):
    request, shown = await _second_request(tmp_path, 80)
    system, asked, called, *results = request["messages"]
    assert system["role"] == "system"
    assert asked == {"role": "user", "content": "find the nodes that load images"}
    assert called == {"role": "assistant", "content": None, "tool_calls": _calls(range(80))}
    assert _shape(results) == [("tool", f"call_{i}") for i in range(80)]
    for i, result in enumerate(results[:32]):  # run: their digests
        assert _digest(i).fullmatch(result["content"]), result
    assert [r["content"] for r in results[32:]] == [SHORT] * 48  # not run: a short note each
    assert request["limits"][-2:] == [
        "the notes of the turn's calls over a step's limit shortened",
        "the tool results of the turn in progress shortened to fit",
    ]
    assert shown == "Found them."


async def test_200_calls_in_a_step_reach_the_model_folded(tmp_path):
    """200 calls (19 tokens each) do not fit an 8K window's history even without results: the
    168 that did not run are left out of the call message, and one note counts them."""
    request, shown = await _second_request(tmp_path, 200)
    _, asked, called, *results = request["messages"]
    assert asked == {"role": "user", "content": "find the nodes that load images"}
    assert called == {"role": "assistant", "content": None, "tool_calls": _calls(range(32))}
    assert _shape(results) == [("tool", f"call_{i}") for i in range(32)]
    for i, result in enumerate(results[:31]):
        assert _digest(i).fullmatch(result["content"]), result
    digest, note = results[31]["content"].split("\n")
    assert _digest(31).fullmatch(digest)
    assert note == (
        "[168 more calls of this step, left out here, were not run: a step may make at most 32 "
        "tool calls (searchInstalledNodes ×168). Make the calls still needed in the next step.]"
    )
    assert request["limits"][-3:] == [
        "the notes of the turn's calls over a step's limit shortened",
        "the turn's calls over a step's limit left out, counted in one note",
        "the tool results of the turn in progress shortened to fit",
    ]
    assert shown == "Found them."


# --- the two forms on their own -------------------------------------------------------------


def _round(results: list[Any]) -> Block:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, (name, _) in enumerate(results)
    ]
    messages = [
        {"role": "tool", "tool_call_id": f"c{i}", "content": content}
        for i, (_, content) in enumerate(results)
    ]
    return Block(
        "round", ({"role": "assistant", "content": None, "tool_calls": calls}, *messages), "a1"
    )


OVER = (
    "[digest] getWorkflow -> error: Not run: a step may make at most 2 tool calls and this was "
    "call {}. Make the calls still needed in… (recall: c{})"
)
IMAGE = [
    {"type": "text", "text": "[digest] viewImage -> 1 image"},
    {"type": "image_url", "image_url": {"url": "data:,"}},
]


def test_a_round_within_the_limit_is_left_as_it_is():
    block = _round([("getWorkflow", "[digest] getWorkflow -> 3 nodes (recall: c0)")])
    assert short_notes(block) is block and folded(block) is block and terse(block) is block


def test_a_terse_round_keeps_each_digest_s_count_and_recall_id():
    listed = '[digest] searchInstalledNodes "load image 0" -> 10 results: LoadImage, … (recall: c0)'
    block = _round(
        [
            ("searchInstalledNodes", listed + "\n[2 more calls of this step, left out here, …]"),
            ("viewImage", IMAGE),
        ]
    )
    assert [m["content"] for m in terse(block).messages[1:]] == [
        '[digest] searchInstalledNodes "load image 0" -> 10 results (recall: c0)\n'
        "[2 more calls of this step, left out here, …]",
        IMAGE,
    ]


@pytest.mark.parametrize("shorten_first", [False, True])
def test_a_folded_round_keeps_what_ran_and_counts_the_rest_by_tool(shorten_first):
    block = _round(
        [
            ("viewImage", IMAGE),
            ("getWorkflow", "[digest] getWorkflow -> 3 nodes (recall: c1)"),
            ("getWorkflow", OVER.format(3, 2)),
            ("addNode", OVER.format(4, 3).replace("getWorkflow", "addNode")),
            ("getWorkflow", OVER.format(5, 4)),
        ]
    )
    if shorten_first:
        block = short_notes(block)
        assert [m["content"] for m in block.messages[3:]] == [
            "Not run: over the limit of 2 tool calls in one step."
        ] * 3
    call, *results = folded(block).messages
    assert [c["id"] for c in call["tool_calls"]] == ["c0", "c1"]
    assert results == [
        {"role": "tool", "tool_call_id": "c0", "content": IMAGE},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "[digest] getWorkflow -> 3 nodes (recall: c1)\n[3 more calls of this "
            "step, left out here, were not run: a step may make at most 2 tool calls "
            "(getWorkflow ×2, addNode ×1). Make the calls still needed in the next step.]",
        },
    ]


def test_a_round_of_calls_none_of_which_ran_is_not_folded_away():
    block = _round([("getWorkflow", OVER.format(1, 0))])
    assert folded(block) is block
    assert json.dumps(short_notes(block).messages[1]["content"]) == json.dumps(
        "Not run: over the limit of 2 tool calls in one step."
    )
