"""A chat request that carries only what is new: the server keeps the thread.

The panel sends the messages it has that the server does not have as they are (the new user
message, the last answer with the tool results, approvals and notes the panel added to it), and
`parentId`: the id of the stored message they follow (`parentIndex`, where the panel has it in
its list, optional). The thread is rebuilt here from the store: the stored messages up to and
including the parent, then the request's. The rebuilt request is then what a request carrying
the whole thread would have been, and goes the same way (core/chat/chat_turn.py), so the request
size does not grow with the thread and the wire's limits (core/chat/chat_request.py) bound what
is new, not the thread.

A request without `parentId` carries the whole thread, as before (older panels, other
clients). A parent the thread does not have where the panel says, or stored messages after it
that the request neither carries nor replaces (`messageId`: an answer asked again, a resubmit),
mean the panel's thread is not the stored one: 409 `StaleThread`, and the panel sends the whole
thread instead (ui/src/runtime/sentMessages.ts); never a history the panel does not show. Stored
messages after the parent are another tab's turn (or an answer the panel never received): then
the 409 is coded `chat.thread_moved_on` and the panel does not send its own thread over them
(that would store two messages at one place and answer on a history without that turn): it
loads the thread and gives the user the message back to send again. An answer continued with
the panel's tool results (`messageId`) after another tab's turn would have cut that turn: its
results are kept in it where it stands, the answer is not continued, and the 409 is coded
`chat.thread_moved_on_kept`.

"Answer again" (trigger `regenerate-message`) names no message when assistant-ui sends it: the
stored answer after the request's messages is the one asked again, and goes, from either kind of
request (it used to stay beside the new answer, and both came back after a reload).
"""

from __future__ import annotations

import dataclasses

from ..base import RequestError, UIMessage, coded
from ..store import Threads
from .chat_request import ChatRequest


class StaleThread(RequestError):
    """The stored thread is not the one the request follows (409): send the whole thread."""

    status = 409


def _stale(req: ChatRequest, why: str) -> StaleThread:
    return StaleThread(
        f"thread {req.thread_id!r} {why}: the request follows message {req.parent!r}; "
        "send the whole thread (leave out 'parentId') or reload the thread"
    )


async def with_stored_history(threads: Threads, req: ChatRequest) -> ChatRequest:
    """`req` (which follows `req.parent`) with the stored messages up to its parent before its
    own: the request the whole thread would have made. Raises StaleThread."""
    assert req.parent is not None
    stored = await threads.messages(req.thread_id)
    ids = [m.id for m in stored]
    at = {mid: i for i, mid in enumerate(ids)}
    parent = at.get(req.parent)
    if parent is None:
        raise _stale(req, "has no such message")
    if req.parent_index is not None and req.parent_index != parent:
        raise _stale(req, f"holds that message at {parent}, not at {req.parent_index}")
    sent = [m["id"] for m in req.messages]
    if any(at.get(mid, parent + 1) <= parent for mid in sent):
        raise _stale(req, "already holds a message the request carries before its parent")
    carried = set(sent)
    extra = [i for i in range(parent + 1, len(ids)) if ids[i] not in carried]
    replaces = req.message_id
    if replaces is None and extra and req.trigger == "regenerate-message":
        replaces = ids[extra[0]]
    # what an answer asked again (or continued) replaces goes: from that message on
    cut = at.get(replaces, len(ids)) if replaces is not None else len(ids)
    if extra and extra[0] < cut:  # (another tab's turn, or an answer this panel never got)
        raise StaleThread(coded("chat.thread_moved_on"))
    history = [m.as_ui() for m in stored[: parent + 1]]
    if extra and replaces in carried and req.trigger != "regenerate-message":
        # an answer continued (the panel's tool results) after another tab's turn: the results
        # are kept in that answer where it stands, and the other tab's turn stays
        later = [m.as_ui() for m in stored[cut + 1 :]]
        await _keep_results(threads, req, [*history, *req.messages, *later])
        raise StaleThread(coded("chat.thread_moved_on_kept"))
    messages = [*history, *req.messages]
    return dataclasses.replace(req, messages=messages, parent=None, message_id=replaces)


async def _keep_results(threads: Threads, req: ChatRequest, thread: list[UIMessage]) -> None:
    """The stored thread with the continued answer as the panel now has it (its tool results):
    nothing else changes."""
    await threads.sync(req.thread_id, thread)


async def with_answer_replaced(threads: Threads, req: ChatRequest) -> ChatRequest:
    """A whole-thread "Answer again" that names no message: it replaces what the thread stores
    after the request's messages (when the thread stores those first)."""
    if req.trigger != "regenerate-message" or req.message_id is not None:
        return req
    ids = [m.id for m in await threads.messages(req.thread_id)]
    sent = [m["id"] for m in req.messages]
    if len(ids) <= len(sent) or ids[: len(sent)] != sent:
        return req
    return dataclasses.replace(req, message_id=ids[len(sent)])
