"""Bodies a route fuzzer can send that get past the first check: valid bodies of each route,
then one to three changes to them (a field left out, or set to a value of the wrong type, to
one nested deeply, to a literal Python reads but browsers do not: NaN, Infinity, 1e400, -1e999,
400 digits, bare or inside arrays).
Random JSON rarely gets past `'messages' must be a non-empty list`; a valid body with one
field changed reaches the code behind every check.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from hypothesis import strategies as st

# A string the encoder writes as "@@raw:<text>"; `encode` puts <text> in its place, unquoted.
RAW = "@@raw:"
RAW_LITERALS = (
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1E+999", "-1e999", "1e-400", "-0",
    "123456789012345678901234567890", "18446744073709551616", "9007199254740993", "0.1e1",
    "1" + "0" * 400,
)  # fmt: skip
_RAW_STRING = re.compile(r'"@@raw:([^"]*)"')


def encode(value: Any) -> bytes:
    """JSON text of `value`, with every RAW string replaced by its bare literal."""
    return _RAW_STRING.sub(lambda m: m.group(1), json.dumps(value)).encode()


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


ODD_VALUES = st.one_of(
    st.sampled_from(
        [None, True, False, 0, -1, 1.5, 2**64, -(2**63) - 1, 10**40, "", "x", [], {}, [None]]
    ),
    st.sampled_from(["\ud800", "é" * 300, "x" * 5000, "tool-", "data-", "attachment:"]),
    st.sampled_from(RAW_LITERALS).map(lambda literal: RAW + literal),
    st.sampled_from(RAW_LITERALS).map(lambda literal: [[1, [RAW + literal]]]),  # (in arrays)
    st.sampled_from([50, 250, 300, 900, 990]).map(nested),  # the limit: 256 levels in all
    st.sampled_from([{"type": None}, {"type": "text"}, {"type": "tool-x"}, {"id": 5}]),
)

# --- a valid /api/assistant/chat body, as the panel's AI SDK transport sends it ---------------

TOOL_STATES = (
    "input-streaming", "input-available", "output-available", "output-error",
    "output-denied", "approval-requested", "approval-responded", "odd-state",
)  # fmt: skip
TOOL_NAMES = ("getWorkflow", "addNode", "searchInstalledNodes", "readDocumentation", "delegate")
short_text = st.sampled_from(["hi", "Add a KSampler", "", "é ✓ 😀", "line\nline", "x" * 400])
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), short_text)
small_json = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcdn"), inner, max_size=3)
    ),
    max_leaves=6,
)
FILE_URLS = (
    ("image/png", "data:image/png;base64,iVBORw0KGgo="),
    ("text/plain", "data:text/plain;base64,aGVsbG8="),
    ("application/json", "data:application/json,%7B%22a%22%3A1%7D"),
    ("application/octet-stream", "data:application/octet-stream;base64,AAAA"),
    ("image/png", "attachment:att_0123456789abcdef"),
    ("text/plain", "https://example.com/a.txt"),
)


@st.composite
def tool_part(draw: st.DrawFn, call: str) -> dict[str, Any]:
    state = draw(st.sampled_from(TOOL_STATES))
    dynamic = draw(st.booleans())
    name = draw(st.sampled_from(TOOL_NAMES))
    part: dict[str, Any] = {"type": "dynamic-tool" if dynamic else f"tool-{name}"}
    if dynamic:
        part["toolName"] = name
    part.update(toolCallId=call, state=state, input=draw(small_json))
    if state == "output-available":
        part["output"] = draw(small_json)
        if draw(st.booleans()):
            part["preliminary"] = True
    elif state == "output-error":
        part["errorText"] = draw(short_text)
    return part


@st.composite
def assistant_parts(draw: st.DrawFn, turn: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["text", "reasoning", "tool", "step", "data", "source"]))
        if kind in ("text", "reasoning"):
            parts.append({"type": kind, "text": draw(short_text), "state": "done"})
        elif kind == "tool":
            parts.append(draw(tool_part(f"call_{turn}_{i}")))
        elif kind == "step":
            parts.append({"type": "step-start"})
        elif kind == "data":
            parts.append({"type": "data-context", "id": f"d{turn}", "data": draw(small_json)})
        else:
            parts.append({"type": "source-url", "sourceId": "s", "url": "https://example.com"})
    return parts


@st.composite
def user_parts(draw: st.DrawFn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": draw(short_text)}]
    if draw(st.booleans()):
        media, url = draw(st.sampled_from(FILE_URLS))
        parts.append({"type": "file", "mediaType": media, "url": url, "filename": "f"})
    if draw(st.booleans()):
        parts.append({"type": "data-workflow", "data": draw(small_json)})
    return parts


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """The panel's first message (half of them), or a thread with turns, ending with the
    user's new message or with an answer whose client tools just ran."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"id": "s0", "role": "system", "parts": [{"type": "text", "text": "Hi"}]})
    turns = draw(st.sampled_from([0, 0, 1, 2]))
    for turn in range(turns):
        messages.append({"id": f"u{turn}", "role": "user", "parts": draw(user_parts())})
        answer = {"id": f"a{turn}", "role": "assistant", "parts": draw(assistant_parts(turn))}
        if draw(st.booleans()):  # what the server's answers carry
            answer["metadata"] = {"model": "m", "usage": {"inputTokens": 9}, "status": "done"}
        messages.append(answer)
    if turns == 0 or draw(st.booleans()):
        messages.append({"id": f"u{turns}", "role": "user", "parts": draw(user_parts())})
    body: dict[str, Any] = {
        "id": draw(st.sampled_from(["fuzz-a", "fuzz-b", "fuzz-c"])),
        "messages": messages,
        "trigger": "submit-message",
    }
    if turns and draw(st.booleans()):
        body.update(trigger="regenerate-message", messageId=f"a{turns - 1}")
    optional = {
        "metadata": st.fixed_dictionaries({"project": small_json}),
        "workflow": st.sampled_from(["workflows/a.json", "temp:1"]),
        "system": short_text,
        "tools": st.just({"getWorkflow": {"description": "Read", "parameters": {}}}),
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            body[key] = draw(values)
    return body


# --- valid bodies of the other routes that read one (the ids in their paths: `seeded` makes) --

ROUTE_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/assistant/threads"): {"id": "fuzz-t", "title": "T", "workflow": "w"},
    ("PATCH", "/api/assistant/threads/fuzz-t"): {
        "title": "T",
        "archived": False,
        "workflow": "w",
        "project": 1,
    },
    ("POST", "/api/assistant/threads/rebind"): {"from": "w", "to": "w2"},
    ("POST", "/api/assistant/threads/fuzz-t/checkpoints"): {
        "messageId": "a1",
        "workflow": "w",
        "graph": {"nodes": [{"id": 1, "type": "KSampler"}], "links": [], "version": 0.4},
    },
    ("POST", "/api/assistant/threads/fuzz-t/rewind"): {"messageId": "a1"},
    ("POST", "/api/assistant/threads/fuzz-t/branches/1/restore"): {},
    ("POST", "/api/assistant/projects"): {"name": "P"},
    ("PATCH", "/api/assistant/projects/1"): {"name": "P2"},
    ("POST", "/api/assistant/projects/1/documents"): {"title": "D", "text": "Text."},
    ("PATCH", "/api/assistant/projects/1/documents/1"): {"title": "D", "text": "T"},
    ("POST", "/api/assistant/user-context/rules"): {"text": "Be brief", "enabled": True},
    ("PATCH", "/api/assistant/user-context/rules/1"): {"text": "Be brief", "enabled": False},
    ("POST", "/api/assistant/user-context/personas"): {
        "name": "P",
        "description": "",
        "instructions": "I",
        "replacesSystemPrompt": False,
    },
    ("PUT", "/api/assistant/user-context/personas/active"): {"id": 1},
    ("PUT", "/api/assistant/user-context/preferences"): {"language": "en", "units": 1},
    ("PUT", "/api/assistant/user-context/system-prompt"): {"text": "You help."},
    ("PUT", "/api/assistant/user-context/soul"): {"text": "Calm."},
    ("POST", "/api/assistant/user-context/skills"): {
        "slug": "fuzz-skill",
        "name": "S",
        "description": "D",
        "body": "B",
    },
    ("PUT", "/api/assistant/user-context/skills/fuzz-skill"): {"name": "S", "body": "B2"},
    ("PUT", "/api/assistant/provider"): {"contextWindow": 32768, "maxOutputTokens": 512},
    ("POST", "/api/assistant/provider/test"): {"model": "scripted-model"},
    ("POST", "/api/assistant/installs/scan"): {
        "workflow": {
            "nodes": [
                {
                    "id": 4,
                    "type": "CheckpointLoaderSimple",
                    "mode": 0,
                    "widgets_values": ["x.safetensors"],
                    "properties": {
                        "models": [
                            {
                                "name": "x.safetensors",
                                "url": "https://huggingface.co/o/r/resolve/main/x.safetensors",
                                "directory": "checkpoints",
                                "hash": "0" * 64,
                                "hash_type": "SHA256",
                            }
                        ]
                    },
                },
                {"id": 5, "type": "AddMask", "properties": {"cnr_id": "comfyui-impact-pack"}},
                {"id": 6, "type": "workflow>g", "widgets_values": ["y.safetensors"]},
                {"id": 7, "type": "s1"},
            ],
            "definitions": {"subgraphs": [{"id": "s1", "name": "S", "nodes": []}]},
            "extra": {"groupNodes": {"g": {"nodes": [{"index": 0, "type": "VAELoader"}]}}},
            "models": [{"name": "z.safetensors", "url": "https://x/z", "directory": "vae"}],
        }
    },
}


# --- mutations ----------------------------------------------------------------------------

# The keys a route reads at each level of a body: the body, a message, a message's part.
KEYS = (
    ("id", "messages", "trigger", "messageId", "metadata", "tools", "system", "workflow"),
    ("id", "role", "parts", "metadata"),
    ("type", "text", "state", "toolCallId", "toolName", "input", "output", "errorText",
     "preliminary", "url", "mediaType", "filename", "data", "id"),
)  # fmt: skip


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _levels(body: Any) -> list[list[Any]]:
    """The body, its messages, their parts: the objects whose keys a route checks one by one
    (a body without messages has the first level only)."""
    messages = _dicts(body.get("messages")) if isinstance(body, dict) else []
    parts = [p for m in messages for p in _dicts(m.get("parts"))]
    return [level for level in ([body], messages, parts) if level]


def _slots(value: Any, depth: int = 0) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in `value`, outermost first."""
    found: list[tuple[Any, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, inner in list(items):
        found.append((value, key))
        if isinstance(inner, dict | list) and depth < 8:
            found.extend(_slots(inner, depth + 1))
    return found


@st.composite
def _slot(draw: st.DrawFn, body: Any) -> tuple[Any, Any]:
    """Where to change `body`: half the time a field the route reads (of the body, of one
    message or of one part, present or not), else any slot at all, however deep."""
    levels = _levels(body)
    if isinstance(body, dict) and draw(st.booleans()):
        level = draw(st.integers(0, len(levels) - 1))
        container = draw(st.sampled_from(levels[level]))
        return container, draw(st.sampled_from(sorted({*container, *KEYS[level]})))
    slots = _slots(body)
    return draw(st.sampled_from(slots)) if slots else (None, None)


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A valid body with one to three changes: a field left out, or set to an odd value."""
    body = copy.deepcopy(draw(valid))  # `st.just` gives the same object every time
    for _ in range(draw(st.integers(1, 3))):
        container, key = draw(_slot(body))
        if container is None:
            break
        if draw(st.integers(0, 2)) == 0:
            if isinstance(container, dict):
                container.pop(key, None)
            else:
                del container[key]
        else:  # a sample is one object: a later change must not change the next sample
            container[key] = copy.deepcopy(draw(ODD_VALUES))
    return body


# --- every field of a valid body changed once ----------------------------------------------

SWEEP_VALUES: tuple[Any, ...] = (None, 7, "", "x", [], {"x": 1})
_LEFT_OUT = object()


def single_changes(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """`body` with one field left out or set to one of SWEEP_VALUES, for every field a route
    reads of the body and of each message (present or not) and every field of each part."""
    changes = []
    for level, containers in enumerate(_levels(body)):
        for index, container in enumerate(containers):
            keys = sorted({*container, *KEYS[level]}) if level < 2 else sorted(container)
            for key in keys:
                for value in (_LEFT_OUT, *SWEEP_VALUES):
                    changed = copy.deepcopy(body)
                    target = _levels(changed)[level][index]
                    if value is _LEFT_OUT:
                        target.pop(key, None)
                    else:
                        target[key] = copy.deepcopy(value)
                    what = "left out" if value is _LEFT_OUT else f"= {json.dumps(value)}"
                    changes.append(
                        (f"{['body', 'message', 'part'][level]} {index}: {key} {what}", changed)
                    )
    return changes


def _tool(kind: str, call: str, state: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "toolCallId": call, "state": state, "input": {"a": 1}, **fields}


# A first message; and a thread whose answer's client tools just ran (the server continues it).
SWEEP_BODIES: dict[str, dict[str, Any]] = {
    "first message": {
        "id": "sweep-first",
        "messages": [
            {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
            {
                "id": "u1",
                "role": "user",
                "metadata": {"custom": 1},
                "parts": [
                    {"type": "text", "text": "Add a sampler"},
                    {"type": "file", "mediaType": "text/plain", "url": FILE_URLS[1][1],
                     "filename": "a.txt"},
                    {"type": "data-workflow", "data": {"nodes": []}},
                ],
            },
        ],
        "trigger": "submit-message",
        "metadata": {"project": None},
        "workflow": "workflows/a.json",
        "tools": {"getWorkflow": {"description": "Read", "parameters": {"type": "object"}}},
    },
    "tools ran": {
        "id": "sweep-tools",
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Add a sampler"}]},
            {
                "id": "a1",
                "role": "assistant",
                "metadata": {"model": "m", "status": "done"},
                "parts": [
                    {"type": "step-start"},
                    {"type": "reasoning", "text": "A sampler.", "state": "done"},
                    {"type": "text", "text": "Adding it."},
                    _tool("tool-addNode", "c1", "output-available", output={"id": 3}),
                    _tool("dynamic-tool", "c2", "output-error", toolName="getWorkflow",
                          errorText="no graph"),
                ],
            },
        ],
        "trigger": "submit-message",
    },
}  # fmt: skip
