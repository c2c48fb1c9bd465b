"""From a validated /api/assistant/chat request to the plan of the answer: the system message, the
history, the tools offered, and `/skill` handling.

This is where the context sources meet: shipped guidance, skills, the environment line, the
user's rules and files, the tools this request offers. (The context engine that fits all of it
into the model's window builds on this.)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base import UIMessage, system_texts
from ..context import (
    FULL,
    PromptParts,
    PromptProfile,
    build_continuation_message,
    build_system_message,
)
from ..knowledge import (
    Skill,
    closest,
    skill_names_line,
    skills_index,
)
from ..stream import new_id
from ..tools import TOOLS
from .chat_request import ChatRequest
from .chat_sources import Sources

SKILL_COMMAND = re.compile(r"^\s*/skill(?:\s+(?P<rest>.*))?\s*$", re.DOTALL)
CONTEXT_READER = "readSystemContext"  # offered when the shipped guidance was cut
REGISTRY_NAMES = frozenset(spec.name for spec in TOOLS)


def _last_user(messages: list[UIMessage]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def _text_of(message: UIMessage) -> str:
    return "\n\n".join(p["text"] for p in message.get("parts", []) if p.get("type") == "text")


def find_skill(words: str, skills: Sequence[Skill]) -> tuple[Skill, str] | None:
    """The skill named at the start of `words` (slug, or name — possibly several words)."""
    tokens = words.split()
    for n in range(len(tokens), 0, -1):
        head = " ".join(tokens[:n]).lower()
        for skill in skills:
            if head in (skill.slug, skill.name.lower()):
                rest = words.strip()[len(" ".join(tokens[:n])) :].strip()
                return skill, rest
    return None


def skill_message(skill: Skill, rest: str) -> str:
    task = rest or "Apply this skill to the current workflow."
    return (
        f'The user activated the skill "{skill.name}" ({skill.slug}) with /skill. Follow its '
        f'instructions for this request.\n\n<skill name="{skill.slug}">\n{skill.body.strip()}'
        f"\n</skill>\n\nThe user's request: {task}"
    )


def skill_command(message: UIMessage, skills: Sequence[Skill]) -> tuple[str | None, str | None]:
    """A `/skill` command in a user message: (the text to send in place of what was typed,
    None) — or (None, a local reply) when it names no skill; (None, None) for any other text.
    The stored thread keeps what the user typed; the expansion is recorded (SentTurn)."""
    match = SKILL_COMMAND.match(_text_of(message))
    if match is None:
        return None, None
    words = (match.group("rest") or "").strip()
    names = ", ".join(s.slug for s in sorted(skills, key=lambda s: s.slug))
    if not words:
        return None, f"Use /skill <name> followed by your request. Skills: {names}."
    hit = find_skill(words, skills)
    if hit is None:
        near = closest(words.split()[0], skills)
        hint = f" Closest: {', '.join(near)}." if near else ""
        return None, f"There is no skill called '{words.split()[0]}'.{hint} Skills: {names}."
    return skill_message(*hit), None


@functools.cache
def registry_tools(
    names: frozenset[str], brief: bool = False
) -> tuple[tuple[dict[str, Any], ...], frozenset[str]]:
    """The registry's tools among `names` in the OpenAI format (`brief`: the compact form), and
    the names of those that run on the server. Rendered once (the registry never changes) and
    shared by every request's plan: read-only by convention — nothing on the way to the
    provider edits a definition."""
    specs = [spec for spec in TOOLS if spec.name in names]
    server = frozenset(spec.name for spec in specs if spec.runs == "server")
    return tuple(spec.openai_tool(brief) for spec in specs), server


# Offered at the smallest windows only to a user who has skills: the skill list names them
# (issue 40 made room so for the template tools at 4K).
USER_SKILL_READER = "getUserSkill"


def offered_names(
    profile: PromptProfile, context_cut: bool, user_skills: bool = True
) -> frozenset[str]:
    """The registry tools a profile offers; the reader of left-out guidance only when the
    guidance sent was cut; in the skill-names-only profile, the reader of the user's skills
    only when they have some."""
    names = {spec.name for spec in TOOLS if profile.offers(spec.tier)} - {CONTEXT_READER}
    if profile.skill_names_only and not user_skills:
        names.discard(USER_SKILL_READER)
    return frozenset(names | ({CONTEXT_READER} if context_cut else set()))


def _offered_tools(
    req: ChatRequest, names: frozenset[str], brief: bool
) -> tuple[list[dict[str, Any]], frozenset[str]]:
    shared, server = registry_tools(names, brief)
    tools = list(shared)
    for tool in req.tools:  # extra tools the panel declared; the registry wins on a name clash
        if tool.name not in REGISTRY_NAMES and not any(
            t["function"]["name"] == tool.name for t in tools
        ):
            function = {"name": tool.name, "description": tool.description}
            tools.append(
                {"type": "function", "function": {**function, "parameters": tool.parameters}}
            )
    return tools, server


@dataclass(frozen=True)
class SkillUse:
    """A `/skill` in the message being answered."""

    latest_id: str | None = None  # the latest user message
    text: str | None = None  # its expansion, sent in place of what was typed
    reply: str | None = None  # the answer without the model (it names no skill)


def skill_use(req: ChatRequest, sources: Sources, recorded: Mapping[str, Any]) -> SkillUse:
    """`recorded`: the user messages already sent (SentTurn by id): a /skill in one of them
    was expanded when it was first sent, and is resent as it was then."""
    ui = req.messages
    history = ui[:-1] if ui[-1].get("role") == "assistant" else ui
    index = _last_user(list(history))
    if index is None:
        return SkillUse()
    latest = history[index]
    if latest["id"] in recorded:
        return SkillUse(latest["id"])
    text, reply = skill_command(latest, [*sources.system_skills, *sources.user_skills])
    return SkillUse(latest["id"], text, reply)


def ui_history_of(ui: list[UIMessage]) -> list[UIMessage]:
    """The messages before the answer: all but a last assistant message (which the answer
    continues)."""
    return list(ui[:-1] if ui[-1].get("role") == "assistant" else ui)


@dataclass(frozen=True)
class ChatPlan:
    """Everything one answer needs, decided before the model is called (built once, whole:
    `build_plan`)."""

    system: str
    ui_history: list[UIMessage]  # UI messages before the answer (a /skill applied)
    message_id: str
    answer_base: UIMessage | None = None  # the assistant message a continuation extends
    tools: list[dict[str, Any]] = field(default_factory=list)
    server_tools: frozenset[str] = frozenset()
    max_steps: int = 8
    local_reply: str | None = None  # answer without the model (e.g. an unknown /skill)
    latest_user_id: str | None = None  # the message this answer replies to
    skill_text: str | None = None  # a /skill in it, expanded (sent in place of the typed text)
    model_source: str = "settings"
    profile: str = "full"  # the prompt profile (prompt_profile.py) the window chose
    progress: bool = False  # the server streams its prompt progress when asked (llama.cpp)
    slot: int | None = None  # the llama.cpp slot of this thread (slots.choose_slot)
    slot_note: str | None = None  # why it is not the thread's own slot (in the report)
    debug: bool = False  # ?debug=context: the exact request goes to the panel too

    def answer_start(self) -> UIMessage:
        """The assistant message this answer extends (a continuation), or a new empty one."""
        return self.answer_base or {"id": self.message_id, "role": "assistant", "parts": []}


def response_message_id(messages: list[UIMessage]) -> str:
    """A continuation (last message is the assistant's) must keep that message's id."""
    last = messages[-1]
    if last.get("role") == "assistant" and isinstance(last.get("id"), str) and last["id"]:
        return str(last["id"])
    return new_id("msg")


def build_plan(
    req: ChatRequest,
    sources: Sources,
    first_turn: bool,
    skill: SkillUse,
    profile: PromptProfile = FULL,
    tools_usable: bool = True,
    *,
    history: list[UIMessage] | None = None,
    model_source: str = "settings",
    progress: bool = False,
    slot: int | None = None,
    slot_note: str | None = None,
    debug: bool = False,
) -> ChatPlan:
    """The plan of the answer for a window of `profile`'s class; `tools_usable` False when
    the model cannot call tools (none offered, none listed). `history`: the messages before
    the answer as they will be sent (their attached files in place), else `ui_history_of`
    the request's; the rest is how the request is delivered (ChatPlan's fields)."""
    ui = req.messages
    continued = ui[-1] if ui[-1].get("role") == "assistant" else None
    guidance = sources.compact_context if profile.compact else sources.system_context
    tools: list[dict[str, Any]] = []
    server: frozenset[str] = frozenset()
    if tools_usable:
        names = offered_names(profile, bool(guidance.omitted), bool(sources.user_skills))
        tools, server = _offered_tools(req, names, brief=profile.compact)
    index = (
        skill_names_line(sources.system_skills, sources.user_skills)
        if profile.skill_names_only
        else skills_index(sources.system_skills, sources.user_skills)
    )
    parts = PromptParts(
        system_context=guidance.text,
        role_override=sources.role_override,
        persona=sources.persona_prompt,
        skills_index=index,
        environment=sources.environment_line,
        user=sources.user,
        user_limits=profile.user_limits(sources.limits.user_context_chars),
        tool_names=[t["function"]["name"] for t in tools],
        extra_tools=[(t.name, t.description) for t in req.tools if t.name not in REGISTRY_NAMES]
        if tools_usable
        else [],
        panel_instructions=[req.system or "", *system_texts(ui)],
        list_tool_groups=not profile.compact,
    )
    continuation = sources.environ.get("LLM_SYSTEM_PROMPT_MODE", "full") == "continuation"
    build = build_continuation_message if continuation and not first_turn else build_system_message
    return ChatPlan(
        system=build(parts),
        ui_history=ui_history_of(ui) if history is None else history,
        message_id=response_message_id(ui),
        answer_base=continued,
        tools=tools,
        server_tools=server,
        max_steps=sources.limits.max_tool_steps,
        local_reply=skill.reply,
        latest_user_id=skill.latest_id,
        skill_text=skill.text,
        profile=profile.name,
        model_source=model_source,
        progress=progress,
        slot=slot,
        slot_note=slot_note,
        debug=debug,
    )
