"""The validator: every broken provider invariant named; a repair makes any request valid."""

from __future__ import annotations

from typing import Any

import pytest
from comfyui_assistant.core.context.context_validate import problems, repair
from hypothesis import given, settings
from hypothesis import strategies as st

Message = dict[str, Any]
SYSTEM: Message = {"role": "system", "content": "You help."}


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def call(*ids: str) -> Message:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def result(call_id: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([SYSTEM, user("a"), call("c1"), result("c1")], []),
        ([user("a")], ["the first message is not the system message"]),
        (
            [SYSTEM, {"role": "assistant", "content": "hi"}],
            ["the first turn is assistant, not user"],
        ),
        (
            [SYSTEM, user("a"), user("b")],
            ["message 2: two user messages in a row"],
        ),
        (
            [SYSTEM, user("a"), call("c1"), user("b")],
            ["message 3: calls without results: ['c1']"],
        ),
        ([SYSTEM, user("a"), result("c9")], ["message 2: a tool result without its call"]),
        (
            [SYSTEM, user("a"), call("c1"), result("c1"), call("c1"), result("c1")],
            ["message 4: a missing or repeated tool call id"],
        ),
        (
            [SYSTEM, user("a"), call("c1")],
            ["the request ends with calls without results: ['c1']"],
        ),
        (
            [SYSTEM, user("a"), {"role": "assistant", "content": ""}],
            ["message 2: an empty assistant message"],
        ),
        ([SYSTEM, user("a"), SYSTEM], ["a second system message"]),
    ],
)
def test_problems_name_each_broken_invariant(messages: list[Message], expected: list[str]) -> None:
    assert problems(messages) == expected
    if messages[0]["role"] == "system":  # (a repair cannot invent the system message)
        assert problems(repair(messages)) == []


# Random requests built from a small pool of messages (orphans, empty answers, repeated ids).
_POOL = [SYSTEM, user("a"), user("b"), call("c1"), call("c2", "c3"), result("c1"), result("c2")]
_POOL += [result("c3"), {"role": "assistant", "content": "x"}, {"role": "assistant", "content": ""}]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_POOL[1:]), max_size=16))
def test_repair_makes_any_request_valid(history: list[Message]) -> None:
    assert problems(repair([SYSTEM, *history])) == []
