"""Property tests for the UI -> OpenAI message conversion: what every provider requires."""

from __future__ import annotations

import copy
import json
from typing import Any

from comfyui_assistant.core.base.ui_messages import (
    AWAITING,
    DENIED,
    INPUT_INCOMPLETE,
    NOT_RUN,
    system_texts,
    to_openai_messages,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# Generated text never holds "\n" (so "\n\n" in the output can only be a joining separator)
# nor "§" (so the leak markers below can only come from the parts that carry them).
MARKER = "§LEAK§"
SYSTEM_MARKER = "§SYSTEM§"
_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n§")
TEXTS = st.text(alphabet=_CHARS, max_size=12)
KEYS = st.text(alphabet=_CHARS, max_size=4)
TOOL_NAMES = st.text(alphabet="abcdefgXYZ_-0123456789", min_size=1, max_size=8)
STATES = (
    "input-streaming",
    "input-available",
    "output-available",
    "output-error",
    "output-denied",
    "approval-requested",
    "approval-responded",
)
SETTINGS = settings(max_examples=200, deadline=None)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXTS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=6,
)
JSON_OBJECTS = st.dictionaries(KEYS, JSON_VALUES, max_size=3)

Parts = list[dict[str, Any]]


def _leaky(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """A part that must never reach the provider, carrying the leak marker."""
    noise = draw(TEXTS)
    if kind == "reasoning":
        return {"type": "reasoning", "text": f"{noise}{MARKER}{noise}", "state": "done"}
    if kind == "data":
        name = draw(st.sampled_from(["data-usage", "data-x", "data-workflow"]))
        return {"type": name, "data": {"value": MARKER, "n": draw(JSON_VALUES)}}
    return {"type": "source-url", "sourceId": MARKER, "url": f"https://x/{MARKER}"}


def _tool_part(draw: st.DrawFn, call_id: str) -> dict[str, Any]:
    state = draw(st.sampled_from(STATES))
    if draw(st.booleans()):
        part: dict[str, Any] = {"type": f"tool-{draw(TOOL_NAMES)}"}
    else:
        part = {"type": "dynamic-tool", "toolName": draw(TOOL_NAMES)}
    part.update(toolCallId=call_id, state=state)
    if draw(st.booleans()):
        part["callProviderMetadata"] = {"openai": {"itemId": MARKER}}
    if state == "input-streaming":
        if draw(st.booleans()):
            part["input"] = draw(JSON_OBJECTS | JSON_VALUES)
    elif state == "output-error":
        # A tool-input-error leaves the raw (unparsed) arguments in `input` or `rawInput`.
        raw = draw(st.sampled_from(["object", "raw-input", "raw-rawInput", "none"]))
        if raw == "object":
            part["input"] = draw(JSON_OBJECTS)
        elif raw == "raw-input":
            part["input"] = draw(TEXTS | JSON_VALUES)
        elif raw == "raw-rawInput":
            part["rawInput"] = draw(TEXTS)
        if draw(st.booleans()):
            part["errorText"] = draw(TEXTS)
    else:
        part["input"] = draw(JSON_OBJECTS) if draw(st.integers(0, 4)) else draw(JSON_VALUES)
    if state == "output-available":
        part["output"] = draw(JSON_VALUES)
    if state.startswith("approval") or state == "output-denied":
        part["approval"] = {"id": f"ap-{call_id}", "approved": state == "approval-responded"}
    return part


USER_KINDS = ("text", "text", "text", "file", "reasoning", "data", "step-start")
ASSISTANT_KINDS = ("text", "text", "tool", "tool", "step-start", "reasoning", "data", "source")


@st.composite
def ui_messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A random but valid (chat_request-checked) list of UI messages; call ids are unique."""
    messages: list[dict[str, Any]] = []
    call_ids: set[str] = set()
    for i in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["user", "assistant", "assistant", "system"]))
        kinds = draw(
            st.lists(
                st.sampled_from(ASSISTANT_KINDS if role == "assistant" else USER_KINDS),
                max_size=8,
            )
        )
        parts: Parts = []
        for kind in kinds:
            if kind == "text":
                value = draw(TEXTS)
                if role == "system":
                    value = SYSTEM_MARKER + value
                parts.append({"type": "text", "text": value, "state": "done"})
            elif kind == "step-start":
                parts.append({"type": "step-start"})
            elif kind == "file":
                media = draw(st.sampled_from(["image/png", "image/jpeg", "image/webp"]))
                payload = draw(st.text(alphabet="ABCDEFabcdef0123456789+/", max_size=16))
                parts.append(
                    {"type": "file", "mediaType": media, "url": f"data:{media};base64,{payload}"}
                )
            elif kind == "tool":
                call_id = draw(st.text(alphabet=_CHARS, min_size=1, max_size=6))
                while call_id in call_ids:
                    call_id += "'"
                call_ids.add(call_id)
                parts.append(_tool_part(draw, call_id))
            else:
                parts.append(_leaky(draw, kind))
        messages.append({"id": f"m{i}", "role": role, "parts": parts})
    return messages


def _is_tool(part: dict[str, Any]) -> bool:
    return bool(part["type"] == "dynamic-tool" or part["type"].startswith("tool-"))


def _tool_parts(messages: list[dict[str, Any]]) -> Parts:
    return [
        part for m in messages if m["role"] == "assistant" for part in m["parts"] if _is_tool(part)
    ]


@SETTINGS
@given(ui_messages())
def test_every_tool_call_is_answered_right_after_its_message_in_order(
    messages: list[dict[str, Any]],
) -> None:
    out = to_openai_messages(messages)
    i = 0
    while i < len(out):
        message = out[i]
        assert message["role"] != "tool", f"orphan tool message at {i}: {out}"
        calls = message.get("tool_calls", [])
        answers = out[i + 1 : i + 1 + len(calls)]
        assert [(a["role"], a.get("tool_call_id")) for a in answers] == [
            ("tool", c["id"]) for c in calls
        ]
        for answer in answers:
            assert set(answer) == {"role", "tool_call_id", "content"}
            assert isinstance(answer["content"], str)
        i += 1 + len(calls)
    ids = [c["id"] for m in out for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in out if m["role"] == "tool"]
    assert sorted(answered) == sorted(ids)
    assert len(set(ids)) == len(ids)


@SETTINGS
@given(ui_messages())
def test_tool_calls_are_well_formed(messages: list[dict[str, Any]]) -> None:
    for message in to_openai_messages(messages):
        for tool_call in message.get("tool_calls", []):
            assert set(tool_call) == {"id", "type", "function"}
            assert isinstance(tool_call["id"], str) and tool_call["id"] != ""
            assert tool_call["type"] == "function"
            function = tool_call["function"]
            assert set(function) == {"name", "arguments"}
            assert isinstance(function["name"], str) and function["name"] != ""
            assert isinstance(function["arguments"], str)
            assert isinstance(json.loads(function["arguments"]), dict)


@SETTINGS
@given(ui_messages())
def test_one_tool_call_per_tool_part_in_input_order(messages: list[dict[str, Any]]) -> None:
    out = to_openai_messages(messages)
    parts = _tool_parts(messages)
    calls = [c for m in out for c in m.get("tool_calls", [])]
    assert len(calls) == len(parts)
    expected = [
        (
            p["toolCallId"],
            p["toolName"] if p["type"] == "dynamic-tool" else p["type"][5:],
            p["input"] if isinstance(p.get("input"), dict) else {},
        )
        for p in parts
    ]
    got = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
    assert got == expected


@SETTINGS
@given(ui_messages())
def test_each_tool_result_reflects_the_state_of_its_part(messages: list[dict[str, Any]]) -> None:
    results = {
        m["tool_call_id"]: m["content"] for m in to_openai_messages(messages) if m["role"] == "tool"
    }
    fixed = {
        "input-streaming": INPUT_INCOMPLETE,
        "input-available": NOT_RUN,
        "output-denied": DENIED,
        "approval-requested": AWAITING,
        "approval-responded": AWAITING,
    }
    for part in _tool_parts(messages):
        content = results[part["toolCallId"]]
        state = part["state"]
        if state == "output-available":
            output = part["output"]
            assert content == output if isinstance(output, str) else json.loads(content) == output
        elif state == "output-error":
            assert content.startswith(f"Error: {part.get('errorText') or ''}")
            raw = part.get("rawInput", part.get("input"))
            has_raw_note = "\nThe arguments received were: " in content
            assert has_raw_note == (raw is not None and not isinstance(raw, dict))
        else:
            assert content == fixed[state]


def _input_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [
        part["text"]
        for m in messages
        if m["role"] in ("user", "assistant")
        for part in m["parts"]
        if part["type"] == "text" and part["text"]
    ]


def _output_texts(out: list[dict[str, Any]]) -> list[str]:
    texts: list[str] = []
    for message in out:
        content = message["content"]
        if message["role"] == "tool":
            continue
        if isinstance(content, str):
            texts.extend(content.split("\n\n"))
        elif isinstance(content, list):  # only image files are generated: no file-derived text
            texts.extend(p["text"] for p in content if p["type"] == "text")
    return [t for t in texts if t]


@SETTINGS
@given(ui_messages())
def test_user_and_assistant_text_is_kept_in_order(messages: list[dict[str, Any]]) -> None:
    assert _output_texts(to_openai_messages(messages)) == _input_texts(messages)


def _input_events(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    events: list[tuple[str, str]] = []
    for message in messages:
        if message["role"] not in ("user", "assistant"):
            continue
        for part in message["parts"]:
            if part["type"] == "text" and part["text"]:
                events.append(("text", part["text"]))
            elif message["role"] == "assistant" and _is_tool(part):
                events.append(("call", part["toolCallId"]))
    return events


def _output_events(out: list[dict[str, Any]]) -> list[tuple[str, str]]:
    events: list[tuple[str, str]] = []
    for message in out:
        events.extend(("text", t) for t in _output_texts([message]))
        events.extend(("call", c["id"]) for c in message.get("tool_calls", []))
    return events


@SETTINGS
@given(ui_messages())
def test_text_never_moves_across_a_tool_call(messages: list[dict[str, Any]]) -> None:
    # Each assistant message is "text, then its tool calls": text written after a tool call
    # must start a new message, never be folded into the one before the call.
    assert _output_events(to_openai_messages(messages)) == _input_events(messages)


@SETTINGS
@given(ui_messages())
def test_reasoning_data_sources_metadata_and_system_do_not_leak(
    messages: list[dict[str, Any]],
) -> None:
    dumped = json.dumps(to_openai_messages(messages), ensure_ascii=False)
    assert MARKER not in dumped
    assert SYSTEM_MARKER not in dumped


@SETTINGS
@given(ui_messages())
def test_system_texts_returns_the_non_empty_system_text_in_order(
    messages: list[dict[str, Any]],
) -> None:
    expected = [
        part["text"]
        for m in messages
        if m["role"] == "system"
        for part in m["parts"]
        if part["type"] == "text"
    ]
    assert system_texts(messages) == expected


@SETTINGS
@given(ui_messages())
def test_message_shapes(messages: list[dict[str, Any]]) -> None:
    for message in to_openai_messages(messages):
        role = message["role"]
        assert role in ("user", "assistant", "tool")
        if role == "user":
            assert set(message) == {"role", "content"}
            content = message["content"]
            if isinstance(content, list):
                assert content and any(p["type"] == "image_url" for p in content)
            else:
                assert isinstance(content, str)
        elif role == "assistant":
            assert set(message) in ({"role", "content"}, {"role", "content", "tool_calls"})
            if "tool_calls" in message:
                assert message["tool_calls"], "tool_calls must not be an empty list"
                assert message["content"] is None or message["content"] != ""
            else:
                assert isinstance(message["content"], str) and message["content"] != ""


@SETTINGS
@given(ui_messages())
def test_conversion_is_deterministic_and_pure(messages: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(messages)
    first = to_openai_messages(messages)
    second = to_openai_messages(copy.deepcopy(messages))
    assert messages == before
    assert first == second
    assert json.dumps(first, ensure_ascii=False) == json.dumps(second, ensure_ascii=False)
