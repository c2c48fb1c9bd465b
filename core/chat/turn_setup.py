"""What a turn is set up with before its context is built: the model the provider serves,
what its server can do, the window, the prompt profile that window picks, and from them the
plan of the answer. The chat turn (core/chat/chat_turn.py) and the check of an attached file
against the window (core/chat/attachment_fit.py) both start here, so a file is measured
against the very instructions and tools its message will be sent with."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import UIMessage
from ..context import PromptProfile, profile_for
from ..provider import (
    Capabilities,
    Provider,
    ProviderFacts,
    SlotChoice,
    Window,
    model_key,
    provider_facts,
)
from ..store import Store
from .chat_plan import ChatPlan, SkillUse, build_plan
from .chat_request import ChatRequest
from .chat_sources import Sources

WINDOWS = "windows"  # store namespace: windows a provider's overflow error stated, per model
# A learned window is planned with for this many turns, then the window the provider states is
# tried again (an overflow then learns it again, at the cost of one retried request): a server
# restarted with a larger context, or a window guessed from an error that stated none (75% of
# ours), is not kept for good. It also applies only while the provider states the window it was
# learned against (budget.turn_window): a new /props or /api/ps read that says otherwise
# drops it at once.
RECHECK_TURNS = 10


@dataclass(frozen=True)
class TurnSetup:
    model: str
    model_source: str  # where the model's name came from ("settings", the provider's list)
    facts: ProviderFacts  # what the server can do, whether the model sees images, the window
    profile: PromptProfile  # picked by the window: the same on every turn of a thread

    @property
    def caps(self) -> Capabilities:
        return self.facts.caps

    @property
    def window(self) -> Window:
        return self.facts.window

    @property
    def vision(self) -> bool:
        """The model sees images (provider_probes.sees_images)."""
        return self.facts.vision

    @property
    def key(self) -> str:
        """The provider's model, as the store remembers things of it (`window_key`)."""
        return self.facts.key

    @property
    def tools_usable(self) -> bool:
        """False when the server's chat template cannot render tools (it drops them
        silently): none are offered."""
        return self.caps.tools is not False

    def plan(
        self,
        req: ChatRequest,
        sources: Sources,
        first_turn: bool,
        skill: SkillUse,
        *,
        history: list[UIMessage] | None = None,
        slot: SlotChoice | None = None,
        debug: bool = False,
    ) -> ChatPlan:
        """The plan of `req`'s answer for this model and window (`build_plan`)."""
        return build_plan(
            req, sources, first_turn, skill, self.profile, self.tools_usable,
            history=history, model_source=self.model_source, progress=self.caps.progress,
            slot=slot.slot if slot else None, slot_note=slot.note if slot else None, debug=debug,
        )  # fmt: skip


async def set_up_turn(store: Store, provider: Provider, sources: Sources) -> TurnSetup:
    """The model the provider serves, what its server can do, the window and the profile it
    picks. Raises what the provider raises when it cannot say which model it serves."""
    learned = await store.get_settings(WINDOWS)  # (per model: read before the model is known)
    model, model_source = await provider.choose_model()
    facts = await provider_facts(provider.settings, model, sources.environ, learned)
    profile = profile_for(facts.window.tokens, sources.environ)
    return TurnSetup(model, model_source, facts, profile)


def window_key(provider: Provider, model: str) -> str:
    return model_key(provider.settings, model)


async def used_learned_window(store: Store, provider: Provider, model: str) -> None:
    """A turn was planned with the learned window: counted, and dropped after RECHECK_TURNS."""
    key = window_key(provider, model)
    value = (await store.get_settings(WINDOWS)).get(key)
    if not isinstance(value, dict):
        return
    turns = int(value.get("turns") or 0) + 1
    kept = None if turns >= RECHECK_TURNS else {**value, "turns": turns}
    await store.update_settings(WINDOWS, {key: kept})
