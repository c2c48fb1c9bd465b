"""What a chat turn reads of its thread's files, once, as one value (`TurnFiles`): the messages
with their attached files in place (attachments.with_thread_files), the newest run's picture
for a model that sees, as the window affords (run_images.run_picture), and the thread's
project for the question (project_documents.for_turn)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..base import UIMessage
from ..store import Store
from ..tokens import image_budget, image_cost_for
from .attachments import with_thread_files
from .project_documents import for_turn
from .projects import ProjectContext, Projects
from .run_images import Shown, run_picture
from .run_outputs import OutputSource


@dataclass(frozen=True)
class TurnFiles:
    history: list[UIMessage]  # the messages before the answer, their attached files in place
    shown: Shown | None  # the newest run's picture (a model that sees, when one fits)
    unseen: bool  # an attached image went as a note: the model cannot see it
    project: ProjectContext | None  # the thread's project: its documents for the question


async def turn_files(
    store: Store,
    outputs: OutputSource,
    thread_id: str,
    history: Sequence[UIMessage],
    messages: list[UIMessage],
    *,
    vision: bool,
    model: str,
    window: int,
) -> TurnFiles:
    """`history`: the messages before the answer; `messages`: the request's (with the answer
    it continues); `window`: the tokens the turn plans with. The attached files are marked
    sent: a message holds them now."""
    with_files, unseen = await with_thread_files(store, thread_id, history, vision)
    shown = None
    if vision:  # the newest run's images, as the window affords
        cost, budget = image_cost_for(model), image_budget(window)
        shown = await run_picture(store, outputs, thread_id, messages, cost, budget)
    project = await for_turn(Projects(store), thread_id, messages, window)
    return TurnFiles(with_files, shown, unseen, project)
