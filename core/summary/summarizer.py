"""The running summary: the model condenses the oldest part of a long thread, building on the
summary it wrote before; if it fails or takes too long, a deterministic digest stands in.

Summaries are rare by design (the engine asks for one only above its high watermark, and
summarizes down to the low one), so the request prefix stays unchanged between them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from ..base import OpenAIMessage, UIMessage, text_of, to_openai_messages
from ..context import Summary, build_blocks, digest_rounds, flatten
from ..provider import Provider, background
from ..stream import visible_text
from ..tokens import counter_for, pack, within
from . import summary_trust as trust
from .fallback_summary import facts_block, fallback_summary, split_facts
from .summary_checks import problem

log = logging.getLogger("comfyui_assistant")

SUMMARY_PROMPT = """Do not answer the conversation or call tools now: summarize it. You keep \
the running summary of a conversation between a ComfyUI user and ComfyUI Assistant (an \
assistant that edits and runs ComfyUI workflows with tools). Write the new summary from the \
previous summary (if any) and the new part of the conversation. Keep every fact the \
assistant may need later, verbatim: file names, model names, seeds, sizes, steps, cfg, node \
ids and node types, values the user chose. Drop small talk.

Use exactly these sections, each a few short bullet points (write "none" if empty):
## Goals
## Workflow (what was built or changed, with node ids)
## Decisions
## Preferences the user stated
## Open requests

At most 350 words. Output only the summary."""

# The same request, when the stretch to summarize is in the chat's own request: that request
# as it was sent, and this after it (see `Prefix.messages`).
IN_PLACE_PROMPT = """Do not answer the conversation or call tools now: summarize it. Write \
the running summary of the conversation above{span}, building on the summary at its start if \
there is one. Keep every fact the assistant may need later, verbatim: file names, model \
names, seeds, sizes, steps, cfg, node ids and node types, values the user chose, what the \
user said about themselves and their plans. Drop small talk.

Use exactly these sections, each a few short bullet points (write "none" if empty):
## Goals
## Workflow (what was built or changed, with node ids)
## Decisions
## Preferences the user stated
## Open requests

At most 350 words. Output only the summary."""
BOUNDARY_WORDS = 16  # of the first message left out of the summary, quoted to mark where it ends

SUMMARY_TIMEOUT = 120.0  # a local model may take a while to summarize a long stretch
SUMMARY_MAX_TOKENS = 800  # the answer's limit (a summary of at most 350 words fits easily)
DEFAULT_WINDOW = 8192
DEFAULT_SUMMARY_TOKENS = 1000  # when the caller has no budget to size it by (/compact)
# The facts block beside a model summary is the verbatim record that carries forward from one
# compaction to the next (the model rewrites its summary each time and may drop a fact); when
# both do not fit, it keeps at least this share of the room. bench/fidelity.py, model variant,
# tools/chat at 4K: a half kept 62%/47% of the needed facts, three quarters 76%/64%, all 71%/68%.
FACTS_SHARE = 0.75


class UnusableSummary(ValueError):
    """No summary to use; the digest stands in."""


class RejectedSummary(UnusableSummary):
    """The model's summary failed a check (summary_checks): `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the summary was rejected: {reason}")
        self.reason = reason


def transcript_lines(messages: Sequence[OpenAIMessage]) -> list[str]:
    """The conversation as plain text lines for the summarizer (tool results digested)."""
    lines = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "[image]") for p in content)
        if m["role"] == "tool":
            lines.append(f"Tool result: {content}")
        elif m["role"] == "assistant":
            calls = [
                f"{c['function']['name']}({c['function']['arguments']})"
                for c in m.get("tool_calls") or []
            ]
            text = content or ""
            lines.append(f"Assistant: {text}" + (f" [calls: {'; '.join(calls)}]" if calls else ""))
        else:
            lines.append(f"User: {content}")
    return lines


def transcript(messages: Sequence[OpenAIMessage]) -> str:
    return "\n".join(transcript_lines(messages))


def chunks(lines: list[str], room: int, count: Callable[[str], int]) -> list[str]:
    """The transcript in pieces of at most `room` tokens, oldest first, cut between lines (a
    line longer than a piece keeps its start and its end)."""
    return [text for text, _ in pack(_fitted_lines(lines, room, count), "\n", within(room))]


def _fitted_lines(
    lines: list[str], room: int, count: Callable[[str], int]
) -> Iterator[tuple[str, int]]:
    """Each line with its tokens (and its line break); one longer than `room` (a paste) keeps
    its start and its end."""
    for line in lines:
        size = count(line) + 1
        if size > room:
            keep = max(200, len(line) * room // size // 2 - 20)
            line = f"{line[:keep]} […] {line[-keep:]}"
            size = count(line) + 1
        yield line, size


@dataclass(frozen=True)
class Prefix:
    """What the summarizer's requests begin with: the chat's own system message and tools,
    so that on a local server (one cache slot: the last request's tokens) the chat request
    after a summary still finds them cached and re-processes only the summary and the kept
    history.

    With `messages` (the chat's request as it will begin next, every message to summarize
    in it), the summary request is that request and the instruction after it: the server
    reads the instruction only (the rest is in its cache), and its cache still holds the chat
    when the next chat request comes (`boundary`: the start of the first message the summary
    stops before; None: all of them)."""

    system: str = ""
    tools: tuple[dict[str, Any], ...] = ()
    slot: int | None = None  # the chat's llama.cpp slot: its cache holds that prefix
    messages: tuple[OpenAIMessage, ...] = ()
    boundary: str | None = None
    answer_tokens: int = 800  # what the window leaves the summary after `messages`


NO_PREFIX = Prefix()


async def _one_summary(
    provider: Provider, model: str, previous: str | None, part: str, prefix: Prefix
) -> str:
    user = (
        f"{SUMMARY_PROMPT}\n\n"
        + (f"Previous summary:\n{previous}\n\n" if previous else "")
        + f"New part of the conversation:\n<conversation>\n{part}\n</conversation>"
    )
    request: list[OpenAIMessage] = [
        {"role": "system", "content": prefix.system or "You summarize conversations."},
        {"role": "user", "content": user},
    ]
    completed = await provider.complete(
        model, request, SUMMARY_MAX_TOKENS, 0.2, prefix.tools, prefix.slot
    )
    text = visible_text(completed.text).strip()
    reason = problem(text, completed.finish_reason, part)
    if reason is not None:
        raise RejectedSummary(reason)
    return text


async def in_place_summary(
    provider: Provider, model: str, prefix: Prefix, part: str, max_tokens: int
) -> str:
    """The summary asked for after the chat's own request (`Prefix.messages`)."""
    span = ""
    if prefix.boundary is not None:
        span = f", from its start up to (not including) the message that begins “{prefix.boundary}”"
    instruction: OpenAIMessage = {"role": "user", "content": IN_PLACE_PROMPT.format(span=span)}
    completed = await provider.complete(
        model, [*prefix.messages, instruction], max_tokens, 0.2, prefix.tools, prefix.slot
    )
    text = visible_text(completed.text).strip()
    reason = problem(text, completed.finish_reason, part)
    if reason is not None:
        raise RejectedSummary(reason)
    return text


def boundary_of(message: UIMessage) -> str:
    """The start of a message's text, to quote where a summary stops."""
    words = text_of(message).split()
    return " ".join(words[:BOUNDARY_WORDS]) + (" …" if len(words) > BOUNDARY_WORDS else "")


async def model_summary(
    provider: Provider,
    model: str,
    previous: str | None,
    messages: Sequence[OpenAIMessage],
    window: int = DEFAULT_WINDOW,
    prefix: Prefix = NO_PREFIX,
) -> str:
    """The new running summary, from the oldest stretch up: each request fits the model's
    window (prompt, previous summary, a piece of the transcript, room for the answer), and
    each summary builds on the one before."""
    counter = counter_for(model)
    count = counter.text
    fixed = count(SUMMARY_PROMPT) + count(prefix.system) + counter.tools(list(prefix.tools))
    fixed += 2 * SUMMARY_MAX_TOKENS + 64  # (the answer, the previous summary)
    room = max(256, int(window * 0.9) - fixed)
    summary = previous
    for part in chunks(transcript_lines(messages), room, count):
        summary = await _one_summary(provider, model, summary, part, prefix)
    if not summary:
        raise UnusableSummary("there was nothing to summarize")
    return summary


async def summarize(
    provider: Provider,
    model: str,
    previous: Summary | None,
    ui_messages: Sequence[UIMessage],
    ids: list[str],
    timeout: float = SUMMARY_TIMEOUT,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
    window: int = DEFAULT_WINDOW,
    prefix: Prefix = NO_PREFIX,
    ahead: bool = False,
) -> Summary:
    """Summarize the UI messages named in `ids` (oldest first) on top of `previous`. A model
    summary keeps the deterministic facts of the stretch beside it (what both speakers said
    that names, dates or counts something, the user's instructions first); the digest that
    stands in for a failed one fits `max_tokens` (the model's count, as the engine measures
    the summary). `ahead`: made ahead in the background, it waits for the chat turns on a
    server whose slots share one cache, and they stop it (core/provider/shared_cache.py)."""
    wanted = set(ids)
    part = [m for m in ui_messages if str(m.get("id") or "") in wanted]
    digested = flatten(digest_rounds(build_blocks(part), keep_last=0, batch=1))
    whole = to_openai_messages(part)  # (the digest reads the full results itself)
    before = previous.text if previous else None
    count = counter_for(model).text
    resting = trust.skip_reason(provider, model)
    if resting is not None:
        log.warning("not asking for a summary (%s); using the deterministic digest", resting)
        text = fallback_summary(whole, before, max_tokens, count)
        return Summary(text, until=ids[-1], fallback=True)
    try:
        if prefix.messages:
            part_text = transcript(digested)
            asked = in_place_summary(provider, model, prefix, part_text, prefix.answer_tokens)
        else:
            asked = model_summary(provider, model, _without_facts(before), digested, window, prefix)
        gate = background(provider.settings, model, prefix.slot) if ahead else nullcontext()
        async with gate:
            text = await asyncio.wait_for(asked, timeout)
        trust.accepted(provider, model)
        facts = facts_block(whole, before, facts_room(text, max_tokens, count), count)
        return Summary(f"{text}\n\n{facts}" if facts else text, until=ids[-1], fallback=False)
    except Exception as exc:  # any failure: the deterministic digest stands in
        why = f"no summary within {timeout:g} s" if isinstance(exc, TimeoutError) else str(exc)
        if isinstance(exc, RejectedSummary | TimeoutError):  # a model's, not a connection's
            trust.rejected(provider, model, exc.reason if isinstance(exc, RejectedSummary) else why)
        log.warning("summarizing failed (%s); using the deterministic digest", why or repr(exc))
        text = fallback_summary(whole, before, max_tokens, count)
        return Summary(text, until=ids[-1], fallback=True)


def facts_room(summary: str, max_tokens: int, count: Callable[[str], int]) -> int:
    """The tokens the facts block beside a model summary may take: what the summary leaves of
    `max_tokens`, and at least FACTS_SHARE of it. The engine keeps the newest part of the
    whole (the facts, and the summary's end as far as it fits)."""
    return max(max_tokens - count(summary) - 2, int(max_tokens * FACTS_SHARE))


def _without_facts(summary: str | None) -> str | None:
    """A model summary without the facts block kept beside it (the model rewrites the rest)."""
    if summary is None:
        return None
    return split_facts(summary)[0]
