"""Memoized blocks: a long thread re-assembled each turn costs only its new messages.

The panel resends the whole thread with every request, freshly parsed, so nothing can be
cached by object identity. A UI message is keyed instead by a cheap signature — its thread,
id, role, and per part the type, state, call id and its text, in one string — which changes
whenever anything the model would see changes (within a thread a tool call's input and
output are set once, with its state). For each message the cache keeps its blocks, rounds
pending (each result its one-line digest, and no parsed output kept: a round sent whole is
rendered from the parts of the request at hand); each block keeps, in `Block.memo`, its
rendered and cut variants, in `Block.digest` its digested variant, and carries its count for
the thread's counter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import context_steps as steps
from .context_blocks import Block, blocks_of, render_results
from .fingerprint import key_of
from .tokens import TokenCounter

MAX_MESSAGES = 20_000
MAX_CHARS = 64_000_000  # the characters the cached blocks may hold alive, all threads together
LARGE = 1_000_000  # a message holding more is converted afresh each time, never kept
Origin = Callable[[Block], list[dict[str, Any]]]  # a pending round's tool parts (this request's)


def signature(message: dict[str, Any], scope: str = "") -> tuple[Any, ...]:
    """Everything the model would see of a UI message, as a tuple of its values.

    A tool part is identified by its call id and state: within a thread (the `scope`) a
    call's input and its output or error are set once, together with its state, and never
    change after (the AI SDK's tool parts are immutable once available) — so none of them
    needs reading on every request. Each part gives its type and then, by a tag, what it holds
    ("t": a text; "c": call id, state, streamed-preliminary flag; "u": a URL; "n": nothing
    more), so two different messages never share a key. Long texts and URLs stand by their
    fingerprint (`key_of`), so the cache does not keep them alive."""
    sig: list[Any] = [scope, message.get("id"), message.get("role")]
    append = sig.append
    for part in message.get("parts") or ():
        ptype = part.get("type")
        append(ptype)
        if ptype == "step-start":
            continue
        text = part.get("text")
        if text is not None:
            append("t")
            append(key_of(text) if type(text) is str else text)
            continue
        call = part.get("toolCallId")
        if call is not None:
            append("c")
            append(call)
            append(part.get("state"))
            append(part.get("preliminary"))  # (a streamed tool's outputs before its last)
            continue
        url = part.get("url")
        if url is None:
            append("n")
        else:
            append("u")
            append(key_of(url) if type(url) is str else url)
    return tuple(sig)


class BlockCache:
    def __init__(self, max_messages: int = MAX_MESSAGES, max_chars: int = MAX_CHARS) -> None:
        self._blocks: dict[tuple[Any, ...], tuple[Block, ...]] = {}
        self._sizes: dict[tuple[Any, ...], int] = {}  # characters each entry holds
        self._chars = 0
        self.max_chars = max_chars
        self.max_messages = max_messages

    def thread(
        self, messages: Sequence[dict[str, Any]], scope: str = ""
    ) -> list[tuple[Block, ...]]:
        """The blocks of each message, in order (this loop runs over the whole thread on
        every request: one call per message, not two)."""
        get = self._blocks.get
        return [
            found if (found := get(key := signature(m, scope))) is not None else self._add(m, key)
            for m in messages
        ]

    def _add(self, message: dict[str, Any], key: tuple[Any, ...]) -> tuple[Block, ...]:
        made = tuple(blocks_of(message, render=False))  # rounds pending: see `rendered`
        size = _held_chars(message)
        if size > LARGE:
            return made
        if len(self._blocks) >= self.max_messages or self._chars + size > self.max_chars:
            self._forget_oldest_half()
        self._blocks[key] = made
        self._sizes[key] = size
        self._chars += size
        return made

    def _forget_oldest_half(self) -> None:
        for old in list(self._blocks)[: max(len(self._blocks) // 2, 1)]:
            del self._blocks[old]
            self._chars -= self._sizes.pop(old, 0)

    @staticmethod
    def digested(block: Block) -> Block:
        """The round as digests (once: remembered in `Block.digest`)."""
        if block.digested:
            return block
        block = block.memo.get("source", block)
        out = block.digest
        if out is None:
            out = block.digest = steps.digest_round(block)
        return out

    @staticmethod
    def rendered(block: Block, origin: Origin) -> Block:
        """A pending round with its results rendered (once: remembered in its memo)."""
        if block.offset < 0:
            return block
        out = block.memo.get("rendered")
        if out is None:
            out = render_results(block, origin(block))
            if sum(len(m.get("content") or "") for m in out.messages[1:]) <= LARGE:
                block.memo["rendered"] = out  # (a huge result is rendered afresh when sent)
        return out

    @staticmethod
    def cut(block: Block, max_tokens: int, count: Callable[[str], int]) -> Block:
        root = block.memo.get("source", block)  # always cut (and digest) the whole results
        key = ("cut", max_tokens)
        out = root.memo.get(key)
        if out is None:
            out = root.memo[key] = steps.cut_round(root, max_tokens, count)
            if out is not root:
                out.memo["source"] = root
        return out  # type: ignore[no-any-return]

    @staticmethod
    def count(block: Block, counter: TokenCounter) -> tuple[int, int]:
        """The block's exact token count (before any correction) for this counter, and how
        many of them are its tool results (a round's messages after the first). (Counted
        once per block: the engine keeps the count on the block, see `Block.counted`.)"""
        first, *rest = block.messages
        count = counter.uncached
        if block.kind != "round":
            return count(first) + sum(map(count, rest)), 0
        results = sum(map(count, rest))
        return count(first) + results, results


def _held_chars(message: dict[str, Any]) -> int:
    """The characters of a message's texts and URLs: what its blocks keep alive (a pending
    round keeps its digest lines, not its tool outputs)."""
    size = 0
    for part in message.get("parts") or ():
        for field in ("text", "url"):
            value = part.get(field)
            if type(value) is str:
                size += len(value)
    return size


SHARED = BlockCache()
