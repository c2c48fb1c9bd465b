"""Builds the system message from its sections (the design card's name for it); it lives in
`core/context/system_prompt.py`, so the core uses it without importing from above itself."""

from .core.context import (
    PromptParts,
    UserContext,
    UserContextLimits,
    build_continuation_message,
    build_system_message,
    user_context_block,
)

__all__ = [
    "PromptParts",
    "UserContext",
    "UserContextLimits",
    "build_continuation_message",
    "build_system_message",
    "user_context_block",
]
