"""A panel tool call the user denied (issue 35, item 1): its result is the decision, sent once
and never rewritten. Through the real server and the real AI SDK parser: the model calls
removeNodes, the panel asks, the user presses Deny (with or without words), then sends "hi";
each request the provider received is the one before plus new messages, byte for byte."""

from __future__ import annotations

import json
from typing import Any

from comfyui_assistant.core.base.ui_messages import DENIAL_WORDS, DENIED, denial_text

from .helpers import chat_body, content_parts, user
from .scripted_provider import Stream, call_piece, chunk, text_reply

ASKED = "Remove a node from the workflow."


def removal(call_id: str) -> Stream:
    piece = call_piece(0, id=call_id, name="removeNodes", arguments='{"nodeIds":[5]}')
    return Stream([chunk(tool_calls=[piece]), chunk(finish_reason="tool_calls")])


def denied(answer: dict[str, Any], call_id: str, reason: str | None) -> dict[str, Any]:
    """The answer as the panel resends it once the user pressed Deny: the call was put in state
    approval-requested by the panel (runtime/approvals.ts), then answered with the AI SDK's
    addToolApprovalResponse (a reason only when the user wrote one)."""
    approval: dict[str, Any] = {"id": f"approval_{call_id}", "requestReason": ASKED}
    approval.update(approved=False, **({"reason": reason} if reason is not None else {}))
    parts = [
        {**p, "state": "approval-responded", "approval": approval}
        if p.get("toolCallId") == call_id
        else p
        for p in answer["parts"]
    ]
    return {**answer, "parts": parts}


async def _deny_then_say_hi(assistant, provider, sdk, reason: str | None) -> dict[str, Any]:
    provider.enqueue(removal("rm1"), text_reply("Understood, I left it."), text_reply("Hello!"))
    asked = user("remove the empty image")
    _, body = await assistant.chat(chat_body(asked))
    first = sdk.check(body)["message"]
    (call,) = [p for p in first["parts"] if p["type"] == "tool-removeNodes"]
    assert call["state"] == "input-available"  # the panel runs it: it asks the user first

    answer = denied(first, "rm1", reason)
    _, body = await assistant.chat(chat_body(asked, answer))
    resubmitted = sdk.check(body, answer)["message"]
    (part,) = [p for p in resubmitted["parts"] if p["type"] == "tool-removeNodes"]
    # the decision ends the call, in the panel's copy and in the stored thread alike
    (asked_part,) = [p for p in answer["parts"] if p.get("toolCallId") == "rm1"]
    assert (part["state"], part["approval"]) == ("output-denied", asked_part["approval"])
    async with assistant.session.get(assistant.base + "/api/assistant/threads/thread-1") as r:
        stored = (await r.json())["messages"]
    assert stored[1]["parts"] == resubmitted["parts"]
    assert content_parts(resubmitted)[-1]["text"] == "Understood, I left it."

    _, body = await assistant.chat(chat_body(asked, resubmitted, user("hi", id="u2")))
    assert content_parts(sdk.check(body)["message"])[-1]["text"] == "Hello!"
    return part


def _requests(provider) -> list[list[dict[str, Any]]]:
    assert len(provider.requests) == 3
    return [r["messages"] for r in provider.requests]


def _result(messages: list[dict[str, Any]]) -> str:
    (tool,) = [m for m in messages if m["role"] == "tool"]
    assert tool["tool_call_id"] == "rm1"
    content: str = tool["content"]
    return content


async def test_a_denial_is_sent_once_and_every_later_request_extends_it(assistant, provider, sdk):
    await _deny_then_say_hi(assistant, provider, sdk, None)
    first, second, third = _requests(provider)
    assert second[: len(first)] == first
    assert [m["role"] for m in second[len(first) :]] == ["assistant", "tool"]
    assert second[len(first)]["tool_calls"] == [
        {
            "id": "rm1",
            "type": "function",
            "function": {"name": "removeNodes", "arguments": '{"nodeIds":[5]}'},
        }
    ]
    assert _result(second) == DENIED
    # "hi": the request before, byte for byte, then the answer and the new message
    sent_before = json.dumps(second, ensure_ascii=False)
    sent_after = json.dumps(third[: len(second)], ensure_ascii=False)
    assert sent_after == sent_before
    assert third[len(second) :][0] == {"role": "assistant", "content": "Understood, I left it."}
    assert third[-1]["role"] == "user" and third[-1]["content"].startswith("hi")
    assert len(third) == len(second) + 2


async def test_the_users_words_on_a_denial_go_to_the_model_as_they_wrote_them(
    assistant, provider, sdk
):
    words = 'Keep it — I need the "empty" image for the mask.'
    part = await _deny_then_say_hi(assistant, provider, sdk, words)
    assert part["approval"]["reason"] == words
    _, second, third = _requests(provider)
    said = f"{DENIED} The user said: {json.dumps(words, ensure_ascii=False)}"
    assert _result(second) == said == _result(third)
    assert third[: len(second)] == second


async def test_the_stock_reason_of_earlier_panels_is_not_quoted_as_the_users(
    assistant, provider, sdk
):
    await _deny_then_say_hi(assistant, provider, sdk, "The user denied it.")
    _, second, third = _requests(provider)
    assert _result(second) == DENIED == _result(third)


def test_blank_words_are_no_words_and_long_ones_are_cut_at_the_limit() -> None:
    assert denial_text({"id": "a", "approved": False, "reason": "  \n "}) == DENIED
    assert denial_text(None) == DENIED
    long = "x" * (DENIAL_WORDS + 50)
    cut = "x" * (DENIAL_WORDS - 1) + "…"
    assert denial_text({"reason": f"  {long} "}) == f'{DENIED} The user said: "{cut}"'


async def test_an_answered_call_without_an_approval_object_is_not_run_and_says_so(
    assistant, provider, sdk
):
    """(A hostile or broken client: `approval` not an object.) Not allowed is denied, at once,
    so the model's first request already reads it as the next ones will."""
    provider.enqueue(text_reply("ok"))
    call = {"type": "tool-removeNodes", "toolCallId": "rm9", "state": "approval-responded"}
    answer = {
        "id": "a1",
        "role": "assistant",
        "parts": [{"type": "step-start"}, {**call, "input": {}, "approval": "yes"}],
    }
    status, body = await assistant.chat(chat_body(user("remove it"), answer))
    assert status == 200
    (part,) = [
        p for p in sdk.check(body, answer)["message"]["parts"] if p.get("toolCallId") == "rm9"
    ]
    assert part["state"] == "output-denied"
    (tool,) = [m for m in provider.requests[0]["messages"] if m["role"] == "tool"]
    assert tool == {"role": "tool", "tool_call_id": "rm9", "content": DENIED}
