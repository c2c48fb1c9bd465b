"""The MCP server over stdio: `python -m comfyui_assistant mcp --comfyui URL` in a subprocess,
driven by the official `mcp` client, relaying to our standalone server on a real socket."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from comfyui_assistant.core.base import compact_json
from comfyui_assistant.mcp_server.panel_relay import NO_SUCH_PANEL, PANEL_META
from comfyui_assistant.mcp_server.prompts import skill_prompt
from comfyui_assistant.mcp_server.resources import node_uri
from comfyui_assistant.mcp_server.stdio import endpoint_url
from comfyui_assistant.mcp_server.tools import mcp_tools
from comfyui_assistant.standalone import SERVICE
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from .conftest import App, start_app
from .test_mcp_panel_relay import FakePanel


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data", {})
    yield started
    await started.close()


def stdio(comfyui: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "comfyui_assistant", "mcp", "--comfyui", comfyui, *extra],
        env={"PATH": os.environ.get("PATH", ""), "COMFY_ASSISTANT_OFFLINE": "1"},
    )


async def test_stdio_relays_the_tools_and_their_calls(app: App) -> None:
    async with Client(stdio(app.base), mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "comfyui-assistant"
        listed = await client.list_tools()
        result = await client.call_tool("getAvailableModels", {})
        failed = await client.call_tool("getSystemSkill", {"slug": "no-such-skill"})
        named = await client.call_tool("getWorkflow", {}, meta={PANEL_META: "tab-9"})
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("txt2img", {"request": "a cat"})
        node = await client.read_resource(node_uri("KSampler"))
    assert listed.tools == mcp_tools()
    env = await app.app[SERVICE].environment.get()
    assert result.is_error is False
    assert result.content == [types.TextContent(text=compact_json(env.models_in(None)))]
    assert failed.is_error is True
    assert failed.content[0].text.startswith("Error: ")  # type: ignore[union-attr]
    # (the call's _meta went on to the endpoint: it looked for the panel it names)
    said = "Error: " + NO_SUCH_PANEL.format(wanted="tab-9", listed="none")
    assert (named.is_error, named.content[0].text) == (True, said)  # type: ignore[union-attr]
    definition = env.node_definition("KSampler")
    assert node.contents[0].text == compact_json(definition)  # type: ignore[union-attr]
    skills = app.app[SERVICE].system_skills
    assert [p.name for p in prompts.prompts] == [s.slug for s in skills.list()]
    text = skill_prompt(skills.get("txt2img"), "a cat")
    assert prompt.messages == [
        types.PromptMessage(role="user", content=types.TextContent(text=text))
    ]


async def test_stdio_says_what_to_do_when_comfyui_is_not_there(unused_tcp_port: int) -> None:
    comfyui = f"http://127.0.0.1:{unused_tcp_port}"
    async with Client(stdio(comfyui), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.list_tools()
    said = str(caught.value)
    assert said.startswith(f"Cannot reach the assistant's MCP endpoint at {endpoint_url(comfyui)}")
    assert said.endswith(
        "Start ComfyUI with ComfyUI Assistant installed (or check the --comfyui address), then "
        "restart this MCP server."
    )


async def test_the_panel_names_the_agent_that_started_the_relay_not_the_relay(app: App) -> None:
    host = types.Implementation(name="claude-desktop-like", version="7.1")
    async with FakePanel(app, "tab-1", "a.json") as panel:
        assert (await panel.event(clients=True))[1]["clients"] == []
        async with Client(stdio(app.base), mode="legacy", client_info=host):
            kind, joined = await panel.event(clients=True)  # (at the handshake, before a call)
    assert kind == "clients"
    assert [(c["name"], c["version"]) for c in joined["clients"]] == [
        ("claude-desktop-like", "7.1")
    ]
