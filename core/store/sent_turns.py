"""What each user message carried when it was first sent, beyond what the user typed: the
`<system-reminder>` with the date and the user's reminders, and, for a `/skill` command, the
skill's instructions in place of the typed text. Stored with the thread and resent byte for
byte on every later request, so each request is the previous one plus new messages and a
server's prefix cache reuses all of it (docs/DESIGN.md §4, append-only)."""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass
from typing import Any

from .store import Store


@dataclass(frozen=True)
class Recalled:
    """A passage of an earlier message, no longer in the request, recalled for a user
    message (core/memory/turn_recall.py)."""

    message_id: str
    role: str
    at: float  # when it was said (epoch seconds)
    tokens: int  # its line in the block (our count)


@dataclass(frozen=True)
class Recall:
    block: str  # appended after the reminder block, as rendered when first sent
    passages: tuple[Recalled, ...]
    # the summary in use when it was sent (its `until`): the block is resent until another
    # one is, which changes the request from the history's start anyway
    since: str | None = None

    def as_json(self) -> str:
        passages = [[p.message_id, p.role, p.at, p.tokens] for p in self.passages]
        return json.dumps({"block": self.block, "passages": passages, "since": self.since})

    @classmethod
    def from_json(cls, raw: Any) -> Recall | None:
        if not raw:
            return None
        value = json.loads(raw)
        rows = value["passages"]
        passages = tuple(Recalled(str(m), str(r), float(a), int(t)) for m, r, a, t in rows)
        since = value.get("since")
        return cls(str(value["block"]), passages, None if since is None else str(since))


@dataclass(frozen=True)
class SentTurn:
    note: str  # appended to the message: the reminder block
    text: str | None = None  # replaces the typed text (a /skill expansion), or None
    recall: Recall | None = None  # passages of earlier messages recalled for it

    def under(self, summary_until: str | None) -> SentTurn:
        """As resent with the summary in use (`summary_until`): recalled passages only until
        another summary is taken (the request changes from the history's start then; what
        they brought back would otherwise ride along in every request, a tenth of the budget
        a message)."""
        if self.recall is None or self.recall.since == summary_until:
            return self
        return SentTurn(self.note, self.text)

    @property
    def suffix(self) -> str:
        """What follows the message's text: the reminder block, then the recalled passages."""
        blocks = [self.note, self.recall.block if self.recall else ""]
        return "\n\n".join(b for b in blocks if b)


NOW_FORMAT = "%Y-%m-%d %H:%M %Z (%A)"
# The reminder block is sent again when the time it gives is this old (or of another day),
# when the user's reminders changed, and, when there are any, after this many user messages
# without one (so they stay near the end of a long thread); between, a message goes without
# (~30 tokens a message, resent with every later request).
REMINDER_EVERY_TURNS = 8
REMINDER_EVERY_SECONDS = 3600.0


def now_text(now: datetime.datetime | None = None) -> str:
    return (now or datetime.datetime.now().astimezone()).strftime(NOW_FORMAT)


def turn_note(reminders: list[str], now: str) -> str:
    """The reminder block a user message is sent with: the user's reminders, then the date."""
    lines = [f"- {r.strip()}" for r in reminders if r.strip()]
    lines.append(f"- Current date and time: {now}")
    return "<system-reminder>\n" + "\n".join(lines) + "\n</system-reminder>"


def due_note(reminders: list[str], now: datetime.datetime, earlier: list[SentTurn | None]) -> str:
    """The reminder block for a new user message, or "" when the last one sent (in `earlier`,
    the thread's user messages before it, oldest first; None: sent before turns were kept)
    still holds: the same reminders, the time under REMINDER_EVERY_SECONDS old and the same
    day, and with reminders of the user's, fewer than REMINDER_EVERY_TURNS messages ago."""
    note = turn_note(reminders, now_text(now))
    since = next((k for k, t in enumerate(reversed(earlier)) if t is not None and t.note), None)
    if since is None or (any(r.strip() for r in reminders) and since + 1 >= REMINDER_EVERY_TURNS):
        return note
    last = earlier[len(earlier) - 1 - since]
    assert last is not None
    if last.note.splitlines()[:-2] != note.splitlines()[:-2]:  # the user's reminders changed
        return note
    when = _note_time(last.note)
    if when is None or when.date() != now.date():
        return note
    age = (now.replace(tzinfo=None) - when).total_seconds()
    return note if age >= REMINDER_EVERY_SECONDS else ""


def _note_time(note: str) -> datetime.datetime | None:
    """The (local) time a reminder block gives, to the minute."""
    for line in note.splitlines():
        if line.startswith("- Current date and time: "):
            stamp = line.removeprefix("- Current date and time: ")[:16]
            try:
                return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M")
            except ValueError:
                return None
    return None


class SentTurns:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def of_thread(self, thread_id: str) -> dict[str, SentTurn]:
        rows = await self.store.fetchall(
            "SELECT message_id, note, text, recall FROM sent_turns WHERE thread_id = ?",
            (thread_id,),
        )
        return {
            str(row[0]): SentTurn(str(row[1]), row[2], Recall.from_json(row[3])) for row in rows
        }

    async def record(self, thread_id: str, message_id: str, turn: SentTurn) -> None:
        """Kept as first recorded: a later request for the same message never changes it."""
        sql = (
            "INSERT OR IGNORE INTO sent_turns "
            "(thread_id, message_id, note, text, recall, created_at) VALUES (?, ?, ?, ?, ?, ?)"
        )
        recall = None if turn.recall is None else turn.recall.as_json()
        params = (thread_id, message_id, turn.note, turn.text, recall, time.time())
        await self.store.write(lambda db: db.execute(sql, params))
