"""`searchConversation`: the model looks back through its whole thread — what the context
engine summarized or dropped included — by words, by time, or around an earlier result, and
gets documents to cite (core/tools/documents.py), numbered thread-wide like any other: "You, Tue 14
May" or "Assistant, …" with the message's words. A search returns each match (the passage that
matched) with the message before and after it, merged where they touch (core/memory/neighbours.py).
A time (`when`) with words is a preference, not a filter: the best matches of that time
first, topped up from the rest of the thread, and the result says when none, or only some,
are from that time (a wrong month hid the answer and returned that month's other messages as
if they were it). A time alone lists what the user said then.

The current turn (the latest user message and the answer being written) is left out: the model
has it, and it would match its own question."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..store import Store
from ..tools import Citations, LookBack, ToolFailure, cite_note, document
from . import recall
from .neighbours import cut, with_neighbours
from .when import WhenError, time_range

SOURCE = "conversation"  # metadata.source of these documents
READ_TOKENS = 700  # a stretch read around a message
SPEAKERS = {"user": "You", "assistant": "Assistant"}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
AROUND_NOTE = (
    "Each match comes with the messages before and after it (matched: false). To read more "
    "around one: searchConversation with around=its messageId."
)


class RecallFailure(ValueError):
    """Arguments the model can fix, or nothing found; the message says what to do."""


def day_text(created_at: float, now: float) -> str:
    """The day, like "Tue 14 May" (the year too when it is not this one)."""
    day, today = datetime.fromtimestamp(created_at), datetime.fromtimestamp(now)
    text = f"{_DAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]}"
    return f"{text} {day.year}" if day.year != today.year else text


def title(role: str, created_at: float, now: float) -> str:
    """The document's title: the speaker and the day, like "You, Tue 14 May"."""
    return f"{SPEAKERS.get(role, role.capitalize())}, {day_text(created_at, now)}"


def _cited(
    take: Callable[[], int],
    message: recall.Hit | recall.Said,
    text: str,
    now: float,
    matched: bool | None = None,
) -> dict[str, Any]:
    when = datetime.fromtimestamp(message.created_at).astimezone()
    metadata: dict[str, Any] = {
        "source": SOURCE,
        "messageId": message.message_id,
        "position": message.position,
        "role": message.role,
        "createdAt": when.isoformat(timespec="minutes"),
    }
    if matched is not None:
        metadata["matched"] = matched
    return dict(document(take(), title(message.role, message.created_at, now), text, metadata))


async def _current_turn(store: Store, thread_id: str) -> list[str]:
    """The ids of the latest user message and what follows it."""
    rows = await store.fetchall(
        "SELECT id FROM messages WHERE thread_id = ? AND position >= (SELECT MAX(position) "
        "FROM messages WHERE thread_id = ? AND role = 'user')",
        (thread_id, thread_id),
    )
    return [r[0] for r in rows]


def look_back(store: Store, thread_id: str) -> LookBack:
    """searchConversation for the server tools (`ToolContext.look_back`) on this thread: a
    search the model can fix fails as its tool's error."""

    async def search(args: dict[str, Any], citations: Citations) -> dict[str, Any]:
        try:
            return await search_conversation(store, thread_id, args, citations)
        except RecallFailure as exc:
            raise ToolFailure(str(exc)) from None

    return search


async def search_conversation(
    store: Store,
    thread_id: str,
    args: dict[str, Any],
    citations: Citations,
    now: float | None = None,
) -> dict[str, Any]:
    """The tool's result for `args` ({query?, when?, around?, limit?})."""
    now = time.time() if now is None else now
    query = str(args.get("query") or "").strip()
    when = str(args.get("when") or "").strip()
    around = str(args.get("around") or "").strip()
    limit = int(args.get("limit") or 5)
    if not 1 <= limit <= 20:
        raise RecallFailure("limit must be from 1 to 20.")
    if around:
        return await _around(store, thread_id, around, citations, now)
    if not query and not when:
        raise RecallFailure(
            "Say what to look for: query (words), when (a time), or around (a messageId)."
        )
    period = _span(when, now) if when else None
    current = await _current_turn(store, thread_id)
    if not query:
        return await _period(store, thread_id, when, current, limit, citations, now)
    hits = await recall.search(
        store, thread_id, query, prefer=period, exclude_ids=current, limit=limit
    )
    if not hits:
        raise RecallFailure(
            f"Nothing said earlier matches '{query}'. Try other or fewer words, about the topic."
        )
    shown = await with_neighbours(store, thread_id, hits, current)
    docs = [_cited(citations.take, s.said, s.said.text, now, s.matched) for s in shown]
    note = AROUND_NOTE
    if period is not None:
        note = _period_note(when, query, hits, period) + note
    return _result(docs, note)


def _period_note(when: str, query: str, hits: list[recall.Hit], period: tuple[float, float]) -> str:
    """What of the matches is from the period asked for (the others top them up)."""
    inside = sum(period[0] <= h.created_at < period[1] for h in hits)
    if inside == len(hits):
        return ""
    if not inside:
        return f"Nothing said in '{when}' matches '{query}'; these matches are from other times. "
    return f"{inside} of the {len(hits)} matches are from '{when}'; the others from other times. "


def _span(when: str, now: float) -> tuple[float, float]:
    try:
        return time_range(when, datetime.fromtimestamp(now))
    except WhenError as exc:
        raise RecallFailure(f"when: {exc}") from None


async def _around(
    store: Store, thread_id: str, around: str, citations: Citations, now: float
) -> dict[str, Any]:
    stretch = await recall.read(store, thread_id, around=around, max_tokens=READ_TOKENS)
    if stretch is None:
        raise RecallFailure(
            f"There is no message '{around}' in this conversation; use a messageId from a "
            "searchConversation result."
        )
    docs = [_cited(citations.take, m, m.text, now) for m in stretch.messages]
    return _result(docs, None)


async def _period(
    store: Store,
    thread_id: str,
    when: str,
    current: list[str],
    limit: int,
    citations: Citations,
    now: float,
) -> dict[str, Any]:
    """Without words: what the user said in that time, the earliest first."""
    after, before = _span(when, now)
    rows = await store.fetchall(
        "SELECT MIN(position), MAX(position) FROM messages WHERE thread_id = ? AND role = "
        "'user' AND created_at >= ? AND created_at < ?",
        (thread_id, after, before),
    )
    first, last = rows[0]
    found = [] if first is None else await recall.said(store, thread_id, first, last, ("user",))
    found = [
        m for m in found
        if m.message_id not in current and after <= m.created_at < before
    ]  # fmt: skip
    if not found:
        raise RecallFailure(
            f"Nothing you said falls in '{when}'. Try another time, or search by words."
        )
    docs = [_cited(citations.take, m, cut(m.text, 600), now) for m in found[:limit]]
    more = len(found) - len(docs)
    note = f"{more} more of your messages then; search with words to find others. " if more else ""
    return _result(docs, note + AROUND_NOTE)


def _result(docs: list[dict[str, Any]], note: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"documents": docs, "cite": cite_note([d["citation_id"] for d in docs])}
    if note:
        out["note"] = note
    return out
