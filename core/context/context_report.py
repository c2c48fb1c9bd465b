"""The context report of one assembled request (`report`): what each section of it takes as
the provider counts it, what was kept, digested, summarized, left out, recalled, and the limits
the stages applied. The panel's gauge shows it (its TypeScript type is generated from
core/base/wire_types.py)."""

from __future__ import annotations

from ..base import ContextReport, ReportRecalled
from .context_blocks import latest_user_index
from .context_stages import Assembly, sent_turn


def report(a: Assembly) -> ContextReport:
    """The context report the panel's gauge shows (sizes as the provider counts them)."""
    inputs, counter, tally = a.inputs, a.counter, a.tally
    factors = inputs.correction
    summary_tokens = a.estimated(messages=a.summary_block.tokens) if a.summary_block else 0
    user = inputs.user_context
    user_tokens = a.estimated(system=counter.text(user)) if user else 0
    system = a.estimated(system=counter.text(str(a.system_message.get("content") or "")))
    tool_results = a.estimated(messages=tally.results)
    notes, recalled = (a.estimated(messages=n) for n in _notes_tokens(a))
    documents = a.documents_report["tokens"] if a.documents_report else 0
    estimated = a.estimated(*a.parts)
    return {
        "model": inputs.model,
        "window": {
            "tokens": inputs.window.tokens,
            "source": inputs.window.source,
            "detail": inputs.window.detail,
        },
        "budget": a.budget.available,
        "tokens": {
            "system": system - user_tokens,
            "userContext": user_tokens,
            "summary": summary_tokens,
            "history": a.estimated(messages=tally.tokens) - tool_results - notes - recalled,
            "toolResults": tool_results,
            "tools": a.estimated(tools=a.tool_tokens),
            "reminders": notes,
            "recalled": recalled,
            "documents": documents,
            "reserve": a.budget.reserve,
        },
        "counts": {
            "kept": tally.kept,
            "digested": tally.digested,
            "summarized": len(a.summarized),
            "dropped": len(a.dropped),
            "cut": tally.cut + sum(b.cut for b in a.dropped),
        },
        "summary": None
        if inputs.summary is None or not a.summarized
        else {"covers": len(a.summarized), "fallback": inputs.summary.fallback},
        "counter": counter.source,
        "correction": round(factors.overall(a.parts), 4),
        "factors": {
            "system": round(factors.system, 4),
            "tools": round(factors.tools, 4),
            "messages": round(factors.messages, 4),
        },
        "documents": a.documents_report,
        "recalled": _recalled(a),
        "calibration": inputs.calibration,
        "reported": None,
        "cachedTokens": None,
        "estimated": estimated,
        "exact": a.exact,
        "limits": a.limits,
        "repairs": 0,
    }


def _notes_tokens(a: Assembly) -> tuple[int, int]:
    """What the reminder blocks and the recalled passages of the kept user messages take
    (part of the history)."""
    kept = [b.source_id for b in a.kept if b.kind == "user"]
    turns = [t for t in map(lambda i: sent_turn(a, i), kept) if t is not None]
    text = a.counter.text
    notes = sum(text(t.note) for t in turns)
    return notes, sum(text(t.recall.block) for t in turns if t.recall is not None)


def _recalled(a: Assembly) -> ReportRecalled | None:
    """What was recalled for the latest user message (the turn's), if anything."""
    latest = latest_user_index(a.kept)
    turn = sent_turn(a, a.kept[latest].source_id) if latest is not None else None
    if turn is None or turn.recall is None:
        return None
    return {
        "tokens": a.estimated(messages=a.counter.text(turn.recall.block)),
        "passages": [
            {"messageId": p.message_id, "role": p.role, "at": p.at, "tokens": p.tokens}
            for p in turn.recall.passages
        ],
    }
