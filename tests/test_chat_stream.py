"""/api/assistant/chat end to end: our real server, the real openai client, the scripted
provider, and every stream checked by the real AI SDK client parser."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .helpers import (
    chat_body,
    content_parts,
    context_report,
    normalize_ids,
    sent,
    sse_events,
    types,
    user,
    without_context,
)
from .scripted_provider import Pause, Stream, call_piece, chunk, text_reply, usage_chunk

TOOL_NAMES = [
    "getWorkflow",
    "addNode",
    "removeNodes",
    "connectNodes",
    "setWidgetValues",
    "queueWorkflow",
    "loadWorkflow",
    "loadTemplate",
    "findMissing",
    "installNodePacks",
    "downloadModels",
    "restartComfyUI",
    "searchInstalledNodes",
    "searchTemplates",
    "getNodeDefinition",
    "getAvailableModels",
    "readDocumentation",
    "listSystemSkills",
    "getSystemSkill",
    "listUserSkills",
    "getUserSkill",
    "createUserSkill",
    "updateUserSkill",
    "recallToolResult",
    "searchConversation",
    "delegate",
]  # readSystemContext is offered only when sections were left out


def meta(source: str = "environment") -> dict[str, Any]:
    return {
        "type": "message-metadata",
        "messageMetadata": {"model": "scripted-model", "modelSource": source},
    }


async def test_text_streams_as_it_arrives_and_the_provider_gets_the_full_request(
    assistant, provider, sdk
):
    provider.enqueue(text_reply("Hel", "lo", " there", usage=(42, 3)))
    status, body = await assistant.chat(chat_body(user("hi")))
    assert status == 200
    assert normalize_ids(without_context(sse_events(body))) == [
        {"type": "start", "messageId": "<msg_0>"},
        meta(),
        {"type": "start-step"},
        {"type": "text-start", "id": "<txt_0>"},
        {"type": "text-delta", "id": "<txt_0>", "delta": "Hel"},
        {"type": "text-delta", "id": "<txt_0>", "delta": "lo"},
        {"type": "text-delta", "id": "<txt_0>", "delta": " there"},
        {"type": "text-end", "id": "<txt_0>"},
        {"type": "finish-step"},
        {
            "type": "finish",
            "finishReason": "stop",
            "messageMetadata": {
                "model": "scripted-model",
                "usage": {"promptTokens": 42, "completionTokens": 3, "totalTokens": 45},
            },
        },
    ]
    message = sdk.check(body)["message"]
    assert content_parts(message) == [
        {"type": "step-start"},
        {"type": "text", "text": "Hello there", "state": "done"},
    ]
    assert message["metadata"]["usage"]["promptTokens"] == 42

    request = provider.requests[0]
    assert request["model"] == "scripted-model"
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert request["messages"][0]["role"] == "system"
    assert sent(provider)[1:] == [{"role": "user", "content": "hi"}]
    assert [t["function"]["name"] for t in request["tools"]] == TOOL_NAMES


async def test_reasoning_content_then_text(assistant, provider, sdk):
    provider.enqueue(
        Stream(
            [
                chunk(reasoning_content="Let me "),
                chunk(reasoning_content="think."),
                chunk("Answer."),
                chunk(finish_reason="stop"),
            ]
        )
    )
    _, body = await assistant.chat(chat_body(user("q")))
    assert types(without_context(sse_events(body)))[2:10] == [
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
    ]
    parts = content_parts(sdk.check(body)["message"])
    assert [(p["type"], p.get("text")) for p in parts] == [
        ("step-start", None),
        ("reasoning", "Let me think."),
        ("text", "Answer."),
    ]


async def test_reasoning_field_and_think_tags_split_across_chunks(assistant, provider, sdk):
    provider.enqueue(
        Stream([chunk(reasoning="plan. "), chunk(finish_reason=None), chunk("ok")]),
        Stream([chunk("<thi"), chunk("nk>step one"), chunk("</th"), chunk("ink>\n\nDone.")]),
    )
    _, first = await assistant.chat(chat_body(user("a")))
    _, second = await assistant.chat(chat_body(user("b")))
    for body, expected in (
        (first, [("reasoning", "plan. "), ("text", "ok")]),
        (second, [("reasoning", "step one"), ("text", "Done.")]),
    ):
        parts = content_parts(sdk.check(body)["message"])
        assert [(p["type"], p["text"]) for p in parts if p["type"] != "step-start"] == expected


async def test_tool_call_in_pieces_is_streamed_then_available(assistant, provider, sdk):
    provider.enqueue(
        Stream(
            [
                chunk("Adding it."),
                chunk(tool_calls=[call_piece(0, id="call_1", name="addNode", arguments="")]),
                chunk(tool_calls=[call_piece(0, arguments='{"nodeType":')]),
                chunk(tool_calls=[call_piece(0, arguments=' "KSampler"}')]),
                chunk(finish_reason="tool_calls"),
            ]
        )
    )
    _, body = await assistant.chat(chat_body(user("add a sampler")))
    events = normalize_ids(without_context(sse_events(body)))
    assert events[3:] == [
        {"type": "text-start", "id": "<txt_0>"},
        {"type": "text-delta", "id": "<txt_0>", "delta": "Adding it."},
        {"type": "text-end", "id": "<txt_0>"},
        {"type": "tool-input-start", "toolCallId": "call_1", "toolName": "addNode"},
        {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": '{"nodeType":'},
        {"type": "tool-input-delta", "toolCallId": "call_1", "inputTextDelta": ' "KSampler"}'},
        {
            "type": "tool-input-available",
            "toolCallId": "call_1",
            "toolName": "addNode",
            "input": {"nodeType": "KSampler"},
        },
        {"type": "finish-step"},
        {
            "type": "finish",
            "finishReason": "tool-calls",
            "messageMetadata": {"model": "scripted-model"},
        },
    ]
    parts = content_parts(sdk.check(body)["message"])
    assert parts[-1] == {
        "type": "tool-addNode",
        "toolCallId": "call_1",
        "state": "input-available",
        "input": {"nodeType": "KSampler"},
    }


async def test_whole_and_parallel_calls_are_all_delivered(assistant, provider, sdk):
    whole = call_piece(0, id="c_a", name="getWorkflow", arguments='{"detail": "summary"}')
    provider.enqueue(
        Stream([chunk(tool_calls=[whole]), chunk(finish_reason="tool_calls")]),
        Stream(
            [
                chunk(tool_calls=[call_piece(0, id="c_1", name="removeNodes", arguments="")]),
                chunk(tool_calls=[call_piece(1, id="c_2", name="addNode", arguments="")]),
                chunk(tool_calls=[call_piece(0, arguments='{"nodeIds": [3]}')]),
                chunk(tool_calls=[call_piece(1, arguments='{"nodeType": "VAEDecode"}')]),
                chunk(finish_reason="tool_calls"),
            ]
        ),
        # Some servers number every parallel call index 0 (a new id means a new call), and
        # some send the arguments as an object instead of a JSON string.
        Stream(
            [
                chunk(tool_calls=[call_piece(0, id="x1", name="getWorkflow", arguments="{}")]),
                chunk(
                    tool_calls=[
                        {
                            "index": 0,
                            "id": "x2",
                            "function": {
                                "name": "queueWorkflow",
                                "arguments": {"waitForResult": False},
                            },
                        }
                    ]
                ),
                chunk(finish_reason="stop"),
            ]
        ),
    )
    expected = [
        [("getWorkflow", "c_a", {"detail": "summary"})],
        [("removeNodes", "c_1", {"nodeIds": [3]}), ("addNode", "c_2", {"nodeType": "VAEDecode"})],
        [("getWorkflow", "x1", {}), ("queueWorkflow", "x2", {"waitForResult": False})],
    ]
    for calls in expected:
        _, body = await assistant.chat(chat_body(user("go")))
        result = sdk.check(body)
        tool_parts = [p for p in result["message"]["parts"] if p["type"].startswith("tool-")]
        assert [(p["type"][5:], p["toolCallId"], p["input"]) for p in tool_parts] == calls
        assert all(p["state"] == "input-available" for p in tool_parts)
        assert sse_events(body)[-1]["finishReason"] == "tool-calls"


async def test_invalid_arguments_and_unknown_tools_become_input_errors(assistant, provider, sdk):
    provider.enqueue(
        Stream(
            [
                chunk(tool_calls=[call_piece(0, id="bad", name="addNode", arguments='{"node')]),
                chunk(tool_calls=[call_piece(1, id="arr", name="getWorkflow", arguments="[1]")]),
                chunk(
                    tool_calls=[call_piece(2, id="nope", name="deleteEverything", arguments="{}")]
                ),
                chunk(finish_reason="tool_calls"),
            ]
        )
    )
    _, body = await assistant.chat(chat_body(user("go")))
    errors = {e["toolCallId"]: e for e in sse_events(body) if e["type"] == "tool-input-error"}
    assert set(errors) == {"bad", "arr", "nope"}
    assert errors["bad"]["input"] == '{"node'
    assert errors["bad"]["errorText"].startswith("The arguments for addNode are not valid JSON")
    assert "Call the tool again" in errors["bad"]["errorText"]
    assert "must be a JSON object, not list" in errors["arr"]["errorText"]
    assert errors["nope"]["errorText"].startswith("There is no tool named 'deleteEverything'")
    assert "addNode" in errors["nope"]["errorText"]
    parts = content_parts(sdk.check(body)["message"])
    states = {p["toolCallId"]: p["state"] for p in parts if "toolCallId" in p}
    assert states == {"bad": "output-error", "arr": "output-error", "nope": "output-error"}


async def test_arguments_cut_by_the_output_limit_say_so(assistant, provider, sdk):
    provider.enqueue(
        Stream(
            [
                chunk(tool_calls=[call_piece(0, id="c", name="loadWorkflow", arguments='{"wo')]),
                chunk(finish_reason="length"),
            ]
        )
    )
    _, body = await assistant.chat(chat_body(user("load")))
    sdk.check(body)
    (error,) = [e for e in sse_events(body) if e["type"] == "tool-input-error"]
    assert "reached the output token limit" in error["errorText"]


async def test_continuation_reuses_the_assistant_message_id(assistant, provider, sdk):
    assistant_message = {
        "id": "msg_first",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Reading.", "state": "done"},
            {
                "type": "tool-getWorkflow",
                "toolCallId": "call_9",
                "state": "output-available",
                "input": {"detail": "compact"},
                "output": {"nodes": 3},
            },
        ],
    }
    provider.enqueue(text_reply("It has 3 nodes."))
    body = chat_body(user("how many nodes?"), assistant_message, messageId="msg_first")
    _, sse = await assistant.chat(body)
    events = sse_events(sse)
    assert events[0] == {"type": "start", "messageId": "msg_first"}
    message = sdk.check(sse, message=assistant_message)["message"]
    assert message["id"] == "msg_first"
    assert [p["type"] for p in content_parts(message)] == [
        "step-start",
        "text",
        "tool-getWorkflow",
        "step-start",
        "text",
    ]
    assert sent(provider)[1:] == [
        {"role": "user", "content": "how many nodes?"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "getWorkflow", "arguments": '{"detail":"compact"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": '{"nodes":3}'},
    ]


async def test_keepalive_comments_flow_while_the_model_is_silent(assistant, provider, sdk):
    provider.enqueue(Stream([Pause(0.7), chunk("late"), chunk(finish_reason="stop")]))
    _, body = await assistant.chat(chat_body(user("hi")))
    head = body.split("text-start")[0]
    assert head.count(": ping\n\n") >= 2
    assert content_parts(sdk.check(body)["message"])[-1]["text"] == "late"


async def test_usage_only_reported_when_the_provider_sends_it(assistant, provider, sdk):
    provider.enqueue(
        Stream([chunk("a"), chunk(finish_reason="stop"), usage_chunk(7, 1)]),
        Stream([chunk("b"), chunk(finish_reason="stop")]),
    )
    for expected in ({"promptTokens": 7, "completionTokens": 1, "totalTokens": 8}, None):
        _, body = await assistant.chat(chat_body(user("x")))
        metadata = sdk.check(body)["message"]["metadata"]
        assert metadata.get("usage") == expected


async def test_images_and_client_declared_tools_reach_the_provider(assistant, provider, sdk):
    image = "data:image/png;base64,iVBORw0KGgo="
    message = {
        "id": "u1",
        "role": "user",
        "parts": [
            {"type": "text", "text": "what is this?"},
            {"type": "file", "mediaType": "image/png", "url": image, "filename": "a.png"},
        ],
    }
    extra_tool = {"description": "Say hi", "parameters": {"type": "object", "properties": {}}}
    provider.enqueue(text_reply("A pixel."))
    body = chat_body(
        message, tools={"sayHi": extra_tool, "addNode": extra_tool}, system="Be terse."
    )
    status, _ = await assistant.chat(body)
    assert status == 200
    request = provider.requests[0]
    assert sent(provider)[1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": image}},
        ],
    }
    names = [t["function"]["name"] for t in request["tools"]]
    assert names == [*TOOL_NAMES, "sayHi"]  # the registry's addNode wins over the panel's
    assert request["messages"][0]["content"].endswith("\n\nBe terse.")


async def test_system_message_is_byte_identical_across_turns(assistant, provider):
    provider.enqueue(text_reply("one"), text_reply("two"))
    await assistant.chat(chat_body(user("first")))
    second = chat_body(
        user("first"),
        {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "one"}]},
        user("second", id="u2"),
    )
    await assistant.chat(second)
    first_system, second_system = (r["messages"][0] for r in provider.requests)
    assert json.dumps(first_system) == json.dumps(second_system)


async def test_a_silent_model_shows_that_we_wait_for_it(provider, tmp_path, sdk):
    # a local model reading a long prompt (Ollama reports no progress; llama-server answers
    # only once it read it): after a while of silence the answer says how long it has waited,
    # updates it, and clears it when the model speaks; the stored answer matches the stream
    from comfyui_assistant.core.stream.sse import PumpOptions

    from .conftest import start_app

    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "32768"}
    pump = PumpOptions(keepalive_seconds=0.2, poll_seconds=0.02, idle_seconds=0.25)
    app = await start_app(tmp_path / "data", env, pump=pump)
    try:
        provider.enqueue(Stream([Pause(0.7), chunk("Here."), chunk(finish_reason="stop")]))
        provider.enqueue(Stream([chunk("Late."), chunk(finish_reason="stop")], before=0.7))
        provider.enqueue(text_reply("Quick."))
        bodies = []
        said = ("hi", "later", "again")
        for i in range(len(said)):
            history = [user(t, f"u{j}") for j, t in enumerate(said[: i + 1])]
            _, body = await app.chat({**chat_body(*history), "id": f"t{i}"})
            bodies.append(body)
        for body, said in zip(bodies[:2], ("Here.", "Late."), strict=True):
            statuses = [e["data"] for e in sse_events(body) if e["type"] == "data-status"]
            assert len(statuses) >= 3 and statuses[-1] == {"text": "", "done": True}
            assert all(s["text"].startswith("Waiting for the model… (") for s in statuses[:-1])
            message = sdk.check(body)["message"]
            assert message["parts"][-1]["text"] == said
        async with app.session.get(app.base + "/api/assistant/threads/t0") as resp:
            answer = (await resp.json())["messages"][-1]
        assert [p["data"] for p in answer["parts"] if p["type"] == "data-status"] == [
            {"text": "", "done": True}
        ]
        # a model that answers at once shows nothing of it
        assert not [e for e in sse_events(bodies[2]) if e["type"] == "data-status"]
    finally:
        await app.close()


class Endless:
    """A provider that ignores max_tokens: words, forever."""

    def __iter__(self) -> Any:
        while True:
            yield from [chunk("word ")] * 100
            yield Pause(0.001)


async def test_each_call_asks_for_the_answers_reserve_and_a_provider_past_it_is_cut_off(
    assistant, provider, sdk
):
    provider.enqueue(Stream(Endless()))  # type: ignore[arg-type]
    status, body = await asyncio.wait_for(assistant.chat(chat_body(user("talk"))), 60)
    assert status == 200
    reserve = context_report(body)["tokens"]["reserve"]
    # the budget keeps 5% of a 32K window free; a short request leaves the answer its whole
    # limit, 20% of the window
    assert reserve == 1638 and provider.requests[0]["max_tokens"] == 6553
    reserve = 6553
    assert provider.disconnects  # the provider's stream was closed...
    result = sdk.check(body)  # ...and the answer ends as the client expects
    assert sse_events(body)[-1]["finishReason"] == "length"
    text, note = [p["text"] for p in content_parts(result["message"]) if p["type"] == "text"]
    assert text.startswith("word word") and reserve < text.count("word") < 3 * reserve
    assert note.startswith(
        "I stopped here: the model went on writing far past this answer's limit of 6,553 tokens"
    )
    async with assistant.session.get(assistant.base + "/api/assistant/threads/thread-1") as r:
        stored = (await r.json())["messages"][1]
    assert stored["parts"] == result["message"]["parts"]


def test_openai_is_asked_with_max_completion_tokens():
    """Its newer models (o-series, gpt-5) refuse max_tokens; the others take this too."""
    from comfyui_assistant.core.provider.provider_profiles import profile_for

    assert profile_for("https://api.openai.com/v1").output_limit == "max_completion_tokens"
    assert profile_for("http://127.0.0.1:8080/v1").output_limit == "max_tokens"
