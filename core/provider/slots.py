"""Which llama.cpp slot a thread's request goes to. Its own slot (`thread_slot`, where the cache
holds its prefix) unless that slot is busy past BUSY_WAIT seconds: llama-server queues a request
for a busy slot until the slot is free, and behind a reverse proxy that does not pass on a
client's disconnect, an abandoned summary held a thread's slot for 720 s while its next turns
waited and failed after 300 s. Then the request goes to a free slot (its cache is cold: the
prompt is read again, once), or to whichever the server picks when none is free, and the turn's
report says so. Asked of the server's `/slots` (none: its own slot, as before)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..base.egress import PROVIDER, client_session
from .provider_config import ProviderSettings
from .provider_probes import Capabilities, Lookup, thread_slot

BUSY_WAIT = 3.0  # seconds a busy slot is waited for before another is used
POLL = 0.25


@dataclass(frozen=True)
class SlotChoice:
    slot: int | None  # id_slot to send (None: the server chooses)
    note: str | None = None  # for the report, when it is not the thread's own slot


async def choose_slot(
    settings: ProviderSettings, model: str, caps: Capabilities, thread_id: str
) -> SlotChoice:
    own = thread_slot(caps, thread_id)
    if own is None:
        return SlotChoice(None)
    async with client_session(PROVIDER) as session:
        lookup = Lookup(settings, model, session)
        deadline = time.monotonic() + BUSY_WAIT
        while True:
            busy = _busy(await lookup.fetch(f"{lookup.root}/slots"))
            if busy is None or own not in busy:
                return SlotChoice(own)
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(POLL)
    free = sorted(set(range(caps.slots)) - busy)
    other = free[0] if free else None
    where = (
        f"slot {other} (its cache is cold: the prompt is read again)"
        if free
        else ("the slot the server picks (every slot is busy)")
    )
    return SlotChoice(
        other, f"slot {own}, this thread's, busy for {BUSY_WAIT:g} s: sent to {where}"
    )


def _busy(slots: Any) -> set[int] | None:
    """The ids of the slots processing a task, from llama-server's /slots (`is_processing`, or
    `state` 1 in older releases); None when it did not say."""
    if not isinstance(slots, list):
        return None
    busy = set()
    for slot in slots:
        if not isinstance(slot, dict) or not isinstance(slot.get("id"), int):
            return None
        if slot.get("is_processing") is True or slot.get("state") == 1:
            busy.add(slot["id"])
    return busy
