"""Validation of the body the AI SDK's `AssistantChatTransport` posts to `/api/assistant/chat`.

Only what the backend relies on is checked, and every message says where the problem is and
what was expected; unknown fields and unknown part types are ignored (the SDK adds new ones).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..base import RequestError, TooMuch, UIMessage

ROLES = ("system", "user", "assistant")
TRIGGERS = ("submit-message", "regenerate-message")
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_MESSAGES = 10_000
# Parts: an answer's step holds a few (step start, reasoning, text) and at most 32 tool calls;
# even 200 resubmitted steps of a busy agent stay well under these. A million tiny parts
# (27 MB) took seconds to check, store, and read back on every later visit.
MAX_PARTS_PER_MESSAGE = 10_000
MAX_PARTS = 200_000
ID_CHARS = 200  # a thread's or a message's id
WORKFLOW_CHARS = 1024
_CONTROL = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class ClientTool:
    """A tool the panel declared in the request body (assistant-ui frontend tools)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ChatRequest:
    thread_id: str
    messages: list[UIMessage]
    trigger: str = "submit-message"
    message_id: str | None = None
    system: str | None = None
    tools: tuple[ClientTool, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    # The ComfyUI workflow the panel shows (its key): a thread this request creates belongs to it.
    workflow: str | None = None
    # A request of what is new (core/chat/thread_delta.py): the stored message its messages
    # follow, and where the panel has it; None: the messages are the whole thread.
    parent: str | None = None
    parent_index: int | None = None


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise RequestError(message)


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    _expect(value is None or isinstance(value, str), f"'{key}' must be a string")
    return value


def workflow_key(value: Any, name: str = "workflow") -> str:
    """A ComfyUI workflow's key (core/store/thread_workflows.py): a string of 1 to WORKFLOW_CHARS
    characters without control characters."""
    _expect(
        isinstance(value, str) and 0 < len(value) <= WORKFLOW_CHARS,
        f"'{name}' must be a workflow key: a string of 1 to {WORKFLOW_CHARS} characters",
    )
    _expect(not _CONTROL.search(value), f"'{name}' must not contain control characters")
    return str(value)


def check_workflow(value: Any, name: str = "workflow") -> str | None:
    """A workflow key, or None for null (no workflow)."""
    return None if value is None else workflow_key(value, name)


# Read from a part whatever its type (the context cache keys a message by them), so checked
# on every part that has them: the AI SDK's parts give each of these fields this type.
_ANY_PART_FIELDS = (
    ("text", str), ("url", str), ("toolCallId", str), ("state", str), ("preliminary", bool),
)  # fmt: skip


def _check_part(part: Any, where: str) -> None:
    _expect(isinstance(part, dict), f"{where} must be an object")
    ptype = part.get("type")
    _expect(isinstance(ptype, str) and ptype != "", f"{where}.type must be a non-empty string")
    if ptype in ("text", "reasoning"):
        _expect(isinstance(part.get("text"), str), f"{where}.text must be a string")
    elif ptype == "file":
        _expect(isinstance(part.get("url"), str), f"{where}.url must be a string")
        _expect(isinstance(part.get("mediaType"), str), f"{where}.mediaType must be a string")
    elif ptype.startswith("tool-") or ptype == "dynamic-tool":
        name = part.get("toolName") if ptype == "dynamic-tool" else ptype[5:]
        _expect(
            isinstance(name, str) and bool(TOOL_NAME.fullmatch(name)),
            f"{where} needs a tool name matching [A-Za-z0-9_-]{{1,64}}",
        )
        call_id = part.get("toolCallId")
        _expect(isinstance(call_id, str) and call_id != "", f"{where}.toolCallId is required")
        _expect(isinstance(part.get("state"), str), f"{where}.state must be a string")
    for key, kind in _ANY_PART_FIELDS:
        value = part.get(key)
        _expect(
            value is None or isinstance(value, kind),
            f"{where}.{key} must be {'true or false' if kind is bool else 'a string'}",
        )


def _check_message(message: Any, i: int) -> None:
    where = f"messages[{i}]"
    _expect(isinstance(message, dict), f"{where} must be an object")
    role = message.get("role")
    _expect(role in ROLES, f"{where}.role must be one of {', '.join(ROLES)} (got {role!r})")
    # The AI SDK gives every message an id (its own validateUIMessages requires one); the
    # thread stores messages by it and finds the latest user message by it.
    mid = message.get("id")
    _expect(
        isinstance(mid, str) and 0 < len(mid) <= ID_CHARS,
        f"{where}.id must be a string of 1 to {ID_CHARS} characters (the message's id)",
    )
    # The server adds its own to the metadata of the answer it continues (as the SDK client
    # does): an object, or no `metadata` key at all.
    _expect(
        isinstance(message.get("metadata", {}), dict),
        f"{where}.metadata must be an object (leave it out when there is none)",
    )
    parts = message.get("parts")
    _expect(isinstance(parts, list), f"{where}.parts must be a list of message parts")
    if len(parts) > MAX_PARTS_PER_MESSAGE:
        raise TooMuch(
            f"{where} holds {len(parts):,} parts, more than the limit of "
            f"{MAX_PARTS_PER_MESSAGE:,} parts in one message"
        )
    for j, part in enumerate(parts):
        _check_part(part, f"{where}.parts[{j}]")


def _count_parts(messages: list[Any]) -> None:
    """Refuse a request of more than MAX_PARTS parts before checking any of them."""
    total = sum(
        len(parts)
        for parts in (m.get("parts") if isinstance(m, dict) else None for m in messages)
        if isinstance(parts, list)
    )
    if total > MAX_PARTS:
        raise TooMuch(
            f"'messages' hold {total:,} parts in all, more than the limit of {MAX_PARTS:,} "
            "parts in one request; start a new thread"
        )


def _client_tools(raw: Any) -> tuple[ClientTool, ...]:
    if raw is None:
        return ()
    _expect(isinstance(raw, dict), "'tools' must be an object mapping tool names to definitions")
    tools = []
    for name, spec in raw.items():
        _expect(
            bool(TOOL_NAME.fullmatch(name)), f"tool name {name!r} must match [A-Za-z0-9_-]{{1,64}}"
        )
        _expect(isinstance(spec, dict), f"tools.{name} must be an object")
        params = spec.get("parameters", spec.get("inputSchema", {"type": "object"}))
        _expect(isinstance(params, dict), f"tools.{name}.parameters must be a JSON schema object")
        description = spec.get("description")
        description = "" if description is None else description
        _expect(isinstance(description, str), f"tools.{name}.description must be a string")
        tools.append(ClientTool(name, description, params))
    return tuple(tools)


def parse_chat_request(body: Any) -> ChatRequest:
    """Check a decoded JSON body; raise RequestError with a fixable message."""
    _expect(isinstance(body, dict), "the body must be a JSON object with 'id' and 'messages'")
    thread_id = body.get("id")
    _expect(
        isinstance(thread_id, str) and 0 < len(thread_id) <= ID_CHARS,
        f"'id' (the thread id) must be a string of 1 to {ID_CHARS} characters",
    )
    parent, parent_index = _parent(body)
    messages = body.get("messages")
    _expect(
        isinstance(messages, list) and (len(messages) > 0 or parent is not None),
        "'messages' must be a non-empty list (or a list of what follows 'parentId')",
    )
    if len(messages) > MAX_MESSAGES:
        raise TooMuch(
            f"'messages' holds {len(messages):,} messages, more than the limit of "
            f"{MAX_MESSAGES:,}; start a new thread"
        )
    _count_parts(messages)
    for i, message in enumerate(messages):
        _check_message(message, i)
    trigger = _optional_str(body, "trigger")
    trigger = "submit-message" if trigger is None else trigger
    _expect(trigger in TRIGGERS, f"'trigger' must be one of {', '.join(TRIGGERS)}")
    metadata = body.get("metadata")
    _expect(metadata is None or isinstance(metadata, dict), "'metadata' must be an object")
    return ChatRequest(
        thread_id=thread_id,
        messages=messages,
        trigger=trigger,
        message_id=_optional_str(body, "messageId"),
        system=_optional_str(body, "system"),
        tools=_client_tools(body.get("tools")),
        metadata=metadata or {},
        workflow=check_workflow(body.get("workflow")),
        parent=parent,
        parent_index=parent_index,
    )


def _parent(body: dict[str, Any]) -> tuple[str | None, int | None]:
    """`parentId` and `parentIndex` of a request of what is new (both absent or null: the
    request carries the whole thread)."""
    parent, index = body.get("parentId"), body.get("parentIndex")
    _expect(
        parent is None or (isinstance(parent, str) and 0 < len(parent) <= ID_CHARS),
        f"'parentId' must be the id of the message the request follows (1 to {ID_CHARS} "
        "characters), or null when 'messages' hold the whole thread",
    )
    _expect(
        index is None or (type(index) is int and index >= 0 and parent is not None),
        "'parentIndex' must be the parent's index in the thread (a number from 0), with 'parentId'",
    )
    return parent, index
