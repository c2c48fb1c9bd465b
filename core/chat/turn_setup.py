"""What a turn is set up with before its context is built: the model the provider serves,
what its server can do, the window, the prompt profile that window picks and the plan for that
profile. The chat turn (core/chat/chat_turn.py) and the check of an attached file against the
window (core/chat/attachment_fit.py) both start here, so a file is measured against the very
instructions and tools its message will be sent with."""

from __future__ import annotations

from dataclasses import dataclass

from ..context.prompt_profile import PromptProfile, profile_for
from ..provider.budget import Window
from ..provider.provider import Provider
from ..provider.provider_probes import Capabilities, provider_capabilities
from ..service import AssistantService
from .chat_context import turn_window
from .chat_plan import SkillUse, Sources, build_plan
from .chat_request import ChatRequest
from .chat_stream import ChatPlan

WINDOWS = "windows"  # store namespace: windows a provider's overflow error stated, per model


@dataclass(frozen=True)
class TurnSetup:
    model: str
    model_source: str  # where the model's name came from ("settings", the provider's list)
    caps: Capabilities
    window: Window
    profile: PromptProfile  # picked by the window: the same on every turn of a thread
    plan: ChatPlan

    @property
    def tools_usable(self) -> bool:
        """False when the server's chat template cannot render tools (it drops them
        silently): none are offered."""
        return self.caps.tools is not False


async def set_up_turn(
    service: AssistantService,
    provider: Provider,
    req: ChatRequest,
    sources: Sources,
    first_turn: bool,
    skill: SkillUse,
) -> TurnSetup:
    """The model, its window and profile, and the plan of `req`'s answer for them. Raises what
    the provider raises when it cannot say which model it serves."""
    model, model_source = await provider.choose_model()
    caps = await provider_capabilities(provider.settings, model)
    window = await turn_window(provider, model, await learned_window(service, provider, model))
    profile = profile_for(window.tokens, sources.environ)
    plan = build_plan(req, sources, first_turn, skill, profile, caps.tools is not False)
    return TurnSetup(model, model_source, caps, window, profile, plan)


def window_key(provider: Provider, model: str) -> str:
    return f"{provider.settings.base_url.rstrip('/')} {model}"


async def learned_window(
    service: AssistantService, provider: Provider, model: str
) -> dict[str, int] | None:
    """The window this provider said a model has when a request overflowed (and the window
    we had planned with then), or None."""
    value = (await service.store_settings(WINDOWS)).get(window_key(provider, model))
    return value if isinstance(value, dict) else None
