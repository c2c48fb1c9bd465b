"""The validator, and its checkpoint: resuming a scan must give exactly a full scan's answer."""

from __future__ import annotations

from typing import Any

import pytest
from comfyui_assistant.core.context_validate import Checkpoint, problems, repair
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


def test_a_checkpoint_rescans_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    from comfyui_assistant.core import context_validate

    scanned: list[int] = []
    real = context_validate._scan

    def counting(messages: list[Message], start: int, state: Any) -> Any:
        scanned.append(len(messages) - start)
        return real(messages, start, state)

    monkeypatch.setattr(context_validate, "_scan", counting)
    history = [user("go")]
    for i in range(200):
        history += [call(f"c{i}"), result(f"c{i}"), {"role": "assistant", "content": "done"}]
    checkpoint = Checkpoint()
    assert checkpoint.problems([SYSTEM, *history, user("next")]) == []
    assert sum(scanned) == len(history) + 2  # the first request: everything
    scanned.clear()
    new_system = {"role": "system", "content": "changed summary"}  # a fresh object each time
    assert checkpoint.problems([new_system, *history, user("next"), call("x")]) == [
        "the request ends with calls without results: ['x']"
    ]
    assert sum(scanned) <= 4  # only the tail


# Random requests built from a small pool of messages, so that successive requests share
# prefixes (by identity and by equality), differ in the middle, shrink or grow.
_POOL = [SYSTEM, user("a"), user("b"), call("c1"), call("c2", "c3"), result("c1"), result("c2")]
_POOL += [result("c3"), {"role": "assistant", "content": "x"}, {"role": "assistant", "content": ""}]
_requests = st.lists(st.lists(st.sampled_from(_POOL), max_size=14), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_POOL[1:]), max_size=16))
def test_repair_makes_any_request_valid(history: list[Message]) -> None:
    assert problems(repair([SYSTEM, *history])) == []


@settings(max_examples=400, deadline=None)
@given(_requests, st.booleans())
def test_a_checkpoint_answers_exactly_as_a_full_scan(
    requests: list[list[Message]], grow: bool
) -> None:
    checkpoint = Checkpoint()
    previous: list[Message] = []
    for messages in requests:
        if grow:  # mostly append to the previous request, as a thread does
            messages = previous + messages
        assert checkpoint.problems(messages) == problems(messages)
        previous = messages


def test_a_scan_that_fails_leaves_no_half_updated_checkpoint() -> None:
    checkpoint = Checkpoint()
    history = [SYSTEM, user("a"), call("c1"), result("c1"), user("b")]
    assert checkpoint.problems(history) == []
    broken = [*history[:-1], call("c2"), {"content": "no role"}, result("c2"), user("c")]
    with pytest.raises(KeyError):
        checkpoint.problems(broken)  # fails half-way through the new messages
    again = [*history[:-1], call("c2"), result("c2"), call("c2"), result("c2"), user("c")]
    assert (
        checkpoint.problems(again)
        == problems(again)
        == ["message 6: a missing or repeated tool call id"]
    )
    # and the last messages are scanned without changing what is kept
    tail = [*again[:-1], call("c3"), result("c3"), user("d")]
    assert checkpoint.problems(tail) == problems(tail)
    assert checkpoint.problems(tail) == problems(tail)
