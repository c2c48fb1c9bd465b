"""llama-server's slots share one KV cache: its default (`-np` unset) starts 4 slots with
`kv_unified`, where every slot may hold `n_ctx` tokens and all of them together `n_ctx`. When
the requests decoding at once need more than that, the server fails every one of them with
"Context size has been exceeded." (HTTP 500, or an error event in a stream that started): a
failure of that moment, not of the window (a prompt too long for its slot is refused before
decoding: HTTP 400 `exceed_context_size_error`, with the slot's `n_ctx`). Its `/props` states
`total_slots` and each slot's `n_ctx`, not whether the cache is shared (llama.cpp's
server-context.cpp, as ../shared/tools/local-llm builds it), so several slots are planned as one
shared cache, the default.

Per server, chat requests come first and background work (a summary made ahead) never decodes
beside one:

- a background request waits while a chat turn is in flight on the server;
- a chat turn that starts stops the background requests in flight (a summary made ahead is
  made again after the answer) and, before its first request, waits (at most `SETTLE` seconds,
  a status line in the answer meanwhile) until the server reports their slots idle: a server
  finishes the batch it was decoding for a client that went away;
- chat turns beside each other are the user's (two tabs): when they fill the cache, the request
  is sent again with the same window once the others are done (`settle`; core/chat/chat_stream).

Waiting, rather than sharing n_ctx between both: two requests decoding at once share one CPU's
or GPU's compute, so the answer comes no sooner beside a summary; a request's size is our
estimate (a 3% margin), so a budget split to the token would still fail at times; and a summary
made ahead is never urgent. (bench/local_llm.py prints, per server configuration, the turns
that failed, were retried or planned with another window.)"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from ..base import PROVIDER, client_session
from .provider_config import ProviderSettings
from .provider_probes import Capabilities, Lookup, provider_capabilities

SETTLE = 60.0  # seconds a chat request waits for the server to finish what it stopped
STATUS_EVERY = 5.0  # seconds between the status lines of that wait
POLL = 0.25


@dataclass
class _Server:
    chats: int = 0  # chat turns in flight
    background: dict[asyncio.Task[object], int | None] = field(default_factory=dict)
    draining: set[int | None] = field(default_factory=set)  # slots of stopped requests
    fewer: asyncio.Event = field(default_factory=asyncio.Event)  # a chat turn ended

    def chat_ended(self) -> None:
        self.chats -= 1
        self.fewer.set()

    async def until_chats(self, most: int, seconds: float | None = None) -> bool:
        """Wait until at most `most` chat turns are in flight (at most `seconds`)."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while self.chats > most:
            self.fewer.clear()
            left = None if deadline is None else deadline - time.monotonic()
            try:
                await asyncio.wait_for(self.fewer.wait(), left)
            except asyncio.TimeoutError:
                return self.chats <= most
        return True


# per event loop (an asyncio.Event belongs to one), per server base URL
_servers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Server]] = (
    weakref.WeakKeyDictionary()
)


def _server(settings: ProviderSettings) -> _Server:
    mine = _servers.setdefault(asyncio.get_running_loop(), {})
    return mine.setdefault(settings.base_url.rstrip("/"), _Server())


async def is_shared(settings: ProviderSettings, model: str) -> bool:
    return (await provider_capabilities(settings, model)).shared


class ChatLease:
    """A chat turn in flight on a server with a shared cache, from `start` to `end`."""

    def __init__(self, server: _Server | None) -> None:
        self._server = server

    @classmethod
    async def start(cls, settings: ProviderSettings, caps: Capabilities) -> ChatLease:
        """Count the turn in and stop the background requests in flight on its server (`caps`:
        what it can do, as the turn read it)."""
        if not caps.shared:
            return cls(None)
        server = _server(settings)
        server.chats += 1
        stopped = list(server.background)
        for task in stopped:
            task.cancel()
        await asyncio.gather(*stopped, return_exceptions=True)
        return cls(server)

    def end(self) -> None:
        if self._server is not None:
            self._server.chat_ended()
            self._server = None

    def draining(self) -> set[int | None]:
        """The slots of the background requests stopped for chat turns, which the server may
        still be decoding (`None`: a slot the server chose)."""
        return set(self._server.draining) if self._server is not None else set()

    async def settling(self, settings: ProviderSettings, model: str) -> AsyncIterator[str]:
        """Before the turn's first request: while the server still decodes what was stopped
        for it, a status line every STATUS_EVERY seconds (at most SETTLE), then "" (done)."""
        waited = self.draining()
        if not waited:
            return
        started = time.monotonic()
        text = "Waiting for the model to finish the summary it was writing…"
        yield text
        while not await settle(settings, model, waited, STATUS_EVERY):
            took = time.monotonic() - started
            if took >= SETTLE:
                break
            yield f"{text} ({took:.0f} s)"
        if self._server is not None:
            self._server.draining.clear()
        yield ""


@contextlib.asynccontextmanager
async def background(
    settings: ProviderSettings, model: str, slot: int | None
) -> AsyncIterator[None]:
    """Background work on the server (a summary made ahead in `slot`): it starts once no chat
    turn is in flight there, and a chat turn that starts meanwhile cancels it."""
    if not await is_shared(settings, model):
        yield
        return
    server = _server(settings)
    await server.until_chats(0)
    task = asyncio.current_task()
    assert task is not None
    server.background[task] = slot  # (no await since the check: no chat came in between)
    try:
        yield
    except asyncio.CancelledError:
        server.draining.add(slot)
        raise
    finally:
        server.background.pop(task, None)


def busy_slots(slots: object) -> set[int] | None:
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


async def settle(
    settings: ProviderSettings, model: str, waited: set[int | None], seconds: float = SETTLE
) -> bool:
    """Wait until the server reports none of the `waited` slots busy (`None` in it: no slot
    at all), at most `seconds`; whether it did. A server that does not say counts as idle."""
    deadline = time.monotonic() + seconds
    async with client_session(PROVIDER) as session:
        lookup = Lookup(settings, model, session)
        while True:
            busy = busy_slots(await lookup.fetch(f"{lookup.root}/slots"))
            if busy is None or not (busy & waited if None not in waited else busy):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL)


async def others_done(settings: ProviderSettings, model: str) -> bool:
    """After the shared cache filled: wait until this server has no other chat turn of ours in
    flight and reports no slot busy (at most SETTLE seconds); whether it did."""
    started = time.monotonic()
    await _server(settings).until_chats(1, SETTLE)
    return await settle(settings, model, {None}, max(0.0, SETTLE - (time.monotonic() - started)))
