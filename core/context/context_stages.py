"""The context engine's stages: each a small function over one `Assembly`, the state one
request is assembled in. `context_engine.STAGES` runs them in order; each stage says what it
reads and sets, and reports the limits it applies (`Assembly.limits`).

Counts are exact for what is sent (`TokenCounter`); the learned per-component correction
(`token_correction.Factors`: system message, tools, messages) sizes them as the provider counts
(`Assembly.sized`), and the room left for the messages is divided by the message factor instead
of scaling each count (`Assembly.raw`).
What is derived from a block (its digest, cut and rendered variants, its count) is remembered
by the `BlockCache`; blocks never change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal

from ..base import (
    ReportDocuments,
    UIMessage,
    UIPart,
    content_text,
    images_after_results,
    with_content,
)
from ..files import project_documents as docs
from ..provider import Budget, ContextBudgetError, compute_budget
from ..store import SentTurn
from ..tokens import REPLY_PRIMING, Factors, Parts, TokenCounter
from . import context_steps as steps
from . import round_fold
from .context_blocks import Block, Message, flatten, latest_user_index, own_parts, tool_parts
from .context_cache import BlockCache
from .context_inputs import ContextInputs, covered_ids
from .context_validate import report_violation, validate

# Tool definitions may take at most this share of the room left after the output reserve:
# on a 4K local window the full set would crowd out the conversation.
# The summarizer sizes the running summary to this share of the budget; the engine cuts one
# only past SUMMARY_LIMIT_SHARE (keeping the newest part). The gap keeps the summary's bytes
# (the start of the history, right after the system prompt and tools) the same when the budget
# or the learned factor moves a little: a summary cut anew is a request re-read from there.
SUMMARY_SHARE = 0.2
SUMMARY_LIMIT_SHARE = 0.3


def summary_cap(available: int, correction: float, share: float = SUMMARY_SHARE) -> int:
    """The most tokens (by our counter) the running summary may take: `share` of the budget
    as the provider counts it (`correction`, the messages factor), at least 64."""
    return max(64, math.floor(int(available * share) / correction))


@dataclass(frozen=True)
class Tally:
    """What the checks and the report need of the chosen blocks, in one pass over them."""

    tokens: int
    results: int  # tokens of the tool results in the kept rounds (digests included)
    kept: int
    digested: int  # kept rounds sent as digests
    cut: int  # kept rounds with a result cut
    adjacent_users: bool  # two user blocks in a row (after a drop): to be merged


@dataclass
class Assembly:
    """One request in the making. The fields after `limits` are set by the stage named."""

    inputs: ContextInputs
    counter: TokenCounter
    cache: BlockCache
    limits: list[str] = field(default_factory=list)  # what the stages left out or shortened
    tools: list[dict[str, Any]] = field(init=False)  # fit_tools: the definitions to send
    tool_tokens: int = field(init=False)  # fit_tools
    budget: Budget = field(init=False)  # fit_tools
    summarized: frozenset[str] = field(init=False)  # thread_blocks: UI ids under the summary
    blocks: list[Block] = field(init=False)  # thread_blocks, then every stage up to the window
    origin: Origins = field(init=False)  # thread_blocks
    system_message: Message = field(init=False)  # system_message
    system_tokens: int = field(init=False)  # system_message: its exact count
    summary_block: Block | None = field(init=False)  # system_message: the summary sent
    history_budget: int = field(init=False)  # system_message: exact tokens for the history
    documents: Message | None = None  # project_documents: the block above the latest message
    documents_tokens: int = 0  # project_documents: its exact count (as its own message)
    documents_report: ReportDocuments | None = None  # project_documents
    documents_anchor: str | None = None  # project_documents: the user message it heads
    plan: Callable[[], tuple[list[str], int] | None] | None = None  # plan_compaction
    allowance: Callable[[int], int] | None = None  # plan_compaction: a new summary's size
    kept: list[Block] = field(init=False)  # priority_window
    dropped: list[Block] = field(init=False)  # priority_window
    tally: Tally = field(init=False)  # priority_window
    messages: list[Message] = field(init=False)  # final_messages: the request
    parts: Parts = field(init=False)  # final_messages: the exact count by component
    exact: int = field(init=False)  # final_messages: its exact count, tools included

    @property
    def fitting(self) -> Factors:
        """The factors a request is fitted with: the learned correction, with our exact count
        as the floor (a factor learned below 1 is not trusted to make room: a provider whose
        usage leaves the tool definitions out taught a tools factor of 0.035, and requests went
        over the window). The one exception: the messages' factor once the server's own counts
        calibrated the correction (`calibration`). Its tokenizer may count a language at a
        fraction of ours (Gemma 3: Arabic chats 0.71, Japanese 0.81 of cl100k), and the floor
        left that much of the window unused; a request near the limit is counted by the server
        before it is sent (chat_context.calibrate), so trusting it does not overflow."""
        system, tools, messages = self.inputs.correction
        if not self.inputs.calibration:
            messages = max(1.0, messages)
        return Factors(max(1.0, system), max(1.0, tools), messages)

    def sized(self, system: int = 0, tools: int = 0, messages: int = 0) -> int:
        """Exact counts as the provider counts them, for fitting (`fitting`)."""
        return self.fitting.scale(Parts(system, tools, messages))

    def estimated(self, system: int = 0, tools: int = 0, messages: int = 0) -> int:
        """Exact counts as the provider counts them, as learned (what the report shows)."""
        return self.inputs.correction.scale(Parts(system, tools, messages))

    def raw(self, provider_tokens: int) -> int:
        """A provider-sized room for messages in exact tokens."""
        return math.floor(provider_tokens / self.fitting.messages)


class Origins:
    """The tool parts, in this request, of each pending round sent whole: it is rendered
    from them. Only the newest rounds of new messages need them, so the map is built on the
    first question."""

    def __init__(self, messages: Sequence[UIMessage], found: list[tuple[Block, ...]]) -> None:
        self.messages, self.found = messages, found
        self._at: dict[int, int] | None = None  # id of a pending round -> its message's index
        self._parts: dict[int, list[UIPart]] = {}  # message index -> its tool parts

    def __call__(self, block: Block) -> list[UIPart]:
        if self._at is None:
            self._at = {id(b): k for k, bs in enumerate(self.found) for b in bs if b.offset >= 0}
        k = self._at[id(block)]
        parts = self._parts.get(k)
        if parts is None:
            parts = self._parts[k] = tool_parts(self.messages[k])
        return own_parts(block, parts)


# --- the stages, in order -----------------------------------------------------------------------


def fit_tools(a: Assembly) -> None:
    """The budget: window − output reserve − safety margin − tool definitions. (Which tools,
    and in which form, the prompt profile decided for the window: `prompt_profile.py`.)"""
    inputs = a.inputs
    a.tools, a.tool_tokens = inputs.tools, a.counter.tools(inputs.tools)
    if inputs.profile != "full":
        a.limits.append(
            f"{inputs.profile} prompt profile for a {inputs.window.tokens:,}-token window: "
            f"compact instructions, {len(a.tools) or 'no'} brief tool definitions"
        )
    a.budget = compute_budget(inputs.window, inputs.max_output_tokens, a.sized(tools=a.tool_tokens))


def thread_blocks(a: Assembly) -> None:
    """The thread's blocks, from the cache (tool rounds pending: digested or rendered next).
    The messages under the running summary are not sent again."""
    messages, summary = a.inputs.ui_messages, a.inputs.summary
    a.summarized = covered_ids(messages, summary.until) if summary else frozenset()
    if a.summarized:
        messages = [m for m in messages if str(m.get("id") or "") not in a.summarized]
    found = a.cache.thread(messages, a.inputs.cache_scope)
    a.blocks = list(chain.from_iterable(found))
    a.origin = Origins(messages, found)


def digest_old_rounds(a: Assembly) -> None:
    """Older tool rounds become one line per call (recallable), in batches, so the request
    prefix changes rarely; the newest rounds are rendered whole. The rounds of finished turns
    (before the latest user message, whatever became of their answers) stay whole only while
    their results are small: past `finished_share` of the budget they are all digested, so a
    turn's lookups do not ride along in every later request."""
    settings = a.inputs.settings
    rounds = [i for i, b in enumerate(a.blocks) if b.kind == "round"]
    latest = latest_user_index(a.blocks)
    finished = 0 if latest is None else sum(i < latest for i in rounds)
    batched = steps.digest_count(len(rounds), settings.keep_last_rounds, settings.digest_batch)
    at_least = 0
    if batched < finished:
        whole = [a.cache.rendered(a.blocks[i], a.origin) for i in rounds[batched:finished]]
        text = a.counter.text
        size = sum(text(content_text(m.get("content"))) for b in whole for m in b.messages[1:])
        if size > settings.finished_share * a.budget.available:
            at_least = finished
    blocks = steps.digest_rounds(
        a.blocks, settings.keep_last_rounds, settings.digest_batch, a.cache.digested, at_least
    )
    a.blocks = [a.cache.rendered(b, a.origin) if b.offset >= 0 else b for b in blocks]
    digested = sum(b.digested for b in a.blocks)
    if digested:
        a.limits.append(f"{digested} older tool rounds digested")
    if at_least > batched:
        a.limits.append(
            f"the tool results of earlier turns digested: {size:,} tokens over "
            f"{settings.finished_share:.0%} of the budget"
        )


def cut_oversized_results(a: Assembly) -> None:
    """A result sent whole takes at most `max_result_share` of the budget: one larger is cut
    structure-aware (a 200 KB workflow keeps its shape)."""
    limit = max(256, a.raw(int(a.budget.available * a.inputs.settings.max_result_share)))
    text = a.counter.text
    a.blocks = steps.cut_oversized(a.blocks, limit, text, lambda b: a.cache.cut(b, limit, text))
    cut = sum(b.cut for b in a.blocks)
    if cut:
        a.limits.append(f"{cut} oversized tool results cut")


def as_sent(a: Assembly) -> None:
    """Each user message as it was first sent (its reminder block, a /skill expansion, the
    passages recalled for it while the summary it was sent with is in use), and a note after
    one that got no answer (never merged into the next)."""
    sent, cache = a.inputs.sent, a.cache

    def one(block: Block) -> Block:
        turn = sent_turn(a, block.source_id) if block.kind == "user" else None
        if turn is None:
            return block
        return cache.derive(block, ("sent", turn), lambda b: steps.as_sent(b, turn))

    blocks = steps.answer_gaps(a.blocks)  # (on what was typed: a retry repeats it)
    a.blocks = [one(b) for b in blocks] if sent else blocks


def count_blocks(a: Assembly) -> None:
    """Every block with its exact count (remembered by the cache per encoding)."""
    counted, counter = a.cache.counted, a.counter
    a.blocks = [counted(b, counter) for b in a.blocks]


def system_message(a: Assembly) -> None:
    """The system message, cut only if it would take more than half the budget, and the
    running summary (its newest part, at most SUMMARY_SHARE) as the history's first message:
    a compaction changes the request after the system prompt and tools only. And what they
    leave for the history."""
    system, cut = steps.truncate_system(
        a.inputs.system, a.budget.available, lambda t: a.sized(system=a.counter.text(t))
    )
    if cut:
        a.limits.append("system prompt truncated to 30% of the budget")
    a.system_message = {"role": "system", "content": system}
    a.system_tokens = a.counter.message(a.system_message)
    a.summary_block, summary_tokens = None, 0
    if a.inputs.summary is not None and a.summarized:
        cap = summary_cap(a.budget.available, a.fitting.messages, SUMMARY_LIMIT_SHARE)
        text = steps.keep_tail(a.inputs.summary.text, cap, a.counter.text)
        a.summary_block = a.cache.counted(steps.summary_block(text), a.counter)
        summary_tokens = a.summary_block.tokens
    room = a.budget.available - a.sized(system=a.system_tokens)
    a.history_budget = a.raw(room) - summary_tokens - REPLY_PRIMING


def project_documents(a: Assembly) -> None:
    """The thread's project documents as one block near the end (project_documents.py says
    where, and why): whole when they fit `DOCUMENTS_SHARE` of the budget, else the passages
    ranked best for the question within `RETRIEVAL_SHARE`, best first; never at the latest
    message's expense. The history's budget is what they leave."""
    project = a.inputs.project
    if project is None:
        return
    counter = a.counter
    latest = latest_user_index(a.blocks)
    must = a.blocks[latest].tokens if latest is not None else 0
    room = min(a.raw(int(a.budget.available * docs.DOCUMENTS_SHARE)), a.history_budget - must)
    mode: Literal["whole", "retrieved"] = "whole"
    entries: list[dict[str, Any]] = []
    text, tokens = "", 0
    if project.documents:
        entries = [docs.whole_entry(d) for d in project.documents]
        text = docs.render(project, entries, whole=True)
        tokens = counter.message({"role": "user", "content": text})
    if not entries or tokens > room:
        mode, entries, text, tokens = "retrieved", [], "", 0
        room = min(room, a.raw(int(a.budget.available * docs.RETRIEVAL_SHARE)))
        for passage in project.passages:
            entry = docs.passage_entry(passage)
            candidate = docs.render(project, [*entries, entry], whole=False)
            size = counter.message({"role": "user", "content": candidate})
            if size > room:
                continue  # a shorter passage ranked lower may still fit
            entries, text, tokens = [*entries, entry], candidate, size
        if project.documents or project.tokens:
            a.limits.append(
                f"project {project.name}: {project.tokens:,} tokens of documents over "
                f"{docs.DOCUMENTS_SHARE:.0%} of the budget; {len(entries)} passages retrieved"
            )
    if entries:
        a.documents_anchor = docs.anchor(a.inputs.ui_messages, mode == "whole", a.summarized)
        a.documents = {"role": "user", "content": text}
        a.documents_tokens = tokens
        a.history_budget -= tokens
    a.documents_report = {
        "project": project.name,
        "mode": mode,
        "documents": project.document_count,
        "passages": 0 if mode == "whole" else len(entries),
        "tokens": a.sized(messages=tokens),
        "sent": [
            {"citationId": e["citation_id"], "title": e["title"],
             "tokens": counter.text(e["contents"])}
            for e in entries
        ],
    }  # fmt: skip


def plan_compaction(a: Assembly) -> None:
    """Above the high watermark, the plan names the oldest messages to summarize: as few as
    free what the history needs, the overflow (none while it still fits) and the margin
    (`compaction_margin`: room for the next turns), once the new summary takes their place
    (`summary_allowance`: its share of what it newly covers, on top of the summary it
    replaces). A thread that fits is never summarized for the room a summary would make:
    the plan is made ahead, and used only once the thread no longer fits (worked out only if
    the caller asks: it summarizes, stores, builds again)."""
    settings = a.inputs.settings
    history = sum(b.tokens for b in a.blocks)
    if settings.summarize and history > settings.high_watermark * a.history_budget:
        ui, blocks = a.inputs.ui_messages, a.blocks
        now = a.summary_block.tokens if a.summary_block else 0
        cap = summary_cap(a.budget.available, a.fitting.messages)
        free = max(0, history - a.history_budget) + compaction_margin(a)
        covered = covered_needed(free, now, cap)
        a.plan = lambda: _planned(steps.compaction_plan(ui, blocks, history - covered), blocks)
        a.allowance = lambda tokens: summary_allowance(tokens, now, cap)


# A new summary may take this share of the messages it newly covers, on top of the summary it
# replaces, within its cap (summary_cap), and at least SUMMARY_FLOOR: a compaction then frees
# about three quarters of what it covers, so it covers about 4/3 of what it must free.
SUMMARY_RATIO = 0.25
SUMMARY_FLOOR = 256


def compaction_margin(a: Assembly) -> int:
    """What a compaction frees beyond the overflow: (1 − LLM_HISTORY_LOW_WATERMARK) of the
    history's room (10% by default: a few more turns before the next one)."""
    room = a.history_budget + (a.summary_block.tokens if a.summary_block else 0)
    return max(0, int((1 - a.inputs.settings.low_watermark) * room))


def summary_allowance(covered: int, now: int, cap: int) -> int:
    """The tokens a new summary may take when it covers `covered` more tokens of messages than
    the summary in use (`now` tokens) does: its share of them on top of `now`, at least
    SUMMARY_FLOOR, at most `cap`."""
    return min(cap, max(SUMMARY_FLOOR, now + int(SUMMARY_RATIO * covered)))


def covered_needed(free: int, now: int, cap: int) -> int:
    """The fewest tokens of messages a new summary must cover so that it frees `free` tokens:
    covered − (its allowance − now) ≥ free. (What it frees grows with what it covers, so the
    least of the candidates that works: its allowance a share of it, at its floor, at its
    cap.)"""
    linear = math.ceil(free / (1 - SUMMARY_RATIO))
    candidates = [max(0, c) for c in (linear, free + SUMMARY_FLOOR - now, free + cap - now)]
    works = [c for c in candidates if c - summary_allowance(c, now, cap) + now >= free]
    return min(works, default=max(candidates))


def _planned(ids: list[str] | None, blocks: list[Block]) -> tuple[list[str], int] | None:
    """The plan's ids with the tokens of the messages they name (as sent)."""
    if not ids:
        return None
    named = set(ids)
    return ids, sum(b.tokens for b in blocks if b.source_id in named)


def fit_turn(a: Assembly) -> None:
    """The turn in progress made to fit beside the latest user message, if it can: its older
    rounds become digests, its newest round's results are cut to equal shares of the room
    left, and as a last resort every round of the turn is digested. (What still does not fit
    is left to the priority window, newest first.)"""
    blocks, start = a.blocks, latest_user_index(a.blocks)
    room = a.history_budget - _note_tokens(a)
    if start is None or sum(b.tokens for b in blocks[start:]) <= room:
        return
    turn = blocks[start:]
    rounds = [i for i, b in enumerate(turn) if b.kind == "round" and not b.digested]
    if not rounds:
        return
    cache, counter = a.cache, a.counter

    def counted(blocks: list[Block]) -> list[Block]:
        return [cache.counted(b, counter) for b in blocks]

    if len(rounds) > 1:  # the older rounds of this turn become digests
        turn = counted([cache.digested(b) if i in rounds[:-1] else b for i, b in enumerate(turn)])
    fixed = sum(b.tokens for b in turn if b.kind != "round" or b.digested)
    whole = [b for b in turn if b.kind == "round" and not b.digested]
    share = max(64, (room - fixed) // max(1, sum(len(b.messages) - 1 for b in whole)) - 16)
    turn = counted(
        [
            cache.cut(b, share, counter.text) if b.kind == "round" and not b.digested else b
            for b in turn
        ]
    )
    if sum(b.tokens for b in turn) > room:  # last resort: every round of the turn as digests
        turn = counted([cache.digested(b) if b.kind == "round" else b for b in turn])
    for smaller, limit in round_fold.SMALLER:  # (a step of more calls than the window holds)
        if sum(b.tokens for b in turn) <= room:
            break
        name = smaller.__name__
        turn = counted([cache.derive(b, name, smaller) if b.kind == "round" else b for b in turn])
        a.limits.append(limit)
    a.blocks = blocks[:start] + turn
    a.limits.append("the tool results of the turn in progress shortened to fit")


def priority_window(a: Assembly) -> None:
    """The priority window: the latest user message and the turn in progress always, then
    tool rounds, then chatter, newest first; sent in chronological order."""
    limit = a.inputs.settings.max_history_messages
    a.kept, a.dropped = steps.select_window(a.blocks, a.history_budget, limit, _note_tokens(a))
    a.tally = tally(a.kept)
    if a.tally.tokens > a.history_budget:  # only the mandatory part can overflow
        last_user = latest_user_index(a.blocks)
        needed = a.blocks[last_user].tokens if last_user is not None else 0
        head = (a.summary_block.tokens if a.summary_block else 0) + REPLY_PRIMING
        need = a.sized(system=a.system_tokens, messages=needed + head)
        raise ContextBudgetError.for_message(need, a.budget, a.inputs.model)
    if a.dropped:
        a.limits.append(f"{len(a.dropped)} older blocks left out by the priority window")


def final_messages(a: Assembly) -> None:
    """The request: system message and history (user turns left adjacent by a drop merged);
    validated, and counted exactly."""
    counter, tally = a.counter, a.tally
    head = [] if a.summary_block is None else [a.summary_block]
    kept, change = _with_documents(a, a.kept)
    history = flatten([*head, *kept])
    merge = tally.adjacent_users or a.summary_block is not None
    merged = steps.merge_adjacent_users(history) if merge else history
    sent = images_after_results(merged)
    a.messages = validate([a.system_message, *sent])
    if sent is history:  # the history's counts are known
        rest = tally.tokens + sum(b.tokens for b in head) + REPLY_PRIMING + change
    else:  # rare: user turns merged, images moved out of results: count them again
        rest = counter.messages(a.messages[1:])
    a.parts = Parts(a.system_tokens, a.tool_tokens, rest)
    a.exact = a.parts.total
    over = a.sized(*a.parts) - a.budget.tools - a.budget.available
    if over > 0:  # the stages above guarantee this never happens: a bug if it does
        report_violation(f"the request is {over} tokens over the budget of {a.budget.available}")


# --- helpers --------------------------------------------------------------------------------------


def _with_documents(a: Assembly, kept: list[Block]) -> tuple[list[Block], int]:
    """The project's documents block put at the head of its anchor user message (the latest,
    or for whole documents the one they were last moved to: `documents_anchor`; the latest if
    that one was left out), not as a message of its own (two user messages in a row), and
    what that adds to the count."""
    block = a.documents
    users = [i for i, b in enumerate(kept) if b.kind == "user"]
    if block is None or not users:
        return kept, 0
    at = next((i for i in users if kept[i].source_id == a.documents_anchor), users[-1])
    message = kept[at].messages[0]
    content, text = message.get("content"), str(block["content"])
    if isinstance(content, str):
        joined = with_content(message, f"{text}\n\n{content}")
    else:
        parts = list(content or ())
        joined = with_content(message, [{"type": "text", "text": text}, *parts])
    change = a.counter.message(joined) - a.counter.message(message)
    placed = kept[at].with_messages([joined, *kept[at].messages[1:]])
    return [*kept[:at], placed, *kept[at + 1 :]], change


def sent_turn(a: Assembly, message_id: str) -> SentTurn | None:
    """What a user message was first sent with, as it is resent under the summary in use."""
    turn = a.inputs.sent.get(message_id)
    summary = a.inputs.summary
    return None if turn is None else turn.under(summary.until if summary else None)


def _note_tokens(a: Assembly) -> int:
    """What the note standing in for left-out messages costs."""
    return a.counter.message({"role": "user", "content": steps.OMITTED_NOTE})


def tally(kept: list[Block]) -> Tally:
    tokens = results = digested = cut = 0
    adjacent, previous = False, ""
    for block in kept:
        kind = block.kind
        tokens += block.tokens
        if kind == "round":
            results += block.results
            digested += block.digested
            cut += block.cut
        elif kind == "user" and previous == "user":
            adjacent = True
        previous = kind
    return Tally(tokens, results, len(kept), digested, cut, adjacent)
