"""The MCP server over Streamable HTTP: the official `mcp` client (Python SDK) against our
standalone server on a real socket."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from comfyui_assistant.core.base import compact_json
from comfyui_assistant.core.chat.chat_plan import offered_names
from comfyui_assistant.core.context import FULL
from comfyui_assistant.core.tools import TOOLS
from comfyui_assistant.mcp_server.panel_relay import NO_PANEL
from comfyui_assistant.mcp_server.prompts import skill_prompt
from comfyui_assistant.mcp_server.resources import MODELS, PANELS, node_uri
from comfyui_assistant.mcp_server.tools import NOT_OFFERED
from comfyui_assistant.mcp_server.workflow import WORKFLOW
from comfyui_assistant.standalone import SERVICE
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from .conftest import App, start_app

MCP = "/api/assistant/mcp"


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data", {})
    yield started
    await started.close()


def registry_tools() -> list[dict[str, Any]]:
    """The tools the chat model gets at the full profile, in the OpenAI form, less the ones
    an MCP client is not offered (each with its reason in NOT_OFFERED)."""
    names = offered_names(FULL, context_cut=False)
    return [
        spec.openai_tool()["function"]
        for spec in TOOLS
        if spec.name in names and spec.name not in NOT_OFFERED
    ]


def as_openai(tool: types.Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_initialize_and_list_tools_equal_to_the_registry(app: App, mode: str) -> None:
    """Both protocol eras the SDK speaks: the initialize handshake (2025-11-25) and the
    2026-07-28 per-request era ("auto" discovers it)."""
    async with Client(app.base + MCP, mode=mode) as client:
        assert client.server_info is not None
        assert client.server_info.name == "comfyui-assistant"
        expected = LATEST_HANDSHAKE_VERSION if mode == "legacy" else LATEST_MODERN_VERSION
        assert client.protocol_version == expected
        listed = await client.list_tools()
    assert [as_openai(t) for t in listed.tools] == registry_tools()
    # (every registry tool is either offered or left out for a stated reason)
    assert {t.name for t in listed.tools} | set(NOT_OFFERED) >= offered_names(FULL, False)


async def test_a_server_tool_runs_as_in_a_chat(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        result = await client.call_tool("searchInstalledNodes", {"query": "ksampler", "limit": 2})
    assert result.is_error is False
    env = await app.app[SERVICE].environment.get()
    expected = {"query": "ksampler", "results": env.search_nodes("ksampler", 2)}
    assert len(expected["results"]) == 2
    assert result.content == [types.TextContent(text=compact_json(expected))]


async def test_a_tool_failure_is_a_tool_error_the_model_can_act_on(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        result = await client.call_tool("getNodeDefinition", {"nodeType": "KSamplr"})
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Error: There is no installed node type 'KSamplr'. Did you mean: ")
    assert "KSampler" in text


async def test_a_panel_tool_without_a_panel_says_it_did_not_run(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        result = await client.call_tool("addNode", {"nodeType": "KSampler"})
    assert result.is_error is True
    assert result.content == [types.TextContent(text="Error: " + NO_PANEL.format(name="addNode"))]


async def test_an_unknown_tool_is_a_protocol_error(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("searchConversation", {"query": "my key"})
    assert caught.value.code == types.INVALID_PARAMS
    assert "There is no tool 'searchConversation'" in str(caught.value)


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


async def test_a_wrong_origin_is_refused(app: App) -> None:
    init, headers = INIT, ACCEPT
    async with await app.post(MCP, init, headers={**headers, "Origin": "http://evil.test"}) as r:
        assert r.status == 403
        assert json.loads(await r.text()) == {
            "error": "requests from another site (http://evil.test) are not accepted"
        }
    async with await app.post(MCP, init, headers={**headers, "Origin": app.base}) as r:
        assert r.status == 200  # (the page's own origin is fine)


BAD_ARGUMENTS: list[dict[str, Any]] = [
    {},
    {"query": 5, "limit": "lots"},
    {"nodeType": None, "category": [], "slug": {"a": 1}},
    {"name": "", "description": 7, "body": None, "detail": "x" * 5000},
    {"query": "\u00e9" * 300, "nodeIds": [None], "limit": -(2**70)},
]


async def test_no_arguments_crash_a_tool(app: App) -> None:
    """Every offered tool, with arguments of the wrong shape: a result for each (an error the
    model can act on, or what the tool made of them), never a protocol error."""
    async with Client(app.base + MCP, mode="legacy") as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            for args in BAD_ARGUMENTS:
                result = await client.call_tool(tool.name, args)
                assert result.content, (tool.name, args)
                if result.is_error:
                    assert result.content[0].text.startswith("Error: "), (tool.name, args)  # type: ignore[union-attr]


async def test_skills_are_prompts(app: App) -> None:
    body = {"name": "Portrait light", "description": "Soft key light.", "body": "Use a softbox."}
    async with await app.post("/api/assistant/user-context/skills", body) as response:
        assert response.status == 201
        slug = (await response.json())["slug"]
    service = app.app[SERVICE]
    shipped = service.system_skills.list()
    async with Client(app.base + MCP, mode="legacy") as client:
        listed = await client.list_prompts()
        got = await client.get_prompt(slug, {"request": "light the face"})
        plain = await client.get_prompt(shipped[0].slug)
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("no-such-skill")
    assert [(p.name, p.description) for p in listed.prompts] == [
        *((s.slug, s.description) for s in shipped),
        (slug, "Soft key light."),
    ]
    mine = service.user_skills.get(slug)
    assert got.messages == [
        types.PromptMessage(
            role="user", content=types.TextContent(text=skill_prompt(mine, "light the face"))
        )
    ]
    assert got.messages[0].content.text.endswith(  # type: ignore[union-attr]
        '<skill name="portrait-light">\nUse a softbox.\n</skill>\n\n'
        "The user's request: light the face"
    )
    assert plain.messages[0].content.text.endswith(  # type: ignore[union-attr]
        "The user's request: Apply this skill to the current workflow."
    )
    assert str(caught.value) == "There is no skill 'no-such-skill'."


async def test_resources_are_what_the_lookup_tools_read(app: App) -> None:
    env = await app.app[SERVICE].environment.get()
    assert env.model_categories() == []  # (the shipped environment lists no model files)
    async with Client(app.base + MCP, mode="legacy") as client:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        panels = await client.read_resource(PANELS)
        models = await client.read_resource(MODELS)
        with pytest.raises(MCPError) as no_folder:
            await client.read_resource(f"{MODELS}/checkpoints")
        node = await client.read_resource(node_uri("KSampler"))
        with pytest.raises(MCPError) as unknown_node:
            await client.read_resource(node_uri("KSamplr"))
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("comfyui-assistant://threads")
    assert [r.uri for r in listed.resources] == [WORKFLOW, PANELS, MODELS]
    assert [t.uri_template for t in templates.resource_templates] == [
        WORKFLOW + "/{panel}",
        MODELS + "/{folder}",
        "comfyui-assistant://node/{type}",
    ]

    def text(result: types.ReadResourceResult) -> str:
        return result.contents[0].text  # type: ignore[union-attr]

    assert json.loads(text(panels)) == {"panels": []}
    assert text(models) == compact_json(env.models_in(None))
    assert str(no_folder.value) == (
        "comfyui-assistant://models/checkpoints: There is no model folder type 'checkpoints'. "
        "Known: ."
    )
    assert text(node) == compact_json(env.node_definition("KSampler"))
    assert "There is no installed node type 'KSamplr'." in str(unknown_node.value)
    assert str(unknown.value) == "There is no resource 'comfyui-assistant://threads'."
