"""The tools that run in the backend, inside the same /api/assistant/chat response.

Each handler takes the parsed arguments and returns a JSON-able result. A failure the model
can recover from (an unknown node type, a missing skill) raises ToolFailure with a message
that says what to do instead; it goes back to the model as the tool's error result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..knowledge import Environment, EnvironmentService, Skill, SkillDirectory, SkillError
from .documents import NODE_DOCS, Citations, document, documents_result


class ToolFailure(Exception):
    """A tool error the model can act on; the message is its tool result."""


@dataclass(frozen=True)
class ToolOutput:
    """One output of a tool that reports as it works: `preliminary` ones show its progress
    (the panel replaces each with the next), the last one is its result."""

    value: Any
    preliminary: bool = False


# Runs a delegated task (core/chat/delegation.py): its progress, then its result.
Delegate = Callable[[dict[str, Any], "ToolContext"], AsyncIterator[ToolOutput]]
# Searches the thread's conversation (core/memory/recall_tool.py), citing what it finds; raises
# ToolFailure when the model can fix its arguments.
LookBack = Callable[[dict[str, Any], Citations], Awaitable[Any]]


class StoredResults(Protocol):
    """Where a thread's tool results are kept (core/store/threads.py's Threads)."""

    async def tool_result(self, thread_id: str, tool_call_id: str) -> Any | None: ...


@dataclass
class ToolContext:
    """What a server tool works with, given by the turn (core/chat/chat_turn.py): the tools
    import nothing of the store or the conversation index they read through it."""

    thread_id: str
    threads: StoredResults
    system_skills: SkillDirectory
    user_skills: SkillDirectory
    environment: EnvironmentService
    read_context_section: Callable[[str], str | None]
    search_limit: int = 15  # node search results when the model asks for no number (profile)
    call_id: str = ""  # the tool call being run
    delegate: Delegate | None = None  # None inside a delegated task: one level deep
    # the citation ids of this step's documents (thread-wide: core/tools/documents.py); set by the
    # step loop before its tools run
    citations: Citations | None = None
    look_back: LookBack | None = None  # searchConversation; None where there is no thread


def _skill_summary(skill: Skill) -> dict[str, Any]:
    return {"slug": skill.slug, "name": skill.name, "description": skill.description}


def _skill_full(skill: Skill) -> dict[str, Any]:
    return {**_skill_summary(skill), "instructions": skill.body}


async def _skills_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except SkillError as exc:
        raise ToolFailure(str(exc)) from None


def _unknown_node(env: Environment, node_type: Any) -> Any:
    close = env.closest_node_types(str(node_type))
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise ToolFailure(f"There is no installed node type '{node_type}'.{hint}")


async def search_nodes(args: dict[str, Any], ctx: ToolContext) -> Any:
    env = await ctx.environment.get()
    results = env.search_nodes(str(args["query"]), int(args.get("limit", ctx.search_limit)))
    if not results:
        raise ToolFailure(
            f"No installed node matches '{args['query']}'. Try fewer or other words (a purpose "
            f"like 'upscale', a slot type like 'LATENT'), or it may need a custom node pack."
        )
    return {"query": args["query"], "results": results}


async def node_definition(args: dict[str, Any], ctx: ToolContext) -> Any:
    env = await ctx.environment.get()
    definition = env.node_definition(str(args["nodeType"]))
    return definition if definition is not None else _unknown_node(env, args["nodeType"])


async def available_models(args: dict[str, Any], ctx: ToolContext) -> Any:
    env = await ctx.environment.get()
    try:
        return env.models_in(args.get("category"))
    except KeyError:
        known = ", ".join(env.model_categories())
        raise ToolFailure(
            f"There is no model folder type '{args.get('category')}'. Known: {known}."
        ) from None


async def documentation(args: dict[str, Any], ctx: ToolContext) -> Any:
    env = await ctx.environment.get()
    doc = await asyncio.to_thread(env.documentation, str(args["nodeType"]))  # reads a file
    if doc is None:
        return _unknown_node(env, args["nodeType"])
    citations = ctx.citations if ctx.citations is not None else Citations()
    node_type = str(doc["type"])
    metadata = {"source": NODE_DOCS, "node_type": node_type, "origin": doc["source"]}
    title = env.display_name(node_type)
    return documents_result([document(citations.take(), title, str(doc["text"]), metadata)])


async def list_system_skills(args: dict[str, Any], ctx: ToolContext) -> Any:
    skills = await _skills_call(ctx.system_skills.list)
    return {"skills": [_skill_summary(s) for s in skills]}


async def get_system_skill(args: dict[str, Any], ctx: ToolContext) -> Any:
    return _skill_full(await _skills_call(ctx.system_skills.get, str(args["slug"])))


async def list_user_skills(args: dict[str, Any], ctx: ToolContext) -> Any:
    skills = await _skills_call(ctx.user_skills.list)
    return {"skills": [_skill_summary(s) for s in skills]}


async def get_user_skill(args: dict[str, Any], ctx: ToolContext) -> Any:
    return _skill_full(await _skills_call(ctx.user_skills.get, str(args["slug"])))


async def create_user_skill(args: dict[str, Any], ctx: ToolContext) -> Any:
    skill = await _skills_call(
        ctx.user_skills.create, str(args["name"]), str(args["description"]), str(args["body"])
    )
    return {"created": _skill_summary(skill)}


async def update_user_skill(args: dict[str, Any], ctx: ToolContext) -> Any:
    changes = {k: str(args[k]) for k in ("name", "description", "body") if k in args}
    skill = await _skills_call(ctx.user_skills.update, str(args["slug"]), **changes)
    return {"updated": _skill_summary(skill)}


async def recall_tool_result(args: dict[str, Any], ctx: ToolContext) -> Any:
    result = await ctx.threads.tool_result(ctx.thread_id, str(args["toolCallId"]))
    if result is None:
        raise ToolFailure(
            f"No stored result has the id '{args['toolCallId']}' in this thread; use the id "
            f"shown in the digest."
        )
    return result


async def conversation(args: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.look_back is None:
        raise ToolFailure("searchConversation is not available here.")
    return await ctx.look_back(args, ctx.citations if ctx.citations is not None else Citations())


async def read_system_context(args: dict[str, Any], ctx: ToolContext) -> Any:
    text = ctx.read_context_section(str(args["section"]))
    if text is None:
        raise ToolFailure(f"There is no section '{args['section']}'; use a listed name.")
    return {"section": args["section"], "text": text}


async def delegate(args: dict[str, Any], ctx: ToolContext) -> AsyncIterator[ToolOutput]:
    if ctx.delegate is None:
        raise ToolFailure(
            "delegate is not available here (a delegated task cannot delegate again): do "
            "the lookups yourself."
        )
    async for output in ctx.delegate(args, ctx):
        yield output
