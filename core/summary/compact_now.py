"""`/compact` in the panel: summarize everything before the thread's latest exchange now."""

from __future__ import annotations

from typing import Any

from ..base import StatusError
from ..context import Summary, covered_ids
from ..provider import Provider, ProviderError, describe_error
from ..store import Threads, ThreadState
from .summarizer import summarize


class ProviderUnreachable(StatusError):
    """The model could not be chosen (502); the message says why, in the user's words."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(502, error.coded or error.message)


async def compact_now(threads: Threads, provider: Provider, thread_id: str) -> dict[str, Any]:
    """`{"summary": the stored summary, "compacted": messages newly summarized}`."""
    messages = [m.as_ui() for m in await threads.messages(thread_id)]
    state = ThreadState(threads.store)
    stored = await state.summary(thread_id)
    previous = Summary.stored(stored)
    covered = covered_ids(messages, previous.until) if previous else frozenset()
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=0)
    ids = [str(m["id"]) for m in messages[:last_user] if m["id"] not in covered]
    if not ids:
        return {"summary": stored, "compacted": 0}
    try:
        model, _ = await provider.choose_model()
    except Exception as exc:
        error = describe_error(exc, provider.settings, provider.settings.model)
        raise ProviderUnreachable(error) from None
    new = await summarize(provider, model, previous, messages, ids)
    await state.set_summary(thread_id, new.text, new.until, new.fallback)
    return {"summary": await state.summary(thread_id), "compacted": len(ids)}
