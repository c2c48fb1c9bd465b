"""The context engine's one cache: a long thread re-assembled each turn costs only its new
messages.

The panel resends the whole thread with every request, freshly parsed, so nothing can be
cached by object identity. A UI message is keyed instead by a cheap signature — its thread,
id, role, and per part the type, state, call id and its text — which changes whenever anything
the model would see changes (within a thread a tool call's input and output are set once, with
its state). For each message the cache keeps its blocks, rounds pending (each result its
one-line digest, and no parsed output kept: a round sent whole is rendered from the parts of
the request at hand), each with a key of its own. What the engine derives from a block — its
digest, its rendered or cut variant, its count for an encoding — is remembered here too, under
the block's key and the variant: blocks themselves never change.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import count
from typing import Any

from ..base import SHOWN, UIMessage, UIPart, key_of
from ..tokens import TokenCounter
from . import context_steps as steps
from .context_blocks import Block, blocks_of, render_results

MAX_MESSAGES = 20_000
MAX_CHARS = 64_000_000  # the characters cached blocks and their variants may hold, all threads
LARGE = 1_000_000  # a message holding more is converted afresh each time, never kept
Origin = Callable[[Block], list[UIPart]]  # a pending round's tool parts (this request's)


def signature(message: UIMessage, scope: str = "") -> tuple[Any, ...]:
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
            shown = part.get(SHOWN)  # (what the result shows: the newest run's images)
            if shown is not None:
                append(key_of(str(shown.get("url"))) if isinstance(shown, dict) else shown)
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
        self._keys = count(1)
        # (block key, variant) -> the derived block; a variant's own key is that pair
        self._derived: dict[tuple[Hashable, Hashable], Block] = {}
        self._derived_chars = 0  # what the variants hold of their own (a rendered result)
        self._roots: dict[Hashable, Block] = {}  # a cut variant's key -> the block it was cut from

    def thread(self, messages: Sequence[UIMessage], scope: str = "") -> list[tuple[Block, ...]]:
        """The blocks of each message, in order."""
        get = self._blocks.get
        return [
            found if (found := get(key := signature(m, scope))) is not None else self._add(m, key)
            for m in messages
        ]

    def _add(self, message: UIMessage, key: tuple[Any, ...]) -> tuple[Block, ...]:
        size = _held_chars(message)
        if size > LARGE:  # converted afresh each time, its derivations not remembered
            return tuple(blocks_of(message, render=False))
        if len(self._blocks) >= self.max_messages or self._held + size > self.max_chars:
            self._forget_oldest_half()
        made = tuple(blocks_of(message, render=False, keys=self._keys))  # rounds pending
        self._blocks[key] = made
        self._sizes[key] = size
        self._chars += size
        return made

    def _forget_oldest_half(self) -> None:
        for old in list(self._blocks)[: max(len(self._blocks) // 2, 1)]:
            del self._blocks[old]
            self._chars -= self._sizes.pop(old, 0)
        self._derived.clear()  # (rare: derived again on the next request)
        self._derived_chars = 0
        self._roots.clear()

    @property
    def _held(self) -> int:
        return self._chars + self._derived_chars

    def _keep_derived(self, key: tuple[Hashable, Hashable], block: Block) -> None:
        """Remembered within the characters' bound, else derived afresh each time (until the
        next new message makes room: `_add`; forgetting here would forget what the request
        at hand derives from)."""
        size = _own_chars(block)
        if self._held + size <= self.max_chars:
            self._derived[key] = block
            self._derived_chars += size

    def derive(
        self,
        block: Block,
        variant: Hashable,
        make: Callable[[Block], Block],
        keep: Callable[[Block], bool] = lambda _: True,
    ) -> Block:
        """`make(block)`, remembered under the block's key and `variant` (when `keep` says)."""
        if block.key is None:
            return make(block)
        key = (block.key, variant)
        found = self._derived.get(key)
        if found is None:
            found = make(block)
            found = block if found is block else found.keyed(key)
            if keep(found):
                self._keep_derived(key, found)
        return found

    def counted(self, block: Block, counter: TokenCounter) -> Block:
        """The block with its exact token count for the counter's encoding (before any
        correction), and how many of them are tool results (a round's messages after its
        first). A count keeps the block's key: the same messages, the same derivations."""
        if block.offset >= 0:  # a pending round is sent as digests or rendered: never as it is
            raise RuntimeError("a pending tool round reached the token count unrendered")
        if block.key is None:
            return block.with_count(*_count(block, counter))
        key = (block.key, counter.source)
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = block.with_count(*_count(block, counter))
        return found

    def digested(self, block: Block) -> Block:
        """The round as digests (of its whole results, also when it was cut)."""
        if block.digested:
            return block
        return self.derive(self._roots.get(block.key, block), "digest", steps.digest_round)

    def rendered(self, block: Block, origin: Origin) -> Block:
        """A pending round with its results rendered (a huge result afresh each time)."""
        if block.offset < 0:
            return block
        return self.derive(block, "rendered", lambda b: render_results(b, origin(b)), _not_huge)

    def cut(self, block: Block, max_tokens: int, count: Callable[[str], int]) -> Block:
        """The round with each result over `max_tokens` cut (always from the whole results)."""
        root = self._roots.get(block.key, block)
        out = self.derive(
            root, ("cut", max_tokens), lambda b: steps.cut_round(b, max_tokens, count)
        )
        if out is not root and out.key is not None:
            self._roots[out.key] = root
        return out


def _not_huge(round_: Block) -> bool:
    return sum(len(m.get("content") or "") for m in round_.messages[1:]) <= LARGE


def _count(block: Block, counter: TokenCounter) -> tuple[int, int]:
    first, *rest = block.messages
    one = counter.uncached
    if block.kind != "round":
        return one(first) + sum(map(one, rest)), 0
    results = sum(map(one, rest))
    return one(first) + results, results


def _own_chars(block: Block) -> int:
    """The characters of a derived block's texts (a rendered round's results: the variants
    that hold much of their own)."""
    return sum(len(c) for m in block.messages if type(c := m.get("content")) is str)


def _held_chars(message: UIMessage) -> int:
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
