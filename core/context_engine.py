"""The context engine: from the thread and its sources to the exact request the model gets.

Steps, in order (each in context_steps, each a small pure function):
  1. the budget: window − output reserve − safety margin − tool definitions;
  2. blocks from the UI messages; those under the running summary are not sent again;
  3. older tool rounds digested to one line per call (in batches: rare prefix changes);
  4. one oversized tool result cut structure-aware;
  5. the persona above the latest user message;
  6. the system message, with the summary right after its own text, cut only if it would
     take more than half the budget;
  7. compaction check: above the high watermark, name the oldest messages to summarize down
     to the low watermark (the caller summarizes, stores, and builds again);
  8. the priority window: the latest user message and the turn in progress always, then tool
     rounds, then chatter, newest first, output chronological;
  9. reminders last;
 10. the validator, and the report.
Token counts are exact for what is sent, scaled by the learned per-model correction.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, chain
from typing import Any

from . import context_steps as steps
from .budget import Budget, ContextBudgetError, Window, compute_budget
from .context_blocks import Block, Message, flatten, latest_user_index, own_parts, tool_parts
from .context_cache import SHARED, BlockCache
from .context_validate import report_violation, validate
from .gc_pause import cyclic_gc_paused
from .tokens import REPLY_PRIMING, TokenCounter

# Tool definitions may take at most this share of the room left after the output reserve:
# on a 4K local window the full set would crowd out the conversation.
TOOLS_SHARE = 0.3
# The running summary may take at most this share of the budget (the newest part is kept).
SUMMARY_SHARE = 0.2


def _env_float(environ: Mapping[str, str], name: str, default: float) -> float:
    try:
        value = float(environ.get(name, default))
    except ValueError:
        return default
    return value if 0 < value <= 1 else default


def _env_int(environ: Mapping[str, str], name: str, default: int | None) -> int | None:
    raw = environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


@dataclass(frozen=True)
class ContextSettings:
    keep_last_rounds: int = 2
    """LLM_TOOL_RESULT_KEEP_LAST_ROUNDS: the newest tool rounds always sent whole."""
    digest_batch: int = 3
    """LLM_TOOL_RESULT_DIGEST_BATCH: older rounds are digested this many at a time."""
    max_result_share: float = 0.25
    """LLM_TOOL_RESULT_MAX_SHARE: one tool result may take at most this share of the budget."""
    high_watermark: float = 0.75
    """LLM_HISTORY_HIGH_WATERMARK: summarize when the history passes this share."""
    low_watermark: float = 0.45
    """LLM_HISTORY_LOW_WATERMARK: ...down to this share."""
    max_history_messages: int | None = None
    """LLM_HISTORY_MAX_MESSAGES: an optional cap on messages sent (the budget governs)."""
    summarize: bool = True
    """LLM_HISTORY_SUMMARIZE=0 turns summaries off (the priority window still applies)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ContextSettings:
        return cls(
            keep_last_rounds=_env_int(environ, "LLM_TOOL_RESULT_KEEP_LAST_ROUNDS", 2) or 2,
            digest_batch=_env_int(environ, "LLM_TOOL_RESULT_DIGEST_BATCH", 3) or 3,
            max_result_share=_env_float(environ, "LLM_TOOL_RESULT_MAX_SHARE", 0.25),
            high_watermark=_env_float(environ, "LLM_HISTORY_HIGH_WATERMARK", 0.75),
            low_watermark=_env_float(environ, "LLM_HISTORY_LOW_WATERMARK", 0.45),
            max_history_messages=_env_int(environ, "LLM_HISTORY_MAX_MESSAGES", None),
            summarize=environ.get("LLM_HISTORY_SUMMARIZE", "1") not in ("0", "false", "no"),
        )


@dataclass(frozen=True)
class Summary:
    text: str
    until: str  # the last UI message it covers
    fallback: bool = False  # the deterministic digest stood in for the model's summary

    @classmethod
    def stored(cls, value: Mapping[str, Any] | None) -> Summary | None:
        """A summary as ThreadState stores it (or None)."""
        if not value:
            return None
        return cls(str(value["text"]), str(value["until"]), bool(value.get("fallback")))


@dataclass(frozen=True)
class ContextInputs:
    system: str
    ui_messages: Sequence[dict[str, Any]]
    tools: list[dict[str, Any]]
    model: str
    window: Window
    max_output_tokens: int | None = None
    user_context: str = ""  # the part of `system` that is the user's context (for the report)
    summary: Summary | None = None
    persona: tuple[str, str] | None = None  # (name, instructions)
    reminders: Sequence[str] = ()
    citation_reminder: bool = False
    now: str = ""
    correction: float = 1.0
    settings: ContextSettings = field(default_factory=ContextSettings)
    optional_tools: frozenset[str] = frozenset()  # left out first when tools crowd the window
    cache_scope: str = ""  # the thread: blocks are memoized per thread (see context_cache)


@dataclass
class Assembled:
    messages: list[Message]
    tokens: int  # the prompt as we estimate the provider counts it (corrected)
    exact: int  # our exact count, before the correction
    budget: Budget
    report: dict[str, Any]
    tools: list[dict[str, Any]] = field(default_factory=list)  # the tool definitions to send
    # Above the high watermark: works out the compaction plan (see `compaction`).
    plan: Callable[[], list[str] | None] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def compaction(self) -> list[str] | None:
        """UI message ids to summarize, oldest first; None below the high watermark. Worked
        out when first asked for: only a caller about to summarize needs it, and it walks the
        whole thread (the request itself never depends on it)."""
        return None if self.plan is None else self.plan()


def covered_ids(ui_messages: Sequence[dict[str, Any]], until: str) -> frozenset[str]:
    ids = [str(m.get("id") or "") for m in ui_messages]
    return frozenset(ids[: ids.index(until) + 1]) if until in ids else frozenset()


def _id_of(message: Mapping[str, Any]) -> Any:
    return message.get("id")


def compaction_plan(
    ui_messages: Sequence[dict[str, Any]], blocks: list[Block], target: int
) -> list[str] | None:
    """The oldest UI messages to summarize so the history left is at most `target` tokens;
    the cut falls just before a user message, never at or after the latest one."""
    last_user = latest_user_index(blocks)
    if last_user is None:
        return None
    protected = {b.source_id for b in blocks[last_user:]}
    tokens_by_id: dict[str, int] = {}
    get = tokens_by_id.get
    for b in blocks:
        tokens_by_id[b.source_id] = get(b.source_id, 0) + b.tokens
    ids: list[str] = [i if type(i) is str else str(i or "") for i in map(_id_of, ui_messages)]
    end = next((k for k, mid in enumerate(ids) if mid in protected), len(ids))
    # tokens before each message (comprehensions and accumulate: the thread is a long one)
    before = [0, *accumulate(get(mid, 0) for mid in ids[:end])]
    cuts = [k for k in range(1, end) if ui_messages[k].get("role") == "user"]
    if not cuts:
        return None
    # the first cut that leaves at most `target`, else the last one there is
    first = bisect_left([before[k] for k in cuts], sum(tokens_by_id.values()) - target)
    return ids[: cuts[min(first, len(cuts) - 1)]]


def _counted(block: Block, counter: TokenCounter) -> Block:
    """The block with its count for `counter`: set in place the first time (a cached block
    belongs to one thread, and a thread to one model at a time), else a copy remembered in
    its memo (after a change of model)."""
    if block.offset >= 0:  # a pending round is sent as digests or rendered: never as it is
        raise RuntimeError("a pending tool round reached the token count unrendered")
    if block.counted is None:
        (block.tokens, block.results), block.counted = BlockCache.count(block, counter), counter
        return block
    key = ("counted", id(counter))
    other: Block | None = block.memo.get(key)
    if other is None or other.counted is not counter:
        tokens, results = BlockCache.count(block, counter)
        other = block.memo[key] = block.with_tokens(tokens, counter, results)
    return other


class _Origins:
    """The tool parts, in this request, of each pending round sent whole: it is rendered
    from them. Only the newest rounds of new messages need them, so the map is built on the
    first question."""

    def __init__(self, messages: Sequence[dict[str, Any]], found: list[tuple[Block, ...]]) -> None:
        self.messages, self.found = messages, found
        self._at: dict[int, int] | None = None  # id of a pending round -> its message's index
        self._parts: dict[int, list[dict[str, Any]]] = {}  # message index -> its tool parts

    def __call__(self, block: Block) -> list[dict[str, Any]]:
        if self._at is None:
            self._at = {id(b): k for k, bs in enumerate(self.found) for b in bs if b.offset >= 0}
        k = self._at[id(block)]
        parts = self._parts.get(k)
        if parts is None:
            parts = self._parts[k] = tool_parts(self.messages[k])
        return own_parts(block, parts)


def _blocks(
    inputs: ContextInputs, cache: BlockCache, summarized: frozenset[str]
) -> tuple[list[Block], _Origins]:
    """The thread's blocks, memoized per UI message (counted later: digested rounds never
    need their full results tokenized), and where they come from."""
    messages = inputs.ui_messages
    if summarized:
        messages = [m for m in messages if str(m.get("id") or "") not in summarized]
    found = cache.thread(messages, inputs.cache_scope)
    out = list(chain.from_iterable(found))
    return out, _Origins(messages, found)


def _count_all(blocks: list[Block], counter: TokenCounter) -> list[Block]:
    """Each block with its count for `counter` (inlined: this loop runs over the whole
    thread on every request, and a block counted once is not looked at again)."""
    return [b if b.counted is counter else _counted(b, counter) for b in blocks]


def _fit_turn(
    blocks: list[Block], room: int, counter: TokenCounter, cache: BlockCache
) -> list[Block]:
    """Make the turn in progress fit beside the latest user message, if it can: older rounds
    of the turn become digests, the newest round's results are cut to equal shares of the
    room left, and as a last resort every round of the turn is digested. (What still does not
    fit is left to the priority window, newest first.)"""
    start = latest_user_index(blocks)
    if start is None:
        return blocks
    turn = blocks[start:]
    if sum(b.tokens for b in turn) <= room:
        return blocks
    rounds = [i for i, b in enumerate(turn) if b.kind == "round" and not b.digested]
    if not rounds:
        return blocks
    if len(rounds) > 1:  # the older rounds of this turn become digests
        turn = [cache.digested(b) if i in rounds[:-1] else b for i, b in enumerate(turn)]
        turn = _count_all(turn, counter)
    fixed = sum(b.tokens for b in turn if b.kind != "round" or b.digested)
    whole = [b for b in turn if b.kind == "round" and not b.digested]
    results = sum(len(b.messages) - 1 for b in whole)
    share = max(64, (room - fixed) // max(1, results) - 16)
    turn = [
        cache.cut(b, share, counter.text) if b.kind == "round" and not b.digested else b
        for b in turn
    ]
    turn = _count_all(turn, counter)
    if sum(b.tokens for b in turn) > room:  # last resort: every round of the turn as digests
        turn = _count_all([cache.digested(b) if b.kind == "round" else b for b in turn], counter)
    return blocks[:start] + turn


def build_context(
    inputs: ContextInputs, counter: TokenCounter, cache: BlockCache | None = None
) -> Assembled:
    """The exact request for `inputs`. Internally every count is exact (the counter's); the
    budgets are divided by the learned correction instead of scaling each count."""
    with cyclic_gc_paused():  # (a 5,000-message thread's first assembly: a third faster)
        return _build_context(inputs, counter, cache or SHARED)


def _build_context(inputs: ContextInputs, counter: TokenCounter, cache: BlockCache) -> Assembled:
    factor = inputs.correction

    def scaled(n: int) -> int:
        return math.ceil(n * factor)

    def raw(n: int) -> int:
        return math.floor(n / factor)

    settings = inputs.settings
    limits: list[str] = []
    tools = inputs.tools
    tool_tokens = counter.tools(tools)
    room = compute_budget(inputs.window, inputs.max_output_tokens, 0).available
    if scaled(tool_tokens) > TOOLS_SHARE * room and inputs.optional_tools:
        tools = [t for t in tools if t["function"]["name"] not in inputs.optional_tools]
        limits.append(f"tool definitions reduced to {len(tools)} of {len(inputs.tools)}")
        tool_tokens = counter.tools(tools)
    budget = compute_budget(inputs.window, inputs.max_output_tokens, scaled(tool_tokens))

    summarized: frozenset[str] = frozenset()
    if inputs.summary is not None:
        summarized = covered_ids(inputs.ui_messages, inputs.summary.until)
    blocks, origin = _blocks(inputs, cache, summarized)
    keep, batch = settings.keep_last_rounds, settings.digest_batch

    def digest(block: Block) -> Block:  # (remembered: asked again of every old round each turn)
        found = block.digest
        return found if found is not None else cache.digested(block)

    blocks = steps.digest_rounds(blocks, keep, batch, digest)
    blocks = [cache.rendered(b, origin) if b.offset >= 0 else b for b in blocks]  # sent whole
    max_result = max(256, raw(int(budget.available * settings.max_result_share)))
    blocks = steps.cut_oversized(
        blocks, max_result, counter.text, lambda b: cache.cut(b, max_result, counter.text)
    )
    if inputs.persona is not None:
        blocks = steps.apply_persona(blocks, *inputs.persona)
    blocks = _count_all(blocks, counter)

    system, system_cut = steps.truncate_system(
        inputs.system, budget.available, lambda t: scaled(counter.text(t))
    )
    if system_cut:
        limits.append("system prompt truncated to 30% of the budget")
    summary_text = ""
    if inputs.summary is not None and summarized:
        cap = max(64, raw(int(budget.available * SUMMARY_SHARE)))
        summary_text = steps.keep_tail(inputs.summary.text, cap, counter.text)
        system = f"{system}\n\n{steps.summary_section(summary_text)}"
    system_message = {"role": "system", "content": system}
    reminder = steps.reminder_text(list(inputs.reminders), inputs.citation_reminder, inputs.now)
    # the reminder costs at most its own user message (merged into the last one it costs less)
    reminder_cost = counter.message({"role": "user", "content": reminder})
    fixed = counter.message(system_message) + reminder_cost + REPLY_PRIMING
    history_budget = raw(budget.available) - fixed

    plan = None
    history_tokens = sum(b.tokens for b in blocks)
    if settings.summarize and history_tokens > settings.high_watermark * history_budget:
        low, whole = int(settings.low_watermark * history_budget), blocks
        plan = lambda: compaction_plan(inputs.ui_messages, whole, low)  # noqa: E731

    note = counter.message({"role": "user", "content": steps.OMITTED_NOTE})
    blocks = _fit_turn(blocks, history_budget - note, counter, cache)
    kept, dropped = steps.select_window(blocks, history_budget, settings.max_history_messages, note)
    tally = _tally(kept)
    if tally.tokens > history_budget:  # only the mandatory part can overflow
        last_user = latest_user_index(blocks)
        needed = blocks[last_user].tokens if last_user is not None else 0
        raise ContextBudgetError.for_message(scaled(needed + fixed), budget, inputs.model)
    if dropped:
        limits.append(f"{len(dropped)} older blocks left out by the priority window")

    history = flatten(kept)
    merged = steps.merge_adjacent_users(history) if tally.adjacent_users else history
    messages = steps.add_reminders([system_message, *merged], reminder)
    messages = validate(messages)
    if len(merged) == len(history):
        last = messages[-1]
        closing = (
            reminder_cost
            if last["content"] == reminder
            else counter.message(last) - counter.message(history[-1])
        )
        exact = counter.message(system_message) + tally.tokens + closing
        exact += REPLY_PRIMING + tool_tokens
    else:  # rare: user turns were merged, count the whole request
        exact = counter.messages(messages) + tool_tokens
    tokens = scaled(exact)
    over = tokens - budget.tools - budget.available
    if over > 0:  # the steps above guarantee this never happens: a bug if it does
        report_violation(f"the request is {over} tokens over the budget of {budget.available}")
    digested, cut = _changed(dropped)  # (with the kept ones, tallied: every block is one of them)
    digested, cut = digested + tally.digested, cut + tally.cut
    report = _report(
        inputs, budget, counter, tally, dropped, cut, summarized, system, reminder, summary_text
    )
    if digested:
        limits.append(f"{digested} older tool rounds digested")
    if cut:
        limits.append(f"{cut} oversized tool results cut")
    report.update(estimated=tokens, exact=exact, limits=limits)
    return Assembled(messages, tokens, exact, budget, report, tools, plan)


@dataclass(frozen=True)
class _Tally:
    """What the checks and the report need of the chosen blocks, in one pass over them."""

    tokens: int
    results: int  # tokens of the tool results in the kept rounds (digests included)
    kept: int
    digested: int  # kept rounds sent as digests
    cut: int  # kept rounds with a result cut
    adjacent_users: bool  # two user blocks in a row (after a drop): to be merged


def _tally(kept: list[Block]) -> _Tally:
    tokens = results = digested = cut = 0
    adjacent, previous = False, ""
    for block in kept:
        kind = block.kind
        tokens += block.tokens
        if kind == "round":
            results += block.results  # (every kept round was counted by this request's counter)
            digested += block.digested
            cut += block.cut
        elif kind == "user" and previous == "user":
            adjacent = True
        previous = kind
    return _Tally(tokens, results, len(kept), digested, cut, adjacent)


def _changed(blocks: list[Block]) -> tuple[int, int]:
    """(rounds digested, rounds with a result cut) among `blocks`."""
    digested = cut = 0
    for block in blocks:
        digested += block.digested
        cut += block.cut
    return digested, cut


def _report(
    inputs: ContextInputs,
    budget: Budget,
    counter: TokenCounter,
    tally: _Tally,
    dropped: list[Block],
    cut: int,
    summarized: frozenset[str],
    system: str,
    reminder: str,
    summary_text: str,
) -> dict[str, Any]:
    scale = inputs.correction

    def n(x: int) -> int:
        return math.ceil(x * scale)

    summary_tokens = n(counter.text(summary_text)) if summary_text else 0
    user_tokens = n(counter.text(inputs.user_context)) if inputs.user_context else 0
    tool_results = n(tally.results)
    history = n(tally.tokens) - tool_results
    return {
        "model": inputs.model,
        "window": {
            "tokens": inputs.window.tokens,
            "source": inputs.window.source,
            "detail": inputs.window.detail,
        },
        "budget": budget.available,
        "tokens": {
            "system": n(counter.text(system)) - summary_tokens - user_tokens,
            "userContext": user_tokens,
            "summary": summary_tokens,
            "history": history,
            "toolResults": tool_results,
            "tools": budget.tools,
            "reminders": n(counter.text(reminder)),
            "reserve": budget.reserve,
        },
        "counts": {
            "kept": tally.kept,
            "digested": tally.digested,
            "summarized": len(summarized),
            "dropped": len(dropped),
            "cut": cut,
        },
        "summary": None
        if inputs.summary is None or not summarized
        else {"covers": len(summarized), "fallback": inputs.summary.fallback},
        "counter": counter.source,
        "correction": round(scale, 4),
        "reported": None,
        "cachedTokens": None,
    }
