"""The atoms the context engine selects from.

A block is one user message, one assistant text message, or one tool round: an assistant
message with tool calls plus the result of every call. A round is atomic — the steps keep or
drop it whole, so no provider ever sees a call without its result or a result without its
call. Each block remembers the UI message it came from (summaries and reports speak in those
ids) and carries its token count once counted.

A round built with `render=False` is *pending*: its results are placeholders and `parts` holds
the UI tool parts they come from. The engine digests it straight from those parts (an old
round's full result is never sent, so it is never serialized) or renders it
(`render_results`) before anything reads its messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .ui_messages import to_openai_messages, tool_result_text

Kind = Literal["user", "assistant", "round"]
Message = dict[str, Any]


@dataclass(slots=True)
class Block:
    """Never changed once made (steps return new blocks; only `memo` is written, by the
    engine's cache). Not a frozen dataclass for speed alone: a long thread's first request
    makes thousands, and a frozen one costs four times as much to make."""

    kind: Kind
    messages: tuple[Message, ...]
    source_id: str  # the UI message it came from
    tokens: int = 0
    digested: bool = False  # tool results replaced by one-line digests
    cut: bool = False  # an oversized result shortened
    # Pending round: the UI tool parts its results come from, not yet rendered (see above).
    parts: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)
    # Derived variants and counts, memoized by the engine's BlockCache (never compared).
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_round(self) -> bool:
        return self.kind == "round"  # hot loops compare `kind` directly

    def with_messages(
        self, messages: Iterable[Message], *, digested: bool | None = None, cut: bool | None = None
    ) -> Block:
        """A variant with other messages (rendered, digested or cut): its count unset, its
        memo empty. Spelled out, like `with_tokens`: `dataclasses.replace` costs more."""
        return Block(
            self.kind,
            tuple(messages),
            self.source_id,
            0,
            self.digested if digested is None else digested,
            self.cut if cut is None else cut,
        )

    def with_tokens(self, tokens: int) -> Block:
        """The same block with its count set (its memo copied: same messages, same values).
        Spelled out: `dataclasses.replace` costs several times more, once per block."""
        return Block(
            self.kind, self.messages, self.source_id, tokens, self.digested, self.cut,
            parts=self.parts, memo=dict(self.memo),
        )  # fmt: skip


def render_results(block: Block) -> Block:
    """A pending round with its results rendered (any other block as it is)."""
    if not block.parts:
        return block
    call, *results = block.messages
    pairs = zip(results, block.parts, strict=True)
    rendered = [{**m, "content": tool_result_text(p)} for m, p in pairs]
    return block.with_messages([call, *rendered])


def blocks_of(ui_message: dict[str, Any], render: bool = True) -> list[Block]:
    """The blocks of one UI message, in order; with `render=False` its rounds are pending."""
    source = str(ui_message.get("id") or "")
    parts: list[dict[str, Any]] = []

    def later(part: dict[str, Any]) -> str:
        parts.append(part)
        return ""

    messages = to_openai_messages([ui_message], tool_result_text if render else later)
    out: list[Block] = []
    i = done = 0
    while i < len(messages):
        message = messages[i]
        if message["role"] == "assistant" and message.get("tool_calls"):
            n = len(message["tool_calls"])
            pending = tuple(parts[done : done + n])
            out.append(Block("round", tuple(messages[i : i + 1 + n]), source, parts=pending))
            i += 1 + n
            done += len(pending)
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
