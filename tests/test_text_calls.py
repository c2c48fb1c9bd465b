"""Tool calls a model wrote as text or nearly right (issue 40), over real HTTP with the real
AI SDK client: recovered and repaired, never shown as text, each repair told to the model with
the result and counted in the context report; prose stays text."""

from __future__ import annotations

import json

from comfyui_assistant.core.base.repair_notes import repair_line

from .helpers import chat_body, content_parts, context_report, sent, sse_events, user
from .scripted_provider import Stream, call_piece, chunk, text_reply

HERMES = (
    "I'll look for an upscaler.\n<tool_call>\n"
    '{"name": "search_installed_nodes", "arguments": {"query": "upscale",}}\n</tool_call>'
)


def pieces(text: str, size: int = 5) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def shown(body: str) -> str:
    return "".join(e["delta"] for e in sse_events(body) if e["type"] == "text-delta")


async def test_a_call_written_as_text_runs_and_the_model_is_told_how_it_was_read(
    assistant, provider, sdk
):
    provider.enqueue(text_reply(*pieces(HERMES)), text_reply("Use ImageUpscaleWithModel."))
    status, body = await assistant.chat(chat_body(user("how do I upscale?")))
    assert status == 200
    result = sdk.check(body)
    # What the user saw as text: the words before the call, never its markup.
    assert shown(body) == "I'll look for an upscaler.Use ImageUpscaleWithModel."
    message = result["message"]
    assert [p["type"] for p in content_parts(message)] == [
        "step-start",
        "text",
        "tool-searchInstalledNodes",
        "step-start",
        "text",
    ]
    tool = content_parts(message)[2]
    notes = [
        "took the call you wrote as text (<tool_call>) as a call of search_installed_nodes",
        "dropped a trailing comma",
        "read `search_installed_nodes` as searchInstalledNodes",
    ]
    assert tool["state"] == "output-available" and tool["input"] == {"query": "upscale"}
    assert tool["callProviderMetadata"] == {"comfyui_assistant": {"repairs": notes}}
    # The next request: the call as a call, its result after the notes.
    first, second = sent(provider, 0), sent(provider, 1)
    assert second[: len(first)] == first
    call_message, result_message = second[len(first) :]
    assert call_message["content"] == "I'll look for an upscaler."
    assert call_message["tool_calls"][0]["function"] == {
        "name": "searchInstalledNodes",
        "arguments": '{"query":"upscale"}',
    }
    head, _, rest = result_message["content"].partition("\n")
    assert head == repair_line(notes)
    assert json.loads(rest) == tool["output"]
    assert context_report(body)["repairs"] == 3
    assert sse_events(body)[-1]["finishReason"] == "stop"


async def test_prose_that_shows_json_and_names_a_tool_stays_text(assistant, provider, sdk):
    prose = (
        "addNode adds one node. A model asks for it like this:\n```json\n"
        '{"name": "addNode", "arguments": {"nodeType": "KSampler"}}\n```\nthen the panel adds it.'
    )
    provider.enqueue(text_reply(*pieces(prose)))
    status, body = await assistant.chat(chat_body(user("how do tools work?")))
    assert status == 200
    result = sdk.check(body)
    assert shown(body) == prose
    assert [p["type"] for p in content_parts(result["message"])] == ["step-start", "text"]
    assert len(provider.requests) == 1
    assert context_report(body)["repairs"] == 0


async def test_a_nearly_right_native_call_is_read_by_the_schema(assistant, provider, sdk):
    args = '```json\n{"nodeType": "KSampler", "title": None}\n```'
    provider.enqueue(
        Stream(
            [
                chunk(tool_calls=[call_piece(0, id="c1", name="AddNode", arguments=args[:9])]),
                chunk(tool_calls=[call_piece(0, arguments=args[9:])]),
                chunk(finish_reason="tool_calls"),
            ]
        )
    )
    status, body = await assistant.chat(chat_body(user("add a sampler")))
    assert status == 200
    result = sdk.check(body)
    available = [e for e in sse_events(body) if e["type"] == "tool-input-available"]
    notes = [
        "read `AddNode` as addNode",
        "read the arguments out of a code fence",
        "read Python's True/False/None as JSON",
    ]
    assert available == [
        {
            "type": "tool-input-available",
            "toolCallId": "c1",
            "toolName": "addNode",
            "input": {"nodeType": "KSampler", "title": None},
            "providerMetadata": {"comfyui_assistant": {"repairs": notes}},
        }
    ]
    assert [p["type"] for p in content_parts(result["message"])] == ["step-start", "tool-addNode"]
    assert sse_events(body)[-1]["finishReason"] == "tool-calls"

    # The panel runs addNode and resubmits: the model reads how its call was read, then the
    # result, and sees its call as it was read.
    add = content_parts(result["message"])[-1]
    add.update(state="output-available", output={"nodeId": 4})
    provider.enqueue(text_reply("Added."))
    _, body = await assistant.chat(
        chat_body(user("add a sampler"), result["message"], messageId="x")
    )
    sdk.check(body, result["message"])
    call_message, result_message = sent(provider, 1)[-2:]
    assert call_message["tool_calls"][0]["function"] == {
        "name": "addNode",
        "arguments": '{"nodeType":"KSampler","title":null}',
    }
    assert result_message == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": repair_line(notes) + '\n{"nodeId":4}',
    }
    assert context_report(body)["repairs"] == 3
