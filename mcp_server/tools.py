"""The MCP tools: the registry's, as the chat model gets them at the full profile (same names,
descriptions and JSON schemas, generated: a new tool in `core/tools/tool_registry.py` appears
here with no extra code), less the few that only make sense inside the user's own chat
(`NOT_OFFERED`, each with its reason).

A server tool runs as in a chat: by its handler, here, with the same context the chat gives it
(the installed nodes and models, the skills), its result the text the model would read
(`tool_result_text`). A panel tool is relayed to the user's panel (panel_relay.py). A server
tool that asks the user first asks in the panel first (server.py), then runs here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import mcp_types as types

from ..core.base import tool_result_text
from ..core.chat.chat_plan import offered_names
from ..core.context import FULL
from ..core.knowledge import EnvironmentService, SkillDirectory
from ..core.tools import TOOLS, ToolContext, ToolFailure, ToolSpec, server_tool_outputs

NOT_OFFERED: Mapping[str, str] = MappingProxyType(
    {
        "searchConversation": "it searches the user's chat threads, which an MCP client may "
        "not read",
        "recallToolResult": "it reads a result stored in the user's chat threads",
        "readSystemContext": "it reads sections of the chat's system prompt, which an MCP "
        "client is not given",
        "delegate": "it runs a helper on the user's own model with their key; an MCP client "
        "is a model of its own",
    }
)

ASKS_FIRST = (
    "{name} changes what the user keeps, so it asks the user first, in the ComfyUI panel in "
    "their browser, and no panel is connected to ask: it did not run. The user needs ComfyUI "
    "open in a browser tab."
)


def offered_specs() -> tuple[ToolSpec, ...]:
    """The registry's tools an MCP client gets, in registry order."""
    names = offered_names(FULL, context_cut=False)
    return tuple(s for s in TOOLS if s.name in names and s.name not in NOT_OFFERED)


_OFFERED: Mapping[str, ToolSpec] = MappingProxyType({s.name: s for s in offered_specs()})


def readme_list() -> str:
    """The README's list of what an MCP client is offered and what not (scripts/
    gen_panel_types.py writes it there; a test checks it)."""
    where: dict[str, list[str]] = {"server": [], "panel": []}
    for spec in offered_specs():
        where[spec.runs].append(f"`{spec.name}`")
    lines = [
        f"- Run on the server, as in a chat: {', '.join(where['server'])}.",
        f"- Run in your open panel, as in a chat: {', '.join(where['panel'])}.",
        "- Not offered:",
        *(f"  - `{name}`: {why}." for name, why in NOT_OFFERED.items()),
    ]
    return "".join(
        textwrap.fill(
            line,
            96,
            subsequent_indent=" " * (len(line) - len(line.lstrip()) + 2),
            break_on_hyphens=False,
            break_long_words=False,
        )
        + "\n"
        for line in lines
    )


def mcp_tool(spec: ToolSpec) -> types.Tool:
    """One registry tool as an MCP tool: its OpenAI definition's name, description and
    parameters (the full, not the brief, form)."""
    function = spec.openai_tool()["function"]
    return types.Tool(
        name=function["name"],
        description=function["description"],
        input_schema=function["parameters"],
    )


def mcp_tools() -> list[types.Tool]:
    return [mcp_tool(spec) for spec in _OFFERED.values()]


def offered(name: str) -> ToolSpec | None:
    return _OFFERED.get(name)


@dataclass(frozen=True)
class ServerParts:
    """What the server tools read (the service's, for the user the connection acts for)."""

    environment: EnvironmentService
    system_skills: SkillDirectory
    user_skills: SkillDirectory


class _NoThreads:
    """An MCP call has no chat thread: no stored results to read."""

    async def tool_result(self, thread_id: str, tool_call_id: str) -> Any | None:
        return None


def tool_context(parts: ServerParts, call_id: str) -> ToolContext:
    """The context a server tool gets for an MCP call: as a chat's at the full profile, with
    no thread, no conversation to search and no delegation."""
    return ToolContext(
        thread_id="",
        threads=_NoThreads(),
        system_skills=parts.system_skills,
        user_skills=parts.user_skills,
        environment=parts.environment,
        read_context_section=lambda _section: None,
        search_limit=FULL.search_results,
        call_id=call_id,
    )


def text_result(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def failure(message: str) -> types.CallToolResult:
    """A tool error, worded as the model reads one in a chat."""
    return text_result(tool_result_text({"state": "output-error", "errorText": message}), True)


async def run_tool(
    spec: ToolSpec, args: dict[str, Any], parts: ServerParts, call_id: str
) -> types.CallToolResult:
    """Run one offered server tool for an MCP client (the user allowed it, if it asks first);
    its result as the model would read it."""
    value: Any = None
    try:
        async for output in server_tool_outputs(spec.name, args, tool_context(parts, call_id)):
            value = output.value  # (the last one is the result)
    except ToolFailure as exc:
        return failure(str(exc))
    return text_result(tool_result_text({"state": "output-available", "output": value}))
