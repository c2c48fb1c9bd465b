"""Prompt profiles: how much of the system message and the tool definitions a window can afford.

The system message and the tool definitions are sent first in every request. With the full
guidance and every tool they take about 3,400 tokens: nothing at 128K, 42% of an 8K window and
more than 80% of a 4K one (Ollama's default context on many installs), leaving no room for the
conversation. So the window picks a profile:

| profile | windows      | guidance                               | tools                     |
| ------- | ------------ | -------------------------------------- | ------------------------- |
| small   | up to 6,144  | `system_context/compact/`, skill names | tier small, brief         |
| medium  | up to 12,288 | `system_context/compact/`, skill index | tiers small+medium, brief |
| full    | above        | `system_context/`, skill index         | all, as written           |

Each states a budget for its tool definitions (`tool_budget`: 1,050, 1,600 and 3,200 tokens).
(1,198, 1,959 and 4,848 tokens with an empty user context: `bench/small_windows.py`; the
medium and full ones offer `delegate`, which the small one cannot afford, and findMissing,
installNodePacks and restartComfyUI, about 250 tokens brief. Which tools each window gets, in
the README's table and in what a model calling a tool its window lacks is told:
`window_tools.py`.)
The brief form of a tool is its one-sentence `brief` with the parameters' descriptions and
defaults left out: the arguments the model may send are the same. Results shrink with the
window too: a node search returns 5, 10 or 15 types unless the model asks for a number (15
types are about 1,400 tokens, more than half of what a 4K window has for the conversation). The
profile depends on the window only, so a thread keeps the same system message and tools from
turn to turn (a changing tool list breaks every server's prefix cache). `LLM_PROMPT_PROFILE`
picks one whatever the window: e.g. `small` for a slow local model with a large window, where
each prompt token costs time.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from ..tools import TIERS, Tier
from .system_prompt import UserContextLimits

log = logging.getLogger("comfyui_assistant")

PROFILE_ENV = "LLM_PROMPT_PROFILE"


@dataclass(frozen=True)
class PromptProfile:
    name: Tier
    up_to: int | None  # the largest window it is chosen for (None: any)
    compact: bool  # the compact guidance, brief tool definitions
    skill_names_only: bool  # the skill index as one line of slugs
    user_context_chars: int  # the cap of the user's rules, SOUL.md, goals.md, preferences
    search_results: int  # node search results when the model asks for no number
    # The most tokens its tool definitions may take (the registry's tools it offers, the
    # guidance reader included, counted as the engine counts them: cl100k): a new tool or a
    # longer description that passes it must make room first (tests/test_prompt_profile.py).
    tool_budget: int

    def offers(self, tier: Tier) -> bool:
        """Whether a tool of `tier` is offered in this profile."""
        return TIERS.index(tier) <= TIERS.index(self.name)

    def user_limits(self, asked: int) -> UserContextLimits:
        """The user context's caps: `asked` (LLM_USER_CONTEXT_MAX_CHARS, chat_sources.
        TurnNumbers), at most this profile's share."""
        total = min(asked, self.user_context_chars)
        return UserContextLimits(total=total, soul_and_goals=min(1200, total // 2 or 1))


# Tool budgets (issue 36; the definitions took 949, 1,494 and 2,971 tokens then, after round
# 3 added about a thousand to the full set): a little room for this round's tools, no more.
# Issue 40 added the template tools to every profile (about 110 tokens brief, 200 in full): the
# small budget counts a user who has skills (968 tokens without: getUserSkill is offered there
# only then); 1,017, 1,520 and 3,169 with them.
SMALL = PromptProfile("small", 6144, True, True, 800, 5, tool_budget=1050)
MEDIUM = PromptProfile("medium", 12_288, True, False, 1600, 10, tool_budget=1600)
FULL = PromptProfile("full", None, False, False, 2500, 15, tool_budget=3200)
PROFILES = (SMALL, MEDIUM, FULL)


def profile_for(window: int, environ: Mapping[str, str]) -> PromptProfile:
    """The profile for a window of `window` tokens, or the one `LLM_PROMPT_PROFILE` names."""
    chosen = environ.get(PROFILE_ENV, "").strip().lower()
    if chosen and chosen != "auto":
        for profile in PROFILES:
            if profile.name == chosen:
                return profile
        log.warning(
            "%s=%r is not small, medium, full or auto: chosen by window", PROFILE_ENV, chosen
        )
    return next(p for p in PROFILES if p.up_to is None or window <= p.up_to)
