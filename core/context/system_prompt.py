"""Builds the system message from its sections.

Order: the role and shipped guidance (or the user's own system prompt in place of the role),
the skills index, the environment line, the user's context, the tools this request offers,
citations when lookups ran, then instructions the panel sent. The message must be
byte-identical from turn to turn while its inputs are unchanged, because providers and local
servers cache the longest unchanged request prefix: nothing volatile (time, counters) goes in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..tools import GROUPS, TOOLS

FALLBACK_PROMPT = (
    "You are ComfyUI Assistant, an assistant inside ComfyUI. Help the user build, edit and run "
    "workflows with the tools you have. Read the workflow before changing it, never replace "
    "the user's graph without asking, and say which node ids you changed."
)


@dataclass(frozen=True)
class UserContext:
    rules: Sequence[str] = ()
    soul: str = ""
    goals: str = ""
    preferences: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class UserContextLimits:
    total: int = 2500
    soul_and_goals: int = 1200
    rules: int = 12


@dataclass(frozen=True)
class PromptParts:
    """The inputs of the system message (each already loaded)."""

    system_context: str  # shipped guidance, capped; "" falls back to FALLBACK_PROMPT
    role_override: str | None = None  # the user's edited system prompt
    persona: tuple[str, str] | None = None  # (name, instructions) of a persona that adds
    skills_index: str = ""
    environment: str = ""
    user: UserContext = field(default_factory=UserContext)
    user_limits: UserContextLimits = field(default_factory=UserContextLimits)
    tool_names: Sequence[str] = ()
    extra_tools: Sequence[tuple[str, str]] = ()  # (name, description) the panel declared
    list_tool_groups: bool = True  # (the compact profiles leave the groups' notes out)
    panel_instructions: Sequence[str] = ()


def _cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a line or sentence end, marked when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    room = text[: max(0, limit - 12)]
    end = max(room.rfind("\n"), room.rfind(". "))
    return (room[: end + 1] if end > limit // 2 else room).rstrip() + " […cut]"


def user_context_block(user: UserContext, limits: UserContextLimits) -> str:
    """The user's rules, SOUL.md, goals.md and preferences, within their caps."""
    lines: list[str] = []
    rules = [r.strip() for r in user.rules if r.strip()]
    if rules:
        lines.append("Rules (always follow):")
        lines += [f"- {rule}" for rule in rules[: limits.rules]]
        if len(rules) > limits.rules:
            lines.append(f"- ({len(rules) - limits.rules} more rules omitted)")
    soul, goals = user.soul.strip(), user.goals.strip()
    if soul or goals:
        share = limits.soul_and_goals // (2 if soul and goals else 1)
        if soul:
            lines += ["About you (SOUL.md):", _cut(soul, share)]
        if goals:
            lines += ["The user's goals (goals.md):", _cut(goals, share)]
    if user.preferences:
        prefs = "; ".join(f"{k}: {v}" for k, v in sorted(user.preferences.items()))
        lines.append(f"Preferences: {prefs}")
    if not lines:
        return ""
    return "## The user\n" + _cut("\n".join(lines), limits.total)


def tools_section(
    tool_names: Sequence[str], extra: Sequence[tuple[str, str]], groups: bool = True
) -> str:
    names = set(tool_names) if groups else set()
    lines = []
    for key, group in GROUPS.items():  # each group's tools from the registry, in its order
        members = sorted(spec.name for spec in TOOLS if spec.group == key and spec.name in names)
        if members:
            lines.append(f"- {group.title} ({', '.join(members)}) {group.note}")
    lines += [f"- {name} (from the panel): {desc or 'no description'}" for name, desc in extra]
    return "## Tools this request\n" + "\n".join(lines) if lines else ""


def build_system_message(parts: PromptParts) -> str:
    sections = [parts.role_override.strip()] if parts.role_override else []
    sections.append(parts.system_context.strip() or ("" if sections else FALLBACK_PROMPT))
    if parts.persona is not None and parts.persona[1].strip():
        name, instructions = parts.persona
        sections.append(f'<persona name="{name}">\n{instructions.strip()}\n</persona>')
    sections.append(parts.skills_index)
    if parts.environment:
        sections.append(f"## Environment\n{parts.environment}")
    sections.append(user_context_block(parts.user, parts.user_limits))
    sections.append(tools_section(parts.tool_names, parts.extra_tools, parts.list_tool_groups))
    sections += [t.strip() for t in parts.panel_instructions]
    return "\n\n".join(s for s in sections if s and s.strip())


def build_continuation_message(parts: PromptParts) -> str:
    """`LLM_SYSTEM_PROMPT_MODE=continuation`: later turns get this short message instead; it
    still carries the tool rules and the user's rules, so the model never loses them."""
    rules = [r.strip() for r in parts.user.rules if r.strip()]
    lines = [
        "You are ComfyUI Assistant; continue this conversation under the instructions of its "
        "first turn.",
        "Tool rules: read the workflow before editing; check node types and model files exist "
        "(searchInstalledNodes, getNodeDefinition, getAvailableModels) before using them; never "
        "replace the user's graph without asking; report the node ids you changed.",
    ]
    if rules:
        lines.append("The user's rules: " + " | ".join(rules[: parts.user_limits.rules]))
    sections = ["\n".join(lines), tools_section(parts.tool_names, parts.extra_tools)]
    sections += [t.strip() for t in parts.panel_instructions]
    return "\n\n".join(s for s in sections if s)
