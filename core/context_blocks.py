"""The atoms the context engine selects from.

A block is one user message, one assistant text message, or one tool round: an assistant
message with tool calls plus the result of every call. A round is atomic — the steps keep or
drop it whole, so no provider ever sees a call without its result or a result without its
call. Each block remembers the UI message it came from (summaries and reports speak in those
ids) and carries its token count once counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .ui_messages import to_openai_messages

Kind = Literal["user", "assistant", "round"]
Message = dict[str, Any]


@dataclass(frozen=True)
class Block:
    kind: Kind
    messages: tuple[Message, ...]
    source_id: str  # the UI message it came from
    tokens: int = 0
    digested: bool = False  # tool results replaced by one-line digests
    cut: bool = False  # an oversized result shortened
    # Derived variants and counts, memoized by the engine's BlockCache (never compared).
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_round(self) -> bool:
        return self.kind == "round"  # hot loops compare `kind` directly

    def with_messages(self, messages: Iterable[Message], **changes: Any) -> Block:
        return replace(self, messages=tuple(messages), memo={}, **changes)


def blocks_of(ui_message: dict[str, Any]) -> list[Block]:
    """The blocks of one UI message, in order."""
    source = str(ui_message.get("id") or "")
    messages = to_openai_messages([ui_message])
    out: list[Block] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message["role"] == "assistant" and message.get("tool_calls"):
            n = len(message["tool_calls"])
            out.append(Block("round", tuple(messages[i : i + 1 + n]), source))
            i += 1 + n
        else:
            kind: Kind = "user" if message["role"] == "user" else "assistant"
            out.append(Block(kind, (message,), source))
            i += 1
    return out


def build_blocks(ui_messages: Iterable[dict[str, Any]]) -> list[Block]:
    return [block for message in ui_messages for block in blocks_of(message)]


def flatten(blocks: Iterable[Block]) -> list[Message]:
    return [message for block in blocks for message in block.messages]


def latest_user_index(blocks: list[Block]) -> int | None:
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].kind == "user":
            return i
    return None
