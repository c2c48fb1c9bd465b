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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .digests import digest_tool_part
from .ui_messages import to_openai_messages, tool_name_of, tool_result_text

Kind = Literal["user", "assistant", "round"]
Message = dict[str, Any]


@dataclass(slots=True)
class Block:
    """Never changed once made: steps return new blocks; the engine only fills `memo`,
    `digest` and, once, the count (`tokens`, `results`, `counted`). Not a frozen dataclass
    for speed alone: a long thread's first request makes thousands, and a frozen one costs
    four times as much."""

    kind: Kind
    messages: tuple[Message, ...]
    source_id: str  # the UI message it came from
    tokens: int = 0
    digested: bool = False  # tool results replaced by one-line digests
    cut: bool = False  # an oversized result shortened
    # A pending round: where its tool parts start among its message's (see above); else -1.
    offset: int = field(default=-1, compare=False, repr=False)
    # The token counter `tokens` was counted with (None: not counted by the engine yet), and
    # how many of them are tool results (for the report).
    counted: Any = field(default=None, compare=False, repr=False)
    results: int = field(default=0, compare=False, repr=False)
    # A round's variant with digests, once made (the engine asks every old round for it on
    # every request: a slot, not a memo entry, is one object less to reach).
    digest: Block | None = field(default=None, compare=False, repr=False)
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

    def with_tokens(self, tokens: int, counted: Any, results: int = 0) -> Block:
        """The same block counted by another counter (its memo copied: same messages, same
        values). Spelled out: `dataclasses.replace` costs several times more."""
        return Block(
            self.kind, self.messages, self.source_id, tokens, self.digested, self.cut,
            offset=self.offset, counted=counted, results=results, digest=self.digest,
            memo=dict(self.memo),
        )  # fmt: skip


def tool_parts(ui_message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool parts of a UI message, in the order their results are converted."""
    return [p for p in ui_message.get("parts") or () if tool_name_of(p) is not None]


def parts_of(block: Block, ui_message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool parts a pending round's results come from."""
    return own_parts(block, tool_parts(ui_message))


def own_parts(block: Block, message_parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pending round's share of its message's tool parts (`tool_parts`)."""
    return message_parts[block.offset : block.offset + len(block.messages) - 1]


def render_results(block: Block, parts: list[dict[str, Any]]) -> Block:
    """A pending round with its results rendered from its tool parts (`parts_of`); any other
    block as it is."""
    if block.offset < 0:
        return block
    call, *results = block.messages
    rendered = [{**m, "content": tool_result_text(p)} for m, p in zip(results, parts, strict=True)]
    return block.with_messages([call, *rendered])


def _digest_line(part: dict[str, Any]) -> str:
    """A pending result: its digest (the tool name and arguments as the call renders them)."""
    given = part.get("input")
    args = given if isinstance(given, dict) else {}
    return digest_tool_part(tool_name_of(part) or "", args, part, part["toolCallId"])


def blocks_of(ui_message: dict[str, Any], render: bool = True) -> list[Block]:
    """The blocks of one UI message, in order; with `render=False` its rounds are pending."""
    source = str(ui_message.get("id") or "")
    messages = to_openai_messages([ui_message], tool_result_text if render else _digest_line)
    out: list[Block] = []
    i = done = 0
    while i < len(messages):
        message = messages[i]
        if message["role"] == "assistant" and message.get("tool_calls"):
            n = len(message["tool_calls"])
            offset = -1 if render else done
            out.append(Block("round", tuple(messages[i : i + 1 + n]), source, offset=offset))
            i += 1 + n
            done += n
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
