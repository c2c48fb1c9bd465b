"""Skills as MCP prompts: each shipped skill and each of the user's (a user skill whose slug a
shipped one has is left out, as the chat's `/skill` picks the shipped one), named by its slug,
with one optional argument, the request. Getting one gives the message the chat sends for
`/skill <name> <request>`, worded for a prompt the user chose in their MCP client."""

from __future__ import annotations

import asyncio

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..core.knowledge import Skill
from .tools import ServerParts

REQUEST = "request"
NO_REQUEST = "Apply this skill to the current workflow."


async def skills(parts: ServerParts) -> list[Skill]:
    shipped = await asyncio.to_thread(parts.system_skills.list)
    own = await asyncio.to_thread(parts.user_skills.list)
    taken = {s.slug for s in shipped}
    return [*shipped, *(s for s in own if s.slug not in taken)]


def prompt_of(skill: Skill) -> types.Prompt:
    argument = types.PromptArgument(
        name=REQUEST, description="What to do with this skill.", required=False
    )
    return types.Prompt(name=skill.slug, description=skill.description, arguments=[argument])


def skill_prompt(skill: Skill, request: str) -> str:
    return (
        f'The user chose the skill "{skill.name}" ({skill.slug}). Follow its instructions for '
        f'this request.\n\n<skill name="{skill.slug}">\n{skill.body.strip()}\n</skill>\n\n'
        f"The user's request: {request.strip() or NO_REQUEST}"
    )


async def get_prompt(
    parts: ServerParts, name: str, arguments: dict[str, str] | None
) -> types.GetPromptResult:
    found = next((s for s in await skills(parts) if s.slug == name), None)
    if found is None:
        raise MCPError(types.INVALID_PARAMS, f"There is no skill '{name[:100]}'.")
    text = skill_prompt(found, (arguments or {}).get(REQUEST, ""))
    message = types.PromptMessage(role="user", content=types.TextContent(text=text))
    return types.GetPromptResult(description=found.description, messages=[message])
