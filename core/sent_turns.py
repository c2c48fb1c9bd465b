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
    message (core/turn_recall.py)."""

    message_id: str
    role: str
    at: float  # when it was said (epoch seconds)
    tokens: int  # its line in the block (our count)


@dataclass(frozen=True)
class Recall:
    block: str  # appended after the reminder block, as rendered when first sent
    passages: tuple[Recalled, ...]

    def as_json(self) -> str:
        passages = [[p.message_id, p.role, p.at, p.tokens] for p in self.passages]
        return json.dumps({"block": self.block, "passages": passages})

    @classmethod
    def from_json(cls, raw: Any) -> Recall | None:
        if not raw:
            return None
        value = json.loads(raw)
        rows = value["passages"]
        passages = tuple(Recalled(str(m), str(r), float(a), int(t)) for m, r, a, t in rows)
        return cls(str(value["block"]), passages)


@dataclass(frozen=True)
class SentTurn:
    note: str  # appended to the message: the reminder block
    text: str | None = None  # replaces the typed text (a /skill expansion), or None
    recall: Recall | None = None  # passages of earlier messages recalled for it

    @property
    def suffix(self) -> str:
        """What follows the message's text: the reminder block, then the recalled passages."""
        return self.note if self.recall is None else f"{self.note}\n\n{self.recall.block}"


def now_text() -> str:
    return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z (%A)")


def turn_note(reminders: list[str], now: str) -> str:
    """The reminder block a user message is sent with: the user's reminders, then the date."""
    lines = [f"- {r.strip()}" for r in reminders if r.strip()]
    lines.append(f"- Current date and time: {now}")
    return "<system-reminder>\n" + "\n".join(lines) + "\n</system-reminder>"


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
