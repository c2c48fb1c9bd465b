from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from comfyui_assistant.core.chat.chat_request import (
    ChatRequest,
    ClientTool,
    RequestError,
    parse_chat_request,
)

ADD_NODE_SCHEMA = {
    "type": "object",
    "properties": {"type": {"type": "string"}, "x": {"type": "number"}},
    "required": ["type"],
}
GET_WORKFLOW_SCHEMA = {"type": "object", "properties": {}}


def _messages() -> list[dict[str, Any]]:
    return [
        {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
        {
            "id": "u1",
            "role": "user",
            "metadata": {"custom": True},
            "parts": [
                {"type": "text", "text": "Add a sampler"},
                {
                    "type": "file",
                    "mediaType": "image/png",
                    "url": "data:image/png;base64,AAAA",
                    "filename": "graph.png",
                },
            ],
        },
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "reasoning", "text": "Need the workflow.", "state": "done"},
                {
                    "type": "tool-getWorkflow",
                    "toolCallId": "call_1",
                    "state": "output-available",
                    "input": {},
                    "output": {"nodes": []},
                },
                {
                    "type": "dynamic-tool",
                    "toolName": "mcp_search",
                    "toolCallId": "call_2",
                    "state": "input-available",
                    "input": {"q": "ksampler"},
                },
                {"type": "data-usage", "id": "d1", "data": {"tokens": 10}},
                {"type": "source-url", "sourceId": "src", "url": "https://example.com"},
                {"type": "some-future-part", "whatever": [1, 2]},
                {"type": "text", "text": "Done.", "state": "done"},
            ],
        },
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]},
    ]


def _full_body() -> dict[str, Any]:
    return {
        "id": "thread-42",
        "messages": _messages(),
        "trigger": "regenerate-message",
        "messageId": "a1",
        "tools": {
            "addNode": {"description": "Add a node to the graph", "parameters": ADD_NODE_SCHEMA},
            "getWorkflow": {"description": "Read the graph", "inputSchema": GET_WORKFLOW_SCHEMA},
            "noSchema": {},
            "nullDescription": {"description": None, "parameters": {"type": "object"}},
        },
        "system": "You are a ComfyUI assistant.",
        "metadata": {"model": "qwen3", "temperature": 0.2},
        "unknownField": {"ignored": True},
        "body": {"extra": 1},
        "headers": None,
    }


def test_full_transport_body_parses() -> None:
    body = _full_body()
    assert parse_chat_request(body) == ChatRequest(
        thread_id="thread-42",
        messages=_messages(),
        trigger="regenerate-message",
        message_id="a1",
        system="You are a ComfyUI assistant.",
        tools=(
            ClientTool("addNode", "Add a node to the graph", ADD_NODE_SCHEMA),
            ClientTool("getWorkflow", "Read the graph", GET_WORKFLOW_SCHEMA),
            ClientTool("noSchema", "", {"type": "object"}),
            ClientTool("nullDescription", "", {"type": "object"}),
        ),
        metadata={"model": "qwen3", "temperature": 0.2},
    )
    assert body == _full_body(), "parsing must not modify the body"


def test_minimal_body_gets_the_defaults() -> None:
    messages = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
    assert parse_chat_request({"id": "t", "messages": copy.deepcopy(messages)}) == ChatRequest(
        thread_id="t",
        messages=messages,
        trigger="submit-message",
        message_id=None,
        system=None,
        tools=(),
        metadata={},
    )


def test_explicit_nulls_are_the_defaults() -> None:
    body = {
        "id": "x" * 200,
        "messages": [{"id": "a1", "role": "assistant", "parts": []}],
        "trigger": None,
        "messageId": None,
        "system": None,
        "tools": None,
        "metadata": None,
    }
    assert parse_chat_request(body) == ChatRequest(
        thread_id="x" * 200, messages=[{"id": "a1", "role": "assistant", "parts": []}]
    )


def _body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "thread-1",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    body.update(overrides)
    return body


def _with_parts(*parts: Any) -> dict[str, Any]:
    """A body whose second message holds `parts`, so paths name messages[1]."""
    return _body(
        messages=[
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
            {"id": "a1", "role": "assistant", "parts": [{"type": "step-start"}, *parts]},
        ]
    )


def _tools(tools: Any) -> dict[str, Any]:
    return _body(tools=tools)


ID_MESSAGE = "'id' (the thread id) must be a string of 1 to 200 characters"
MESSAGES_MESSAGE = "'messages' must be a non-empty list"
MESSAGE_ID = "messages[0].id must be a string of 1 to 200 characters (the message's id)"
TOOL_STATE = {"state": "input-available"}

BAD_BODIES: list[tuple[str, Any, str]] = [
    ("body is a list", [], "the body must be a JSON object with 'id' and 'messages'"),
    ("body is a string", "hello", "the body must be a JSON object"),
    ("body is null", None, "the body must be a JSON object"),
    ("id missing", {"messages": _body()["messages"]}, ID_MESSAGE),
    ("id empty", _body(id=""), ID_MESSAGE),
    ("id too long", _body(id="x" * 201), ID_MESSAGE),
    ("id not a string", _body(id=42), ID_MESSAGE),
    ("messages missing", {"id": "t"}, MESSAGES_MESSAGE),
    ("messages empty", _body(messages=[]), MESSAGES_MESSAGE),
    ("messages an object", _body(messages={"0": {}}), MESSAGES_MESSAGE),
    ("messages a string", _body(messages="hi"), MESSAGES_MESSAGE),
    (
        "too many messages",
        _body(messages=[{"role": "user", "parts": []}] * 10_001),
        "'messages' holds 10,001 messages, more than the limit of 10,000; start a new thread",
    ),
    (
        "too many parts in a message",
        _body(
            messages=[
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "a"}] * 10_001}
            ]
        ),
        "messages[0] holds 10,001 parts, more than the limit of 10,000 parts in one message",
    ),
    (
        "too many parts in a request",
        _body(
            messages=[
                {"id": f"u{i}", "role": "user", "parts": [{"type": "text", "text": "a"}] * 10_000}
                for i in range(20)
            ]
            + [{"id": "u20", "role": "user", "parts": [{"type": "text", "text": "a"}]}]
        ),
        "'messages' hold 200,001 parts in all, more than the limit of 200,000 parts in one "
        "request; start a new thread",
    ),
    ("message not an object", _body(messages=["hi"]), "messages[0] must be an object"),
    (
        "bad role",
        _body(messages=[_body()["messages"][0], {"role": "tool", "parts": []}]),
        "messages[1].role must be one of system, user, assistant (got 'tool')",
    ),
    (
        "role missing",
        _body(messages=[{"parts": []}]),
        "messages[0].role must be one of system, user, assistant (got None)",
    ),
    (
        "message id not a string",
        _body(messages=[{"id": 7, "role": "user", "parts": []}]),
        MESSAGE_ID,
    ),
    # the AI SDK gives every message one; the thread stores messages by it
    ("message id missing", _body(messages=[{"role": "user", "parts": []}]), MESSAGE_ID),
    ("message id null", _body(messages=[{"id": None, "role": "user", "parts": []}]), MESSAGE_ID),
    ("message id empty", _body(messages=[{"id": "", "role": "user", "parts": []}]), MESSAGE_ID),
    (
        "message id too long",
        _body(messages=[{"id": "m" * 201, "role": "user", "parts": []}]),
        MESSAGE_ID,
    ),
    (
        "message metadata a string",
        _body(messages=[{"id": "u1", "role": "user", "parts": [], "metadata": "x"}]),
        "messages[0].metadata must be an object (leave it out when there is none)",
    ),
    (
        "message metadata null",
        _body(messages=[{"id": "u1", "role": "user", "parts": [], "metadata": None}]),
        "messages[0].metadata must be an object (leave it out when there is none)",
    ),
    (
        "parts missing",
        _body(messages=[{"id": "u1", "role": "user", "content": "hi"}]),
        "messages[0].parts must be a list of message parts",
    ),
    (
        "parts not a list",
        _body(messages=[{"id": "u1", "role": "user", "parts": {"type": "text", "text": "hi"}}]),
        "messages[0].parts must be a list of message parts",
    ),
    ("part not an object", _with_parts("hi"), "messages[1].parts[1] must be an object"),
    (
        "part without type",
        _with_parts({"text": "hi"}),
        "messages[1].parts[1].type must be a non-empty string",
    ),
    (
        "part with empty type",
        _with_parts({"type": "", "text": "hi"}),
        "messages[1].parts[1].type must be a non-empty string",
    ),
    (
        "part with non-string type",
        _with_parts({"type": 3}),
        "messages[1].parts[1].type must be a non-empty string",
    ),
    (
        "text part without text",
        _with_parts({"type": "text"}),
        "messages[1].parts[1].text must be a string",
    ),
    (
        "text part with non-string text",
        _with_parts({"type": "text", "text": ["a"]}),
        "messages[1].parts[1].text must be a string",
    ),
    (
        "reasoning part without text",
        _with_parts({"type": "reasoning", "text": None}),
        "messages[1].parts[1].text must be a string",
    ),
    (
        "tool part without toolCallId",
        _with_parts({"type": "tool-addNode", **TOOL_STATE}),
        "messages[1].parts[1].toolCallId is required",
    ),
    (
        "tool part with empty toolCallId",
        _with_parts({"type": "tool-addNode", "toolCallId": "", **TOOL_STATE}),
        "messages[1].parts[1].toolCallId is required",
    ),
    (
        "tool part with non-string toolCallId",
        _with_parts({"type": "tool-addNode", "toolCallId": 1, **TOOL_STATE}),
        "messages[1].parts[1].toolCallId is required",
    ),
    (
        "tool part without state",
        _with_parts({"type": "tool-addNode", "toolCallId": "c1"}),
        "messages[1].parts[1].state must be a string",
    ),
    (
        "dynamic-tool without toolCallId",
        _with_parts({"type": "dynamic-tool", "toolName": "x", **TOOL_STATE}),
        "messages[1].parts[1].toolCallId is required",
    ),
    (
        "dynamic-tool without toolName",
        _with_parts({"type": "dynamic-tool", "toolCallId": "c1", **TOOL_STATE}),
        "messages[1].parts[1] needs a tool name matching [A-Za-z0-9_-]{1,64}",
    ),
    (
        "file part without url",
        _with_parts({"type": "file", "mediaType": "image/png"}),
        "messages[1].parts[1].url must be a string",
    ),
    (
        "file part without mediaType",
        _with_parts({"type": "file", "url": "data:image/png;base64,AAAA"}),
        "messages[1].parts[1].mediaType must be a string",
    ),
    (
        "bad trigger",
        _body(trigger="submit"),
        "'trigger' must be one of submit-message, regenerate-message",
    ),
    ("trigger not a string", _body(trigger=1), "'trigger' must be a string"),
    ("messageId not a string", _body(messageId=5), "'messageId' must be a string"),
    ("system not a string", _body(system=["a"]), "'system' must be a string"),
    ("metadata a list", _body(metadata=[]), "'metadata' must be an object"),
    ("metadata a string", _body(metadata="x"), "'metadata' must be an object"),
    (
        "tools a list",
        _tools([{"name": "addNode"}]),
        "'tools' must be an object mapping tool names to definitions",
    ),
    (
        "tool name with spaces",
        _tools({"add node": {}}),
        "tool name 'add node' must match [A-Za-z0-9_-]{1,64}",
    ),
    ("empty tool name", _tools({"": {}}), "tool name '' must match [A-Za-z0-9_-]{1,64}"),
    (
        "tool name too long",
        _tools({"a" * 65: {}}),
        f"tool name '{'a' * 65}' must match [A-Za-z0-9_-]{{1,64}}",
    ),
    (
        "tool name with a dot",
        _tools({"mcp.search": {}}),
        "tool name 'mcp.search' must match [A-Za-z0-9_-]{1,64}",
    ),
    (
        "tool name with a trailing newline",
        _tools({"addNode\n": {}}),
        "tool name 'addNode\\n' must match [A-Za-z0-9_-]{1,64}",
    ),
    ("tool spec not an object", _tools({"addNode": "adds"}), "tools.addNode must be an object"),
    (
        "tool parameters not an object",
        _tools({"addNode": {"parameters": "object"}}),
        "tools.addNode.parameters must be a JSON schema object",
    ),
    (
        "tool parameters null",
        _tools({"addNode": {"parameters": None}}),
        "tools.addNode.parameters must be a JSON schema object",
    ),
    (
        "tool inputSchema not an object",
        _tools({"addNode": {"inputSchema": ["type"]}}),
        "tools.addNode.parameters must be a JSON schema object",
    ),
    (
        "tool description not a string",
        _tools({"addNode": {"description": 5}}),
        "tools.addNode.description must be a string",
    ),
]


@pytest.mark.parametrize(
    ("body", "message"),
    [pytest.param(body, message, id=name) for name, body, message in BAD_BODIES],
)
def test_malformed_body_names_the_problem(body: Any, message: str) -> None:
    with pytest.raises(RequestError, match=re.escape(message)):
        parse_chat_request(body)


def test_request_error_is_a_value_error() -> None:
    assert issubclass(RequestError, ValueError)
    with pytest.raises(ValueError, match="'messages' must be a non-empty list"):
        parse_chat_request({"id": "t", "messages": []})


@pytest.mark.parametrize("name", ["a", "A" * 64, "get_workflow-2", "mcp__search"])
def test_valid_tool_names(name: str) -> None:
    request = parse_chat_request(_tools({name: {"description": "d"}}))
    assert request.tools == (ClientTool(name, "d", {"type": "object"}),)
