"""What each user message carried when it was first sent, beyond what the user typed: the
`<system-reminder>` with the date and the user's reminders, and, for a `/skill` command, the
skill's instructions in place of the typed text. Stored with the thread and resent byte for
byte on every later request, so each request is the previous one plus new messages and a
server's prefix cache reuses all of it (docs/DESIGN.md §4, append-only)."""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass

from .store import Store


@dataclass(frozen=True)
class SentTurn:
    note: str  # appended to the message: the reminder block
    text: str | None = None  # replaces the typed text (a /skill expansion), or None


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
            "SELECT message_id, note, text FROM sent_turns WHERE thread_id = ?", (thread_id,)
        )
        return {str(row[0]): SentTurn(str(row[1]), row[2]) for row in rows}

    async def record(self, thread_id: str, message_id: str, turn: SentTurn) -> None:
        """Kept as first recorded: a later request for the same message never changes it."""
        sql = (
            "INSERT OR IGNORE INTO sent_turns (thread_id, message_id, note, text, created_at) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        params = (thread_id, message_id, turn.note, turn.text, time.time())
        await self.store.write(lambda db: db.execute(sql, params))
