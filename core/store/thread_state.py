"""Per-thread state the context engine keeps beside the messages: the running summary in use,
the one prepared ahead (under "next"), and the last context report."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from typing import Any

from ..base import ContextReport, compact_json
from .store import Store

KNOWN_THREADS = 64  # threads whose state (and fingerprints: threads.py) are kept in memory


class ThreadState:
    """Per-thread state the context engine keeps: the running summary and the last report."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def _get(self, thread_id: str, column: str) -> Any:
        row = await self.store.fetchone(
            f"SELECT {column} FROM thread_state WHERE thread_id = ?", (thread_id,)
        )
        return json.loads(row[0]) if row is not None and row[0] else None

    async def _set(self, thread_id: str, **values: Any) -> None:
        columns = list(values)
        sql = (
            f"INSERT INTO thread_state (thread_id, {', '.join(columns)}, updated_at) "
            f"VALUES (?, {', '.join('?' * len(columns))}, ?) ON CONFLICT (thread_id) DO "
            f"UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in columns)}, "
            "updated_at = excluded.updated_at"
        )
        params = (thread_id, *values.values(), time.time())
        await self.store.write(lambda db: db.execute(sql, params))

    @property
    def _summaries(self) -> OrderedDict[str, dict[str, Any] | None]:
        """Summaries are read on every request and written rarely: kept with the store, for
        the KNOWN_THREADS threads used last (another one is read again)."""
        cache: OrderedDict[str, dict[str, Any] | None] = self.store.cache.setdefault(
            "summaries", OrderedDict()
        )
        return cache

    def _keep(self, thread_id: str, summary: dict[str, Any] | None) -> None:
        summaries = self._summaries
        summaries[thread_id] = summary
        summaries.move_to_end(thread_id)
        while len(summaries) > KNOWN_THREADS:  # the least recently used goes first
            summaries.popitem(last=False)

    def created(self, thread_id: str) -> None:
        """A thread just created has no state yet: its summary need not be read."""
        if thread_id not in self._summaries:
            self._keep(thread_id, None)

    async def summary(self, thread_id: str) -> dict[str, Any] | None:
        summaries = self._summaries
        if thread_id in summaries:
            summaries.move_to_end(thread_id)
            return summaries[thread_id]
        value = await self._get(thread_id, "summary")
        if thread_id in summaries:  # written meanwhile: that one is newer
            return summaries[thread_id]
        found = value if isinstance(value, dict) else None
        self._keep(thread_id, found)
        return found

    async def set_summary(self, thread_id: str, text: str, until: str, fallback: bool) -> None:
        """The summary in use (the one made ahead, if any, is dropped)."""
        await self._in_use(thread_id, text, until, fallback, None)

    async def _in_use(
        self, thread_id: str, text: str, until: str, fallback: bool, ahead: dict[str, Any] | None
    ) -> None:
        summary = {"text": text, "until": until, "fallback": fallback, "at": time.time()}
        if ahead is not None:
            summary["next"] = ahead
        await self._set(thread_id, summary=compact_json(summary), summary_until=until)
        self._keep(thread_id, summary)

    async def set_next_summary(self, thread_id: str, text: str, until: str, fallback: bool) -> None:
        """A summary made ahead, kept beside the one in use (under "next") until a request
        no longer fits without it (`use_next_summary`)."""
        summary = dict(await self.summary(thread_id) or {})
        summary["next"] = {"text": text, "until": until, "fallback": fallback, "at": time.time()}
        await self._set(thread_id, summary=compact_json(summary))
        self._keep(thread_id, summary)

    async def use_next_summary(self, thread_id: str, text: str, until: str, fallback: bool) -> None:
        """The summary made ahead that a request was sent with is the one in use now; a newer
        one made ahead meanwhile (another stretch) stays beside it."""
        ahead = (await self.summary(thread_id) or {}).get("next")
        newer = ahead if isinstance(ahead, dict) and ahead.get("until") != until else None
        await self._in_use(thread_id, text, until, fallback, newer)

    async def report(self, thread_id: str) -> dict[str, Any] | None:
        value = await self._get(thread_id, "context_report")
        return value if isinstance(value, dict) else None

    async def set_report(self, thread_id: str, report: ContextReport) -> None:
        await self._set(thread_id, context_report=compact_json(report))
