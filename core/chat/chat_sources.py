"""What a chat turn reads before it plans: the user's context (a snapshot from the store,
re-read only after a write) and every source of the system message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context.system_prompt import UserContext
from ..store.user_data import sendable
from .chat_plan import Sources, list_skills, load_context, role_override
from .turn_parts import TurnParts


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
