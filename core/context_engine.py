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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import context_steps as steps
from .budget import Budget, ContextBudgetError, Window, compute_budget
from .context_blocks import Block, Message, build_blocks, count_blocks, flatten, latest_user_index
from .context_validate import validate
from .tokens import TokenCounter

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


@dataclass
class Assembled:
    messages: list[Message]
    tokens: int  # the prompt as we estimate the provider counts it (corrected)
    exact: int  # our exact count, before the correction
    budget: Budget
    report: dict[str, Any]
    compaction: list[str] | None = None  # UI message ids to summarize, oldest first
    tools: list[dict[str, Any]] = field(default_factory=list)  # the tool definitions to send


def covered_ids(ui_messages: Sequence[dict[str, Any]], until: str) -> frozenset[str]:
    ids = [str(m.get("id") or "") for m in ui_messages]
    return frozenset(ids[: ids.index(until) + 1]) if until in ids else frozenset()


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
    for b in blocks:
        tokens_by_id[b.source_id] = tokens_by_id.get(b.source_id, 0) + b.tokens
    remaining = sum(tokens_by_id.values())
    chosen: list[str] = []
    best: list[str] | None = None
    for message in ui_messages:
        mid = str(message.get("id") or "")
        if mid in protected:
            break
        if message.get("role") == "user" and chosen:
            best = list(chosen)
            if remaining <= target:
                break
        chosen.append(mid)
        remaining -= tokens_by_id.get(mid, 0)
    return best


def build_context(inputs: ContextInputs, counter: TokenCounter) -> Assembled:
    factor = inputs.correction

    def scaled(n: int) -> int:
        return math.ceil(n * factor)

    settings = inputs.settings
    limits: list[str] = []
    tools = inputs.tools
    room = compute_budget(inputs.window, inputs.max_output_tokens, 0).available
    if scaled(counter.tools(tools)) > TOOLS_SHARE * room and inputs.optional_tools:
        tools = [t for t in tools if t["function"]["name"] not in inputs.optional_tools]
        limits.append(f"tool definitions reduced to {len(tools)} of {len(inputs.tools)}")
    budget = compute_budget(inputs.window, inputs.max_output_tokens, scaled(counter.tools(tools)))

    blocks = build_blocks(inputs.ui_messages)
    summarized: frozenset[str] = frozenset()
    if inputs.summary is not None:
        summarized = covered_ids(inputs.ui_messages, inputs.summary.until)
        blocks = steps.drop_summarized(blocks, summarized)
    blocks = steps.digest_rounds(blocks, settings.keep_last_rounds, settings.digest_batch)
    max_result = max(256, int(budget.available * settings.max_result_share / factor))
    blocks = steps.cut_oversized(blocks, max_result, counter.text)
    if inputs.persona is not None:
        blocks = steps.apply_persona(blocks, *inputs.persona)
    blocks = count_blocks(blocks, lambda m: scaled(counter.message(m)))

    system, system_cut = steps.truncate_system(
        inputs.system, budget.available, lambda t: scaled(counter.text(t))
    )
    if system_cut:
        limits.append("system prompt truncated to 30% of the budget")
    if inputs.summary is not None and summarized:
        cap = max(64, int(budget.available * SUMMARY_SHARE / factor))
        text = steps.keep_tail(inputs.summary.text, cap, counter.text)
        system = f"{system}\n\n{steps.summary_section(text)}"
    system_message = {"role": "system", "content": system}
    reminder = steps.reminder_text(list(inputs.reminders), inputs.citation_reminder, inputs.now)
    fixed = scaled(counter.message(system_message) + counter.text(reminder) + 3)
    history_budget = budget.available - fixed

    compaction = None
    history_tokens = sum(b.tokens for b in blocks)
    if settings.summarize and history_tokens > settings.high_watermark * history_budget:
        compaction = compaction_plan(
            inputs.ui_messages, blocks, int(settings.low_watermark * history_budget)
        )

    note = scaled(counter.message({"role": "user", "content": steps.OMITTED_NOTE}))
    kept, dropped = steps.select_window(blocks, history_budget, settings.max_history_messages, note)
    mandatory = kept[(latest_user_index(kept) or 0) :]
    if sum(b.tokens for b in mandatory) > history_budget:
        latest = mandatory[0] if mandatory and mandatory[0].kind == "user" else None
        needed = latest.tokens if latest is not None else 0
        raise ContextBudgetError.for_message(needed + fixed, budget, inputs.model)
    if dropped:
        limits.append(f"{len(dropped)} older blocks left out by the priority window")

    history = steps.merge_adjacent_users(flatten(kept))
    messages = steps.add_reminders([system_message, *history], reminder)
    messages = validate(messages)
    exact = counter.messages(messages) + counter.tools(tools)
    tokens = scaled(exact)
    report = _report(inputs, budget, counter, kept, dropped, blocks, summarized, system, reminder)
    report.update(estimated=tokens, exact=exact, limits=limits + _step_limits(blocks))
    return Assembled(messages, tokens, exact, budget, report, compaction, tools)


def _step_limits(blocks: list[Block]) -> list[str]:
    out = []
    digested = sum(1 for b in blocks if b.digested)
    if digested:
        out.append(f"{digested} older tool rounds digested")
    cut = sum(1 for b in blocks if b.cut)
    if cut:
        out.append(f"{cut} oversized tool results cut")
    return out


def _report(
    inputs: ContextInputs,
    budget: Budget,
    counter: TokenCounter,
    kept: list[Block],
    dropped: list[Block],
    blocks: list[Block],
    summarized: frozenset[str],
    system: str,
    reminder: str,
) -> dict[str, Any]:
    scale = inputs.correction

    def n(x: int) -> int:
        return math.ceil(x * scale)

    summary_tokens = n(counter.text(inputs.summary.text)) if inputs.summary and summarized else 0
    user_tokens = n(counter.text(inputs.user_context)) if inputs.user_context else 0
    tool_results = sum(n(counter.message(m)) for b in kept if b.is_round for m in b.messages[1:])
    history = sum(b.tokens for b in kept) - tool_results
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
            "kept": len(kept),
            "digested": sum(1 for b in kept if b.digested),
            "summarized": len(summarized),
            "dropped": len(dropped),
            "cut": sum(1 for b in blocks if b.cut),
        },
        "summary": None
        if inputs.summary is None or not summarized
        else {"covers": len(summarized), "fallback": inputs.summary.fallback},
        "counter": counter.source,
        "correction": round(scale, 4),
        "reported": None,
        "cachedTokens": None,
    }
