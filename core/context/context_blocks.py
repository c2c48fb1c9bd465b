"""The atoms the context engine selects from.

A block is one user message, one assistant text message, or one tool round: an assistant
message with tool calls plus the result of every call. A round is atomic — the steps keep or
drop it whole, so no provider ever sees a call without its result or a result without its
call. Each block remembers the UI message it came from (summaries and reports speak in those
ids) and carries its token count once counted.

A round built with `render=False` is *pending*: each result holds its one-line digest
(`digest_tool_part`, written from the part's output object: an old result is only ever sent
as a digest, so its full text is never serialized), and `offset` says where its tool parts
start among its UI message's (`tool_parts`). The engine sends it as digests
(`steps.digest_round`, the same messages) or renders it (`render_results`, from the parts of
the request at hand) before anything reads it as whole; a cached block never holds a
thread's parsed outputs.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from ..base import (
    OpenAIMessage,
    UIMessage,
    UIPart,
    to_openai_messages,
    tool_name_of,
    tool_result_content,
    with_content,
)
from ..tools import digest_tool_part

Kind = Literal["user", "assistant", "round"]
Message = OpenAIMessage


@dataclass(frozen=True, slots=True)
class Block:
    """Never changed once made: steps return new blocks (`with_messages`, `with_count`).
    What is derived from a block (its digest, its cut or rendered variant, its count) is
    remembered by the engine's `BlockCache`, under the block's `key`."""

    kind: Kind
    messages: tuple[Message, ...]
    source_id: str  # the UI message it came from
    tokens: int = 0  # exact, before any correction (0: not counted yet)
    digested: bool = False  # tool results replaced by one-line digests
    cut: bool = False  # an oversized result shortened
    # A pending round: where its tool parts start among its message's (see above); else -1.
    offset: int = field(default=-1, compare=False, repr=False)
    # How many of `tokens` are tool results (for the report).
    results: int = field(default=0, compare=False, repr=False)
    # What the cache remembers this block's derivations under (None: a block made for one
    # request only, derived afresh each time).
    key: Hashable = field(default=None, compare=False, repr=False)

    def with_messages(
        self, messages: Iterable[Message], *, digested: bool | None = None, cut: bool | None = None
    ) -> Block:
        """A variant with other messages (rendered, digested or cut), not counted yet."""
        return Block(
            self.kind,
            tuple(messages),
            self.source_id,
            digested=self.digested if digested is None else digested,
            cut=self.cut if cut is None else cut,
        )

    def with_count(self, tokens: int, results: int) -> Block:
        """The block with its count (its key kept: same messages, same derivations)."""
        return Block(
            self.kind, self.messages, self.source_id, tokens, self.digested, self.cut,
            self.offset, results, self.key,
        )  # fmt: skip

    def keyed(self, key: Hashable) -> Block:
        """The block under another cache key. (`with_count` and this are spelled out:
        `dataclasses.replace` costs half as much again, on thousands of blocks per thread.)"""
        return Block(
            self.kind, self.messages, self.source_id, self.tokens, self.digested, self.cut,
            self.offset, self.results, key,
        )  # fmt: skip


def tool_parts(ui_message: UIMessage) -> list[UIPart]:
    """The tool parts of a UI message, in the order their results are converted."""
    return [p for p in ui_message.get("parts") or () if tool_name_of(p) is not None]


def parts_of(block: Block, ui_message: UIMessage) -> list[UIPart]:
    """The tool parts a pending round's results come from."""
    return own_parts(block, tool_parts(ui_message))


def own_parts(block: Block, message_parts: list[UIPart]) -> list[UIPart]:
    """A pending round's share of its message's tool parts (`tool_parts`)."""
    return message_parts[block.offset : block.offset + len(block.messages) - 1]


def render_results(block: Block, parts: list[UIPart]) -> Block:
    """A pending round with its results rendered from its tool parts (`parts_of`); any other
    block as it is."""
    if block.offset < 0:
        return block
    call, *results = block.messages
    pairs = zip(results, parts, strict=True)
    rendered = [with_content(m, tool_result_content(p)) for m, p in pairs]
    return block.with_messages([call, *rendered])


def _digest_line(part: UIPart) -> str:
    """A pending result: its digest (the tool name and arguments as the call renders them)."""
    given = part.get("input")
    args = given if isinstance(given, dict) else {}
    return digest_tool_part(tool_name_of(part) or "", args, part, part["toolCallId"])


def blocks_of(
    ui_message: UIMessage, render: bool = True, keys: Iterator[Hashable] | None = None
) -> list[Block]:
    """The blocks of one UI message, in order; with `render=False` its rounds are pending.
    `keys` gives each block its cache key."""
    source = str(ui_message.get("id") or "")
    messages = to_openai_messages([ui_message], tool_result_content if render else _digest_line)
    out: list[Block] = []
    i = done = 0
    while i < len(messages):
        message = messages[i]
        if message["role"] == "assistant" and message.get("tool_calls"):
            n = len(message["tool_calls"])
            offset = -1 if render else done
            key = None if keys is None else next(keys)
            out.append(
                Block("round", tuple(messages[i : i + 1 + n]), source, offset=offset, key=key)
            )
            i += 1 + n
            done += n
        else:
            kind: Kind = "user" if message["role"] == "user" else "assistant"
            out.append(Block(kind, (message,), source, key=None if keys is None else next(keys)))
            i += 1
    return out


def build_blocks(ui_messages: Iterable[UIMessage]) -> list[Block]:
    return [block for message in ui_messages for block in blocks_of(message)]


def flatten(blocks: Iterable[Block]) -> list[Message]:
    return [message for block in blocks for message in block.messages]


def latest_user_index(blocks: list[Block]) -> int | None:
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].kind == "user":
            return i
    return None
