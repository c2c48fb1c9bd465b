"""The context engine's steps: small pure functions over blocks, run in a fixed order by
`context_engine.STAGES`. Each returns new blocks; none mutates its input.

Every step is deterministic, and steps that change old history do it in large, rare moves
(digests advance in batches, summaries at watermarks), so the request prefix that providers
and local servers cache stays byte-identical from one turn to the next.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import accumulate, compress
from operator import not_
from typing import Any

from ..base import Content, UIMessage, content_text, with_content
from ..store import SentTurn
from ..tools import cut_json, digest_tool_result
from .context_blocks import Block, Message, latest_user_index

TRUNCATED_SYSTEM = "[System prompt truncated to fit context]"
OMITTED_NOTE = "[Earlier messages were left out to fit the context window.]"
NO_ANSWER: Message = {
    "role": "assistant",
    "content": "[No answer: this request failed or was stopped before the reply began.]",
}


def digest_count(rounds: int, keep_last: int, batch: int) -> int:
    """How many of the oldest rounds are digested: all but the last `keep_last`, advancing in
    steps of `batch`, so the digest boundary (and the cached prefix) moves rarely."""
    older = max(0, rounds - keep_last)
    return older - older % max(1, batch)


def digest_round(block: Block) -> Block:
    """The round with each result replaced by its one-line digest. A pending round holds its
    digests already (written from its tool parts: its full results are never rendered)."""
    if block.offset >= 0:
        return block.with_messages(block.messages, digested=True)
    call, *results = block.messages
    by_id = {c["id"]: c["function"] for c in call["tool_calls"]}
    digested = []
    for result in results:
        call_id = result["tool_call_id"]
        fn = by_id[call_id]
        text = content_text(result.get("content"))
        line = digest_tool_result(fn["name"], fn["arguments"], text, call_id)
        digested.append(with_content(result, line))
    return block.with_messages([call, *digested], digested=True)


def digest_rounds(
    blocks: list[Block],
    keep_last: int,
    batch: int,
    digest: Callable[[Block], Block] = digest_round,
    at_least: int = 0,
) -> list[Block]:
    """Older tool rounds keep their calls but their results become one-line digests (the full
    results stay in the store: `recallToolResult` brings one back): all but the newest
    `keep_last`, in steps of `batch`, and at least the oldest `at_least`. `digest` may
    memoize."""
    rounds = [i for i, b in enumerate(blocks) if b.kind == "round"]
    n = min(len(rounds), max(digest_count(len(rounds), keep_last, batch), at_least))
    if n == 0:
        return blocks
    end = rounds[n - 1] + 1  # just past the last round to digest
    return [digest(b) if b.kind == "round" else b for b in blocks[:end]] + blocks[end:]


def cut_text_to_tokens(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """Shorten `text` (JSON-aware) until it counts at most `max_tokens`."""
    tokens = count(text)
    if tokens <= max_tokens:
        return text
    limit = max(200, int(len(text) * max_tokens / tokens * 0.95))
    for _ in range(8):
        out = cut_json(text, limit)
        if count(out) <= max_tokens or limit <= 200:
            return out
        limit = max(200, int(limit * 0.8))
    return out


def cut_round(block: Block, max_tokens: int, count: Callable[[str], int]) -> Block:
    """The round with each result longer than `max_tokens` cut structure-aware."""
    messages = list(block.messages)
    changed = False
    for i, message in enumerate(messages[1:], start=1):
        content = message.get("content")
        text = content_text(content)
        shorter = cut_text_to_tokens(text, max_tokens, count)
        if shorter != text:  # (what the result shows besides its text stays)
            rest = content[1:] if isinstance(content, list) else []
            cut = [{"type": "text", "text": shorter}, *rest] if rest else shorter
            messages[i] = with_content(message, cut)
            changed = True
    return block.with_messages(messages, cut=True) if changed else block


def cut_oversized(
    blocks: list[Block],
    max_tokens: int,
    count: Callable[[str], int],
    cut: Callable[[Block], Block] | None = None,
) -> list[Block]:
    """A single huge result (a 200 KB workflow) is cut structure-aware, not sent whole."""
    one = cut or (lambda b: cut_round(b, max_tokens, count))
    return [one(b) if b.kind == "round" and not b.digested else b for b in blocks]


def _suffix_user(message: Message, text: str) -> Message:
    if not text:
        return message
    content = message.get("content")
    if isinstance(content, str):
        return with_content(message, f"{content}\n\n{text}")
    return with_content(message, [*_as_parts(content), {"type": "text", "text": text}])


def as_sent(block: Block, turn: SentTurn) -> Block:
    """A user message as it was first sent: its typed text replaced by what was sent instead
    (a /skill expansion), then its reminder block and any recalled passages appended."""
    message = block.messages[0]
    if turn.text is not None:
        content = message.get("content")
        others = (
            [p for p in content if p.get("type") != "text"] if isinstance(content, list) else []
        )
        message = with_content(
            message, [{"type": "text", "text": turn.text}, *others] if others else turn.text
        )
    return block.with_messages([_suffix_user(message, turn.suffix)])


def answer_gaps(blocks: list[Block]) -> list[Block]:
    """A user message that got no answer (the request failed or was stopped before any text)
    is followed by a short assistant note, so it is never merged into the next message; when
    the next message repeats it word for word (the user retried), it is left out instead."""
    out: list[Block] = []
    for i, block in enumerate(blocks):
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        if block.kind != "user" or following is None or following.kind != "user":
            out.append(block)
        elif block.messages[0].get("content") != following.messages[0].get("content"):
            key = None if block.key is None else (block.key, "no answer")
            out += [block, Block("assistant", (NO_ANSWER,), block.source_id, key=key)]
    return out


def keep_tail(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The newest part of a running summary that fits, cut at a line start."""
    if count(text) <= max_tokens:
        return text
    while text and count(text) > max_tokens:
        text = text[len(text) // 10 or 1 :]
        newline = text.find("\n")
        text = text[newline + 1 :] if 0 <= newline < len(text) // 2 else text
    return "…" + text


def truncate_system(system: str, budget: int, count: Callable[[str], int]) -> tuple[str, bool]:
    """The system message whole if it takes at most half the budget, else cut to 30%."""
    if count(system) <= budget // 2:
        return system, False
    target = max(1, int(budget * 0.3)) - count(TRUNCATED_SYSTEM) - 2
    text = system
    while text and count(text) > target:
        text = text[: int(len(text) * 0.9)]
        cut = max(text.rfind("\n"), text.rfind(". "))
        text = text[: cut + 1] if cut > len(text) // 2 else text
    return f"{text.rstrip()}\n\n{TRUNCATED_SYSTEM}", True


def select_window(
    blocks: list[Block], budget: int, max_messages: int | None = None, note_tokens: int = 0
) -> tuple[list[Block], list[Block]]:
    """The priority window: the latest user message always; then the turn in progress, newest
    first; then tool rounds before plain chatter, newest first; output in chronological
    order, rounds whole.
    Returns (kept, dropped). The caller checks that the mandatory part fits."""
    needs_note = bool(blocks) and blocks[0].kind != "user"
    tokens = [b.tokens for b in blocks]
    if max_messages is None and sum(tokens) + (note_tokens if needs_note else 0) <= budget:
        return _no_leading_orphan(list(blocks), note_tokens), []  # everything fits
    last_user = latest_user_index(blocks)
    n = len(blocks)
    start = n if last_user is None else last_user
    # (sizes count only under a message cap: reading every block's messages costs)
    sizes = [0] * n if max_messages is None else [len(b.messages) for b in blocks]
    kinds = [b.kind for b in blocks]
    # Always sent: the latest user message. The turn in progress comes first among the
    # others, newest first (the results the model is about to use), then older rounds.
    keep = [False] * n
    used = messages = 0
    if last_user is not None:
        keep[start] = True
        used, messages = tokens[start], sizes[start]
    # the turn first, newest first; then older rounds before chatter, newest first
    before = range(start - 1, -1, -1)
    ranked = [*range(n - 1, start, -1)]
    ranked += [i for i in before if kinds[i] == "round"]
    ranked += [i for i in before if kinds[i] != "round"]
    turn_closed = False  # the turn in progress is sent as its newest part, without gaps
    for i in ranked:
        size = sizes[i]
        fits = used + tokens[i] <= budget and (
            max_messages is None or messages + size <= max_messages
        )
        if i > start and (turn_closed or not fits):
            turn_closed = True
            continue
        if not fits:
            continue
        keep[i] = True
        used += tokens[i]
        messages += size

    # A history that starts with the assistant gets a short user note first; make room for
    # it (its tokens, and its place under the message cap) by letting go of the oldest
    # optional blocks.
    def over(used: int, messages: int) -> bool:
        too_many = max_messages is not None and messages + 1 > max_messages
        return used + note_tokens > budget or too_many

    first = keep.index(True) if True in keep else n
    while first < n and kinds[first] != "user" and over(used, messages):
        oldest = next((i for i in range(first, n) if keep[i] and i != last_user), None)
        if oldest is None:
            break
        keep[oldest] = False
        used -= tokens[oldest]
        messages -= sizes[oldest]
        first = keep.index(True) if True in keep else n
    kept = list(compress(blocks, keep))  # (the latest user message is always kept)
    dropped = list(compress(blocks, map(not_, keep)))
    return _no_leading_orphan(kept, note_tokens), dropped


def _no_leading_orphan(kept: list[Block], note_tokens: int) -> list[Block]:
    """History starts with a user message (local templates require it)."""
    if kept and kept[0].kind != "user":
        message: Message = {"role": "user", "content": OMITTED_NOTE}
        return [Block("user", (message,), "", tokens=note_tokens), *kept]
    return kept


def merge_adjacent_users(messages: list[Message]) -> list[Message]:
    """Two user messages in a row (after a drop) become one."""
    out: list[Message] = []
    for message in messages:
        if out and message["role"] == "user" and out[-1]["role"] == "user":
            text = message.get("content")
            if isinstance(text, str):
                out[-1] = _suffix_user(out[-1], text)
            else:
                out[-1] = with_content(out[-1], _as_parts(out[-1].get("content")) + _as_parts(text))
            continue
        out.append(message)
    return out


def _as_parts(content: Content) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or ())


SUMMARY_OPEN = "<conversation-summary>\nThe earlier conversation, summarized:\n"
SUMMARY_CLOSE = "\n</conversation-summary>"


def summary_block(summary: str) -> Block:
    """The running summary as the history's first message (merged into the first kept user
    message when one follows: never two user turns in a row)."""
    message: Message = {
        "role": "user",
        "content": f"{SUMMARY_OPEN}{summary.strip()}{SUMMARY_CLOSE}",
    }
    return Block("user", (message,), "")


def compaction_plan(
    ui_messages: Sequence[UIMessage], blocks: list[Block], target: int
) -> list[str] | None:
    """The oldest UI messages to summarize so the history left is at most `target` tokens;
    the cut falls just before a user message, never at or after the latest one."""
    last_user = latest_user_index(blocks)
    if last_user is None:
        return None
    protected = {b.source_id for b in blocks[last_user:]}
    tokens_by_id: dict[str, int] = {}
    for b in blocks:
        tokens_by_id[b.source_id] = tokens_by_id.get(b.source_id, 0) + b.tokens
    ids = [str(m.get("id") or "") for m in ui_messages]
    end = next((k for k, mid in enumerate(ids) if mid in protected), len(ids))
    before = [0, *accumulate(tokens_by_id.get(mid, 0) for mid in ids[:end])]  # tokens before k
    cuts = [k for k in range(1, end) if ui_messages[k].get("role") == "user"]
    if not cuts:
        return None
    # the first cut that leaves at most `target`, else the last one there is
    first = bisect_left([before[k] for k in cuts], sum(tokens_by_id.values()) - target)
    return ids[: cuts[min(first, len(cuts) - 1)]]
