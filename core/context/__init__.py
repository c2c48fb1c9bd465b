"""The request: the context engine (a declared list of stages), its steps, cached blocks, inputs
and report, the validator, and the system prompt with its profile per window.

May import: base, tokens, knowledge, tools, store, files, provider.
"""

from .context_blocks import build_blocks, flatten
from .context_engine import (
    Assembled,
    ContextInputs,
    ContextSettings,
    Summary,
    build_context,
    covered_ids,
    summary_cap,
)
from .context_steps import digest_rounds
from .prompt_profile import FULL, PromptProfile, profile_for
from .system_prompt import (
    PromptParts,
    UserContext,
    UserContextLimits,
    build_continuation_message,
    build_system_message,
    user_context_block,
)
from .window_tools import not_offered_note

__all__ = [
    "FULL",
    "Assembled",
    "ContextInputs",
    "ContextSettings",
    "PromptParts",
    "PromptProfile",
    "Summary",
    "UserContext",
    "UserContextLimits",
    "build_blocks",
    "build_context",
    "build_continuation_message",
    "build_system_message",
    "covered_ids",
    "digest_rounds",
    "flatten",
    "not_offered_note",
    "profile_for",
    "summary_cap",
    "user_context_block",
]
