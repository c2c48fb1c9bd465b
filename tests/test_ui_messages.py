from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from comfyui_assistant.core.base.ui_messages import (
    AWAITING,
    DENIED,
    INPUT_INCOMPLETE,
    NOT_RUN,
    system_texts,
    to_openai_messages,
)

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"


def user(*parts: dict[str, Any], id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": list(parts)}


def assistant(*parts: dict[str, Any], id: str = "a1") -> dict[str, Any]:
    return {"id": id, "role": "assistant", "parts": list(parts)}


def system(*parts: dict[str, Any], id: str = "s1") -> dict[str, Any]:
    return {"id": id, "role": "system", "parts": list(parts)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value, "state": "done"}


def reasoning(value: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": value, "state": "done"}


STEP: dict[str, Any] = {"type": "step-start"}


def tool(name: str, call_id: str, state: str, **extra: Any) -> dict[str, Any]:
    return {"type": f"tool-{name}", "toolCallId": call_id, "state": state, **extra}


def call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def data_url(media: str, payload: str) -> str:
    return f"data:{media};base64," + base64.b64encode(payload.encode()).decode()


# --- user messages -------------------------------------------------------------------------


def test_plain_user_text() -> None:
    assert to_openai_messages([user(text("Add a KSampler node"))]) == [
        {"role": "user", "content": "Add a KSampler node"}
    ]


def test_several_user_text_parts_are_joined_with_blank_lines() -> None:
    messages = [user(text("first"), text("second"), text("third"))]
    assert to_openai_messages(messages) == [{"role": "user", "content": "first\n\nsecond\n\nthird"}]


def test_user_image_file_makes_a_content_list() -> None:
    messages = [
        user(
            text("What is in this picture?"),
            {"type": "file", "mediaType": "image/png", "url": PNG, "filename": "cat.png"},
        )
    ]
    assert to_openai_messages(messages) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": PNG}},
            ],
        }
    ]


def test_user_image_only() -> None:
    messages = [user({"type": "file", "mediaType": "image/jpeg", "url": PNG})]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG}}]}
    ]


def test_text_data_url_file_is_decoded_into_a_text_part() -> None:
    notes = data_url("text/plain", "line 1\nline 2 é")
    messages = [
        user(
            text("Summarize the file"),
            {"type": "file", "mediaType": "text/plain", "url": notes, "filename": "notes.txt"},
        )
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "Summarize the file\n\n[file notes.txt]\nline 1\nline 2 é"}
    ]


def test_text_file_next_to_an_image_stays_a_text_part() -> None:
    workflow = data_url("application/json", '{"nodes": []}')
    messages = [
        user(
            {"type": "file", "mediaType": "application/json", "url": workflow},
            {"type": "file", "mediaType": "image/png", "url": PNG},
            text("Why does this fail?"),
        )
    ]
    assert to_openai_messages(messages) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": '[file attachment]\n{"nodes": []}'},
                {"type": "image_url", "image_url": {"url": PNG}},
                {"type": "text", "text": "Why does this fail?"},
            ],
        }
    ]


def test_percent_encoded_text_data_url_is_decoded() -> None:
    # RFC 2397: a data URL without ";base64" carries URL-encoded (percent-escaped) octets.
    url = "data:text/plain;charset=utf-8,hello%20world%0A100%25%20%C3%A9"
    messages = [user({"type": "file", "mediaType": "text/plain", "url": url, "filename": "a.txt"})]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "[file a.txt]\nhello world\n100% é"}
    ]


@pytest.mark.parametrize(
    ("part", "note"),
    [
        (
            {
                "type": "file",
                "mediaType": "application/pdf",
                "url": data_url("application/pdf", "%PDF-1.7"),
                "filename": "report.pdf",
            },
            "[file report.pdf (application/pdf) was attached but cannot be sent]",
        ),
        (
            {"type": "file", "mediaType": "application/zip", "url": "data:application/zip,PK"},
            "[file attachment (application/zip) was attached but cannot be sent]",
        ),
        (
            {
                "type": "file",
                "mediaType": "text/plain",
                "url": "https://example.com/notes.txt",
                "filename": "notes.txt",
            },
            "[file notes.txt (text/plain) was attached but cannot be sent]",
        ),
        (
            {
                "type": "file",
                "mediaType": "text/plain",
                "url": "data:text/plain;base64,@@not base64@@",
                "filename": "broken.txt",
            },
            "[file broken.txt (text/plain) was attached but cannot be sent]",
        ),
        (
            {
                "type": "file",
                "mediaType": "text/csv",
                "url": "data:text/csv;base64," + base64.b64encode(b"\xff\xfe\x00bad").decode(),
                "filename": "latin.csv",
            },
            "[file latin.csv (text/csv) was attached but cannot be sent]",
        ),
    ],
)
def test_unusable_file_becomes_a_note(part: dict[str, Any], note: str) -> None:
    assert to_openai_messages([user(text("see attached"), part)]) == [
        {"role": "user", "content": f"see attached\n\n{note}"}
    ]


def test_user_image_next_to_an_empty_text_part_sends_no_empty_text_block() -> None:
    # Providers such as Anthropic reject empty text content blocks ("text content blocks must
    # be non-empty"); assistant text already drops empty parts, user text must too.
    messages = [user(text(""), {"type": "file", "mediaType": "image/png", "url": PNG})]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG}}]}
    ]


def test_user_parts_that_are_not_text_or_file_are_not_sent() -> None:
    messages = [
        user(STEP, {"type": "data-context", "data": {"secret": 1}}, text("hi"), reasoning("hmm")),
        user({"type": "data-context", "data": {}}, id="u2"),
    ]
    assert to_openai_messages(messages) == [{"role": "user", "content": "hi"}]


# --- assistant text ------------------------------------------------------------------------


def test_assistant_text_only() -> None:
    messages = [user(text("hi")), assistant(STEP, text("Hello! How can I help?"))]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
    ]


def test_reasoning_data_source_and_step_markers_are_not_sent() -> None:
    messages = [
        user(text("hi")),
        assistant(
            STEP,
            reasoning("The user greets me."),
            {"type": "data-usage", "id": "d1", "data": {"tokens": 12}},
            {"type": "source-url", "sourceId": "s1", "url": "https://example.com", "title": "Ex"},
            {"type": "source-document", "sourceId": "s2", "mediaType": "text/plain", "title": "D"},
            text("Hello."),
            reasoning("Done."),
        ),
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},
    ]


def test_assistant_texts_in_one_step_are_joined_and_empty_ones_dropped() -> None:
    messages = [assistant(STEP, text("one"), text(""), reasoning("x"), text("two"))]
    assert to_openai_messages(messages) == [{"role": "assistant", "content": "one\n\ntwo"}]


@pytest.mark.parametrize(
    "parts",
    [
        [reasoning("thinking only")],
        [STEP, reasoning("thinking"), STEP],
        [STEP],
        [],
        [text("")],
        [{"type": "data-x", "data": 1}, {"type": "source-url", "sourceId": "s", "url": "u"}],
    ],
)
def test_assistant_message_without_text_or_tools_produces_nothing(
    parts: list[dict[str, Any]],
) -> None:
    messages = [user(text("hi")), assistant(*parts), user(text("again"), id="u2")]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "again"},
    ]


# --- tool rounds ---------------------------------------------------------------------------


def test_text_after_a_tool_round_becomes_a_second_assistant_message() -> None:
    messages = [
        user(text("What is in my workflow?")),
        assistant(
            STEP,
            text("Let me look."),
            tool(
                "getWorkflow",
                "call_1",
                "output-available",
                input={"detail": "full", "ids": [1, 2]},
                output={"nodes": [{"id": 1, "type": "KSampler"}], "note": "é"},
            ),
            text("You have one KSampler."),
        ),
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "What is in my workflow?"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [call("call_1", "getWorkflow", '{"detail":"full","ids":[1,2]}')],
        },
        result("call_1", '{"nodes":[{"id":1,"type":"KSampler"}],"note":"é"}'),
        {"role": "assistant", "content": "You have one KSampler."},
    ]


@pytest.mark.parametrize(
    ("output", "content"),
    [
        ("Queued prompt 42", "Queued prompt 42"),
        ("", ""),
        ('{"already": "json"}', '{"already": "json"}'),
        ({"b": 1, "a": [1, 2]}, '{"b":1,"a":[1,2]}'),
        ([1, "two"], '[1,"two"]'),
        (None, "null"),
        (3, "3"),
        (True, "true"),
    ],
)
def test_tool_output_string_is_sent_as_is_and_other_values_as_compact_json(
    output: Any, content: str
) -> None:
    messages = [assistant(tool("queueWorkflow", "c1", "output-available", input={}, output=output))]
    assert to_openai_messages(messages) == [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "queueWorkflow")]},
        result("c1", content),
    ]


def test_step_start_boundaries_split_steps() -> None:
    messages = [
        user(text("Build it")),
        assistant(
            STEP,
            text("Step one."),
            tool("addNode", "c1", "output-available", input={"type": "A"}, output="ok"),
            STEP,
            tool("addNode", "c2", "output-available", input={"type": "B"}, output="ok"),
            STEP,
            text("Step three, no tools."),
            STEP,
            text("Done."),
        ),
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "Build it"},
        {
            "role": "assistant",
            "content": "Step one.",
            "tool_calls": [call("c1", "addNode", '{"type":"A"}')],
        },
        result("c1", "ok"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c2", "addNode", '{"type":"B"}')],
        },
        result("c2", "ok"),
        {"role": "assistant", "content": "Step three, no tools."},
        {"role": "assistant", "content": "Done."},
    ]


def test_parallel_tool_calls_share_one_assistant_message() -> None:
    messages = [
        assistant(
            STEP,
            text("Adding both."),
            tool("addNode", "c1", "output-available", input={"type": "A"}, output={"id": 1}),
            tool("addNode", "c2", "output-error", input={"type": "B"}, errorText="unknown type"),
            STEP,
            text("One failed."),
        )
    ]
    assert to_openai_messages(messages) == [
        {
            "role": "assistant",
            "content": "Adding both.",
            "tool_calls": [
                call("c1", "addNode", '{"type":"A"}'),
                call("c2", "addNode", '{"type":"B"}'),
            ],
        },
        result("c1", '{"id":1}'),
        result("c2", "Error: unknown type"),
        {"role": "assistant", "content": "One failed."},
    ]


def test_dynamic_tool_takes_its_name_from_tool_name() -> None:
    messages = [
        assistant(
            {
                "type": "dynamic-tool",
                "toolName": "mcp_search",
                "toolCallId": "d1",
                "state": "output-available",
                "input": {"q": "sdxl"},
                "output": {"hits": 3},
            },
            tool("getWorkflow", "c2", "output-available", input={}, output="{}"),
        )
    ]
    assert to_openai_messages(messages) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("d1", "mcp_search", '{"q":"sdxl"}'), call("c2", "getWorkflow")],
        },
        result("d1", '{"hits":3}'),
        result("c2", "{}"),
    ]


@pytest.mark.parametrize(
    ("state", "extra", "arguments", "content"),
    [
        ("input-streaming", {}, "{}", INPUT_INCOMPLETE),
        ("input-streaming", {"input": {"type": "KSam"}}, '{"type":"KSam"}', INPUT_INCOMPLETE),
        ("input-available", {"input": {"type": "KSampler"}}, '{"type":"KSampler"}', NOT_RUN),
        (
            "output-error",
            {"input": {"type": "Nope"}, "errorText": "unknown node type Nope"},
            '{"type":"Nope"}',
            "Error: unknown node type Nope",
        ),
        (
            "output-error",
            {"input": {"type": "X"}},
            '{"type":"X"}',
            "Error: the tool failed without a message",
        ),
        (
            "output-error",
            {"input": '{"type": "KSampler"', "errorText": "Invalid JSON"},
            "{}",
            'Error: Invalid JSON\nThe arguments received were: {"type": "KSampler"',
        ),
        (
            "output-error",
            {"rawInput": "{oops", "errorText": "Invalid input"},
            "{}",
            "Error: Invalid input\nThe arguments received were: {oops",
        ),
        (
            "output-error",
            {"input": [1, "a"], "errorText": "Expected object"},
            "{}",
            'Error: Expected object\nThe arguments received were: [1,"a"]',
        ),
        (
            "output-denied",
            {"input": {"ids": [3]}, "approval": {"id": "ap1", "approved": False}},
            '{"ids":[3]}',
            DENIED,
        ),
        (
            "approval-requested",
            {"input": {"ids": [3]}, "approval": {"id": "ap1"}},
            '{"ids":[3]}',
            AWAITING,
        ),
        (
            "approval-responded",
            {"input": {"ids": [3]}, "approval": {"id": "ap1", "approved": True}},
            '{"ids":[3]}',
            AWAITING,
        ),
        (  # the user said no: the panel resubmits at once (the AI SDK's own denied approval)
            "approval-responded",
            {"input": {"ids": [3]}, "approval": {"id": "ap1", "approved": False}},
            '{"ids":[3]}',
            DENIED,
        ),
    ],
)
def test_every_tool_state_gets_exactly_one_result(
    state: str, extra: dict[str, Any], arguments: str, content: str
) -> None:
    messages = [
        user(text("go")),
        assistant(STEP, tool("removeNodes", "call_9", state, **extra)),
        user(text("continue"), id="u2"),
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("call_9", "removeNodes", arguments)],
        },
        result("call_9", content),
        {"role": "user", "content": "continue"},
    ]


@pytest.mark.parametrize("value", [None, "raw text", [1, 2], 3, True])
def test_tool_input_that_is_not_an_object_is_sent_as_empty_arguments(value: Any) -> None:
    messages = [assistant(tool("getWorkflow", "c1", "output-available", input=value, output="x"))]
    assert to_openai_messages(messages) == [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "getWorkflow", "{}")]},
        result("c1", "x"),
    ]


def test_tool_without_input_key_is_sent_as_empty_arguments() -> None:
    messages = [assistant(tool("getWorkflow", "c1", "input-available"))]
    assert to_openai_messages(messages) == [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "getWorkflow", "{}")]},
        result("c1", NOT_RUN),
    ]


def test_arguments_keep_key_order_and_unicode() -> None:
    args = {"z": "é 日本", "a": {"nested": [None, 1.5]}}
    messages = [assistant(tool("setWidgetValues", "c1", "input-available", input=args))]
    assert to_openai_messages(messages) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("c1", "setWidgetValues", '{"z":"é 日本","a":{"nested":[null,1.5]}}')
            ],
        },
        result("c1", NOT_RUN),
    ]


def test_interrupted_run_across_messages_keeps_every_call_answered() -> None:
    messages = [
        user(text("do it")),
        assistant(
            STEP,
            tool("addNode", "c1", "output-available", input={"t": 1}, output="ok"),
            tool("addNode", "c2", "input-available", input={"t": 2}),
            STEP,
            tool("addNode", "c3", "input-streaming"),
            id="a1",
        ),
        user(text("why did you stop?"), id="u2"),
        assistant(STEP, text("You stopped me."), id="a2"),
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "do it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "addNode", '{"t":1}'), call("c2", "addNode", '{"t":2}')],
        },
        result("c1", "ok"),
        result("c2", NOT_RUN),
        {"role": "assistant", "content": None, "tool_calls": [call("c3", "addNode")]},
        result("c3", INPUT_INCOMPLETE),
        {"role": "user", "content": "why did you stop?"},
        {"role": "assistant", "content": "You stopped me."},
    ]


# --- system messages -----------------------------------------------------------------------


def test_system_messages_are_excluded_and_returned_by_system_texts() -> None:
    messages = [
        system(text("Always answer in French."), text(""), {"type": "data-x", "data": 1}),
        user(text("hi")),
        system(text("Be brief."), id="s2"),
        assistant(text("Salut.")),
    ]
    assert to_openai_messages(messages) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Salut."},
    ]
    assert system_texts(messages) == ["Always answer in French.", "Be brief."]


def test_system_texts_ignores_user_and_assistant_text() -> None:
    messages = [user(text("hi")), assistant(text("hello")), system(id="s1")]
    assert system_texts(messages) == []


# --- determinism ---------------------------------------------------------------------------


def _conversation() -> list[dict[str, Any]]:
    return [
        system(text("Be brief.")),
        user(text("Look at this"), {"type": "file", "mediaType": "image/png", "url": PNG}),
        assistant(
            STEP,
            reasoning("ok"),
            text("Checking."),
            tool("getWorkflow", "c1", "output-available", input={"b": 2, "a": 1}, output={"y": 1}),
            {
                "type": "dynamic-tool",
                "toolName": "mcp_x",
                "toolCallId": "c2",
                "state": "output-error",
                "input": "{bad",
                "errorText": "parse error",
            },
            STEP,
            text("Done."),
        ),
    ]


def test_conversion_is_deterministic_and_does_not_mutate_its_input() -> None:
    messages = _conversation()
    before = copy.deepcopy(messages)
    first = to_openai_messages(messages)
    second = to_openai_messages(copy.deepcopy(messages))
    assert messages == before
    assert first == second
    assert json.dumps(first) == json.dumps(second)
    assert json.dumps(first, ensure_ascii=False) == json.dumps(
        to_openai_messages(_conversation()), ensure_ascii=False
    )
