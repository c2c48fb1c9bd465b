"""Nearly-right calls read as meant (core/stream/call_repair.py) and the streaming hold
(core/stream/call_hold.py): each reading, and what is never guessed."""

from __future__ import annotations

import pytest
from comfyui_assistant.core.stream import ui_stream as ui
from comfyui_assistant.core.stream.call_hold import HOLD_NOTE_SECONDS
from comfyui_assistant.core.stream.call_repair import (
    coerce_object,
    loads_lenient,
    repair_arguments,
    resolve_name,
)
from comfyui_assistant.core.stream.stream_translate import WRITING_CALL, StepTranslator

CLOSEST = "(the closest tool name)"
TOOLS = {
    "addNode": {
        "type": "object",
        "properties": {
            "nodeType": {"type": "string"},
            "x": {"type": "integer"},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "pinned": {"type": "boolean"},
        },
        "required": ["nodeType"],
    },
    "addNodes": {"type": "object", "properties": {}},
    "removeNodes": {"type": "object", "properties": {}},
}


@pytest.mark.parametrize(
    ("text", "value", "note"),
    [
        ('```json\n{"a": 1}\n```', {"a": 1}, "read the arguments out of a code fence"),
        ('{"a": 1,}', {"a": 1}, "dropped a trailing comma"),
        ("{'a': 'it is', 'b': True, 'c': None}", {"a": "it is", "b": True, "c": None}, None),
        ('"{\\"a\\": 1}"', {"a": 1}, "read the arguments out of a JSON string"),
        ('{"a": \\n[1, 2]\\n}', {"a": [1, 2]}, "read a literal \\n between values as a line break"),
    ],
)
def test_json_written_nearly_right_is_read_as_meant(text, value, note):
    notes: list[str] = []
    assert loads_lenient(text, notes) == value
    assert notes and (note is None or notes == [note])


def test_python_syntax_says_what_it_read():
    notes: list[str] = []
    loads_lenient("{'a': True}", notes)
    assert notes == ["read single quotes and Python's True/False/None as JSON"]


def test_text_that_is_no_literal_is_refused():
    with pytest.raises(ValueError):
        loads_lenient("{'a': os.system('x')}", [])


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("addNode", ("addNode", None)),
        ("add_node", ("addNode", "read `add_node` as addNode")),
        ("AddNode", ("addNode", "read `AddNode` as addNode")),
        ("functions.addNode", ("addNode", "read `functions.addNode` as addNode")),
        (
            "remove_nodess",
            ("removeNodes", "read `remove_nodess` as removeNodes (the closest tool name)"),
        ),
        ("addNde", (None, None)),  # close to addNode and addNodes alike: not guessed
        ("web_search", (None, None)),
    ],
)
def test_names_are_read_only_when_one_tool_fits(written, meant):
    assert resolve_name(written, TOOLS) == meant


def test_values_are_read_by_the_schema():
    notes: list[str] = []
    args = {"nodeType": 5, "x": "20", "ids": 3, "pinned": "true", "other": "7"}
    assert coerce_object(args, TOOLS["addNode"], notes) == {
        "nodeType": "5",
        "x": 20,
        "ids": [3],
        "pinned": True,
        "other": "7",
    }
    assert notes == [
        'read `nodeType` 5 as the text "5"',
        'read `x` "20" as the number 20',
        "read `ids` as a list of one",
        'read `pinned` "true" as true',
    ]


def test_a_value_the_schema_cannot_take_is_left_for_the_tool_to_refuse():
    repaired = repair_arguments("addNode", '{"nodeType": "K", "x": "2.5"}', TOOLS["addNode"])
    assert repaired.value == {"nodeType": "K", "x": "2.5"} and repaired.notes == []


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def feed_text(translator: StepTranslator, text: str) -> list[ui.Chunk]:
    return translator.feed({"choices": [{"index": 0, "delta": {"content": text}}]})


def test_a_long_hold_is_announced_and_a_broken_stream_shows_what_was_held():
    clock = Clock()
    translator = StepTranslator(frozenset(TOOLS), schemas=TOOLS)
    translator._hold.clock = clock
    assert feed_text(translator, "Sure.\n<tool") == [
        ui.TextStart(translator._open[1]),  # type: ignore[index]
        ui.TextDelta(translator._open[1], "Sure."),  # type: ignore[index]
    ]
    clock.now = HOLD_NOTE_SECONDS - 0.1
    assert feed_text(translator, '_call>{"name": "addNode",') == []
    clock.now = HOLD_NOTE_SECONDS + 0.1
    assert feed_text(translator, ' "arguments"') == [
        ui.Data("status", {"text": WRITING_CALL, "done": False}, id="status")
    ]
    out = translator.finish_partial()  # the stream broke: no call, the held text as text
    assert out[0] == ui.Data("status", {"text": "", "done": True}, id="status")
    assert "".join(c.delta for c in out if isinstance(c, ui.TextDelta)) == (
        '\n<tool_call>{"name": "addNode", "arguments"'
    )
    assert translator.tool_calls == []


def test_text_calls_are_not_read_when_the_provider_sent_its_own():
    translator = StepTranslator(frozenset(TOOLS), schemas=TOOLS)
    feed_text(translator, '<tool_call>{"name": "addNode", "arguments": {"nodeType": "K"}}')
    piece = {"index": 0, "id": "c1", "function": {"name": "removeNodes", "arguments": "{}"}}
    translator.feed({"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]})
    out = translator.finish()
    assert [c.tool_name for c in out if isinstance(c, ui.ToolInputAvailable)] == ["removeNodes"]
    assert "".join(c.delta for c in out if isinstance(c, ui.TextDelta)).startswith("<tool_call>")
