"""What a chat turn reads before it plans: the user's context (a snapshot from the store,
re-read only after a write) and every source of the system message (`Sources`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..base import env_int
from ..context import UserContext
from ..knowledge import Skill, SystemContext, list_skills, load_context
from ..store import sendable
from .delegate_budget import DelegateBudget
from .turn_parts import TurnParts


def role_override(persona: Mapping[str, Any] | None, custom: str | None) -> str | None:
    """A persona that says so replaces the role text; else the user's own system prompt."""
    if persona and persona.get("replacesSystemPrompt"):
        return str(persona["instructions"])
    return custom


@dataclass(frozen=True)
class TurnNumbers:
    """The LLM_* numbers a turn reads, read once with its sources."""

    user_context_chars: int  # LLM_USER_CONTEXT_MAX_CHARS: the user context's cap (2,500)
    max_tool_steps: int  # LLM_MAX_TOOL_STEPS: model calls of one answer (8)
    delegate: DelegateBudget  # LLM_DELEGATE_*: what one delegated task may spend

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> TurnNumbers:
        return cls(
            user_context_chars=env_int(environ, "LLM_USER_CONTEXT_MAX_CHARS", 2500),
            max_tool_steps=env_int(environ, "LLM_MAX_TOOL_STEPS", 8, minimum=1),
            delegate=DelegateBudget.from_env(environ),
        )


@dataclass(frozen=True)
class Sources:
    """What the plan reads, already loaded (`gather_sources`)."""

    system_context: SystemContext
    compact_context: SystemContext  # the guidance of the compact profiles
    custom_system_prompt: str | None
    system_skills: Sequence[Skill]
    user_skills: Sequence[Skill]
    environment_line: str
    user: UserContext
    environ: Mapping[str, str]
    persona: Mapping[str, Any] | None = None  # the active persona
    numbers: TurnNumbers | None = None  # (read from `environ` when not given)

    def __post_init__(self) -> None:
        if self.numbers is None:
            object.__setattr__(self, "numbers", TurnNumbers.from_env(self.environ))

    @property
    def limits(self) -> TurnNumbers:
        assert self.numbers is not None  # (__post_init__)
        return self.numbers

    @property
    def role_override(self) -> str | None:
        return role_override(self.persona, self.custom_system_prompt)

    @property
    def persona_prompt(self) -> tuple[str, str] | None:
        """A persona that adds to the role (one that does not replace it): a section of the
        system message, which changes only when the persona does."""
        if self.persona and not self.persona.get("replacesSystemPrompt"):
            return str(self.persona["name"]), str(self.persona["instructions"])
        return None


@dataclass(frozen=True)
class UserSnapshot:
    custom: str | None
    persona: dict[str, Any] | None
    rules: list[str]
    reminders: list[str]
    preferences: dict[str, Any]


async def user_snapshot(parts: TurnParts) -> UserSnapshot:
    """What a chat reads of the user's context from the store, re-read only after a write."""
    store = parts.store
    cached = store.cache.get("user")
    if cached is not None and cached[0] == store.user_generation:
        return cached[1]  # type: ignore[no-any-return]
    generation = store.user_generation
    user = parts.user_data
    snapshot = UserSnapshot(
        custom=await user.setting("prompt", "system"),
        persona=await user.active_persona(),
        rules=[r["text"] for r in await user.rules.list() if r["enabled"]],
        reminders=[r["text"] for r in await user.reminders.list() if r["enabled"]],
        preferences=await store.get_settings("preferences"),
    )
    store.cache["user"] = (generation, snapshot)
    return snapshot


async def gather_sources(parts: TurnParts, snap: UserSnapshot) -> Sources:
    user = parts.user_data
    environ = parts.options.environ
    env = await parts.environment.get()
    replaces = role_override(snap.persona, snap.custom) is not None
    directory = parts.options.system_context_dir
    return Sources(
        system_context=load_context(directory, environ, replaces),
        compact_context=load_context(directory, environ, replaces, compact=True),
        custom_system_prompt=snap.custom,
        system_skills=list_skills(parts.system_skills),
        user_skills=list_skills(parts.user_skills),
        environment_line=env.summary_line(),
        user=UserContext(
            rules=snap.rules,
            soul=sendable(await user.read_file("soul")),
            goals=sendable(await user.read_file("goals")),
            preferences=snap.preferences,
        ),
        environ=environ,
        persona=snap.persona,
    )
