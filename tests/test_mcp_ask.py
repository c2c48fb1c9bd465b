"""A server tool that asks the user first (createUserSkill) called by an MCP client: the
question goes to the panel (played by an HTTP client on its routes, FakePanel) as an `ask`
event with the registry's words; Deny returns the user's words and saves nothing, Allow runs
the tool on the server; with no panel, a tool error and nothing saved. The official MCP client
over a real socket."""

from __future__ import annotations

import asyncio
import json

import mcp_types as types
from comfyui_assistant.core.base import DENIED
from comfyui_assistant.mcp_server.tools import ASKS_FIRST
from mcp import Client

from .conftest import App
from .test_mcp_panel_relay import MCP, FakePanel

SKILL = {"name": "Upscale twice", "description": "Two passes.", "body": "1. Upscale.\n2. Again."}
ASKED = "Save a new skill “Upscale twice” to your user skills (21 characters of instructions)."


async def skills_of(client: Client) -> list[str]:
    return [p.name for p in (await client.list_prompts()).prompts]


async def test_a_server_tool_that_asks_first_asks_in_the_panel(app: App) -> None:
    agent = types.Implementation(name="agent-x", version="2")
    async with Client(app.base + MCP, mode="legacy", client_info=agent) as client:
        before = await skills_of(client)
        alone = await client.call_tool("createUserSkill", SKILL)
        async with FakePanel(app, "tab-1", "a.json") as panel:
            denied = asyncio.ensure_future(client.call_tool("createUserSkill", SKILL))
            kind, event = await panel.event()
            await panel.answer(event["callId"], denied="not this one")
            no = await denied
            after_no = await skills_of(client)

            allowed = asyncio.ensure_future(client.call_tool("createUserSkill", SKILL))
            _, asked = await panel.event()
            await panel.answer(asked["callId"], output={"approved": True})
            yes = await allowed
        after_yes = await skills_of(client)
    assert (alone.is_error, alone.content[0].text) == (  # type: ignore[union-attr]
        True,
        "Error: " + ASKS_FIRST.format(name="createUserSkill"),
    )
    event.pop("callId")
    assert event.pop("client")["name"] == "agent-x"
    assert (kind, event) == ("ask", {"name": "createUserSkill", "input": SKILL, "action": ASKED})
    said = f'{DENIED} The user said: "not this one"'
    assert (no.is_error, no.content[0].text) == (True, said)  # type: ignore[union-attr]
    assert after_no == before
    assert yes.is_error is False
    created = json.loads(yes.content[0].text)["created"]  # type: ignore[union-attr]
    assert created["name"] == "Upscale twice"
    assert sorted(after_yes) == sorted([*before, created["slug"]])
