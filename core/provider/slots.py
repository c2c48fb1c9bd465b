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

from ..base import PROVIDER, client_session
from .provider_config import ProviderSettings
from .provider_probes import Capabilities, Lookup, thread_slot
from .shared_cache import busy_slots

BUSY_WAIT = 3.0  # seconds a busy slot is waited for before another is used
POLL = 0.25


@dataclass(frozen=True)
class SlotChoice:
    slot: int | None  # id_slot to send (None: the server chooses)
    note: str | None = None  # for the report, when it is not the thread's own slot


async def choose_slot(
    settings: ProviderSettings,
    model: str,
    caps: Capabilities,
    thread_id: str,
    draining: set[int | None] | None = None,
) -> SlotChoice:
    """`draining`: the slots of background requests a chat turn just stopped on a shared
    cache (shared_cache.ChatLease): the turn waits for them before its first request (they
    would fill the cache together), so its own slot is its slot, busy or not."""
    own = thread_slot(caps, thread_id)
    if own is None or draining:
        return SlotChoice(own)
    async with client_session(PROVIDER) as session:
        lookup = Lookup(settings, model, session)
        deadline = time.monotonic() + BUSY_WAIT
        while True:
            busy = busy_slots(await lookup.fetch(f"{lookup.root}/slots"))
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
