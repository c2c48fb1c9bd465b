"""The context engine: from the thread and its sources to the exact request the model gets.

`STAGES` is the whole flow, in order; each stage is a small function in context_stages over
one `Assembly` (the pure block functions they use are in context_steps, the memory of what
was derived before in context_cache). `build_context` runs them and returns the request, its
exact count, the budget, the report and, above the high watermark, the compaction plan.

A summary made ahead (`ContextInputs.next_summary`) is used only when the thread does not fit
without it: a thread that fits is sent whole, and a thread that outgrows its budget changes
its request's prefix once, where the prepared summary begins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..base import cyclic_gc_paused
from ..provider import ContextBudgetError
from ..tokens import TokenCounter
from . import context_stages as stage
from .context_cache import SHARED, BlockCache
from .context_inputs import Assembled, ContextInputs, ContextSettings, Summary, covered_ids
from .context_report import report
from .context_stages import SUMMARY_SHARE, Assembly, summary_cap

__all__ = [
    "STAGES",
    "SUMMARY_SHARE",
    "Assembled",
    "ContextInputs",
    "ContextSettings",
    "Summary",
    "build_context",
    "covered_ids",
    "summary_cap",
]

STAGES: tuple[Callable[[Assembly], None], ...] = (
    stage.fit_tools,  # the budget; optional tools left out when the definitions crowd it
    stage.thread_blocks,  # blocks from the UI messages; none under the running summary
    stage.as_sent,  # user messages as first sent (their reminders); unanswered ones marked
    stage.digest_old_rounds,  # older tool rounds as one line per call, in batches
    stage.cut_oversized_results,  # one huge result cut structure-aware
    stage.count_blocks,  # exact counts
    stage.system_message,  # the system prompt (cut only past half the budget), the summary
    stage.project_documents,  # the project's documents: whole, or passages retrieved
    stage.plan_compaction,  # above the high watermark: what to summarize
    stage.fit_turn,  # the turn in progress made to fit, if it can
    stage.priority_window,  # newest first by priority, sent in order; over budget: an error
    stage.final_messages,  # validation, the exact count
)


def build_context(
    inputs: ContextInputs, counter: TokenCounter, cache: BlockCache | None = None
) -> Assembled:
    """The exact request for `inputs`. Raises ContextBudgetError when even the latest user
    message cannot fit."""
    ahead = inputs.next_summary
    try:
        a = _assembly(inputs, counter, cache)
    except ContextBudgetError:
        if ahead is None:
            raise
        a = None
    if a is not None and (ahead is None or not a.dropped):
        return _assembled(a)
    taken = _assembly(replace(inputs, summary=ahead, next_summary=None), counter, cache)
    return replace(_assembled(taken), took_next=True)


def _assembly(inputs: ContextInputs, counter: TokenCounter, cache: BlockCache | None) -> Assembly:
    assembly = Assembly(inputs, counter, cache or SHARED)
    with cyclic_gc_paused():  # (a 5,000-message thread's first assembly: a third faster)
        for run in STAGES:
            run(assembly)
    return assembly


def _assembled(a: Assembly) -> Assembled:
    tokens = a.sized(*a.parts)
    present = frozenset(b.source_id for b in a.kept)
    return Assembled(
        a.messages, tokens, a.exact, a.budget, report(a), a.tools, a.plan, a.parts,
        present=present, allowance=a.allowance,
    )  # fmt: skip
