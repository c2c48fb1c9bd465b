"""Whether an attached file can fit the model's window, decided when it is attached.

The room is what one message can take in this thread's next request: the window, less the
answer's reserve, the margin, the tools, the system prompt and the user's context, as the
chat plans them for this window (`build_plan` with the same profile). The file is counted as
it will be sent: its `model_parts` converted like any message (an image by its size).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ..base import Coded, StatusError, coded, to_openai_messages
from ..context import user_context_block
from ..files import Attachment, Attachments, FileReading, model_parts, new_id
from ..provider import compute_budget
from ..tokens import counter_for
from .chat_plan import SkillUse
from .chat_request import ChatRequest
from .chat_sources import gather_sources, user_snapshot
from .turn_parts import TurnParts
from .turn_setup import set_up_turn

log = logging.getLogger("comfyui_assistant")


@dataclass(frozen=True)
class Room:
    model: str
    window: int
    room: int  # tokens one user message can take
    vision: bool


async def message_room(parts: TurnParts, thread_id: str) -> Room | None:
    """The room for one message with the current provider and model; None when the provider
    cannot say which model it serves (the chat will say why)."""
    provider = parts.provider
    sources = await gather_sources(parts, await user_snapshot(parts))
    probe = ChatRequest(thread_id, [{"id": "probe", "role": "user", "parts": []}])
    try:
        setup = await set_up_turn(parts.store, provider, sources)
    except Exception as exc:  # (unreachable, no model: the chat reports it)
        log.info("attachment: the model is unknown, the file is not checked against it: %s", exc)
        return None
    plan = setup.plan(probe, sources, True, SkillUse())
    counter, window = counter_for(setup.model), setup.window
    budget = compute_budget(window, provider.settings.max_output_tokens, counter.tools(plan.tools))
    user = user_context_block(
        sources.user, setup.profile.user_limits(sources.limits.user_context_chars)
    )
    prompt = counter.messages([{"role": "system", "content": plan.system + user}])
    room = budget.available - prompt
    return Room(setup.model, window.tokens, room, setup.vision)


def tokens_of(
    aid: str, name: str, reading: FileReading, data: bytes, vision: bool, model: str
) -> int:
    """The tokens the file adds to its message, counted as it is sent."""
    parts = model_parts(aid, name, reading, data, vision)
    counter = counter_for(model)
    empty = counter.messages([{"role": "user", "content": ""}])
    sent = to_openai_messages([{"id": aid, "role": "user", "parts": parts}])
    return max(counter.messages(sent) - empty, 1)


def too_large(name: str, tokens: int, room: Room) -> Coded:
    """Why a file of `tokens` cannot be attached (both numbers, and what to do)."""
    return coded(
        "attachment.too_large_for_window",
        name=name,
        tokens=tokens,
        model=room.model,
        window=room.window,
        room=max(room.room, 0),
    )


async def attach_file(
    parts: TurnParts, thread_id: str, name: str, data: bytes, reading: FileReading
) -> tuple[Attachment, Room | None]:
    """Store a file attached to the thread's next message, once it is known to fit the room
    that message has (`message_room`; unknown when the model is: then it is not checked).
    Refused with a 413 that gives both numbers when it does not fit."""
    room = await message_room(parts, thread_id)
    aid = new_id()
    vision = room.vision if room is not None else True
    model = room.model if room is not None else ""
    tokens = await asyncio.to_thread(tokens_of, aid, name, reading, data, vision, model)
    if room is not None and tokens > room.room:
        raise StatusError(413, too_large(name, tokens, room))
    stored = await Attachments(parts.store).add(aid, thread_id, name, reading, data, tokens)
    return stored, room
