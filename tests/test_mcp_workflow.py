"""The open workflow as an MCP resource (mcp_server/workflow.py): read through the panel (played
by an HTTP client on its routes, FakePanel), and `notifications/resources/updated` to the
sessions that subscribed when the panel reports its graph changed. The official MCP client over
a real socket."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from comfyui_assistant.core.base import compact_json
from comfyui_assistant.mcp_server.panel_relay import NO_PANEL
from comfyui_assistant.mcp_server.workflow import WORKFLOW
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import App
from .test_mcp_panel_relay import MCP, PANEL, FakePanel

SHOWN = {"ok": True, "workflow": "a.json", "nodes": [{"id": 1, "type": "KSampler"}]}


async def changed(app: App, panel: str, active: bool = False, **extra: Any) -> int:
    body = {"panel": panel, "workflow": "a.json", "active": active, "changed": True, **extra}
    async with await app.post(PANEL + "/state", body) as response:
        return response.status


async def test_the_workflow_is_read_through_the_panel_as_getworkflow_gives_it(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        with pytest.raises(MCPError) as none:
            await client.read_resource(WORKFLOW)
        async with FakePanel(app, "tab-1", "a.json") as panel:
            read = asyncio.ensure_future(client.read_resource(WORKFLOW))
            _, call = await panel.event()
            assert (call["name"], call["input"]) == ("getWorkflow", {})
            await panel.answer(call["callId"], output=SHOWN)
            result = await read
            named = asyncio.ensure_future(client.read_resource(WORKFLOW + "/tab-1"))
            _, call = await panel.event()
            await panel.answer(call["callId"], errorText="the graph is not loaded yet")
            with pytest.raises(MCPError) as failed:
                await named
    assert str(none.value) == NO_PANEL.format(name="Reading the workflow")
    assert result.contents == [
        types.TextResourceContents(uri=WORKFLOW, mime_type="text/plain", text=compact_json(SHOWN))
    ]
    assert str(failed.value) == "Error: the graph is not loaded yet"


# (resources/subscribe is the handshake era's; the 2026-07-28 era's listen is not served here)
@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_a_subscribed_session_hears_of_the_users_edits(app: App) -> None:
    heard: list[str] = []
    updated = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.append(message.params.uri)
            updated.set()

    async with (
        FakePanel(app, "tab-1", "a.json"),
        FakePanel(app, "tab-2", "b.json"),
        Client(app.base + MCP, mode="legacy", message_handler=on_message) as client,
        Client(app.base + MCP, mode="legacy") as quiet,  # (subscribed to nothing)
    ):
        assert client.server_capabilities.resources.subscribe is True  # type: ignore[union-attr]
        await client.subscribe_resource(WORKFLOW)
        await client.subscribe_resource(WORKFLOW + "/tab-2")
        assert await changed(app, "tab-1", active=True) == 200  # the user edits in tab 1
        await asyncio.wait_for(updated.wait(), 10)
        updated.clear()
        assert await changed(app, "tab-2") == 200  # (tab 1 is still the one last active)
        await asyncio.wait_for(updated.wait(), 10)
        updated.clear()
        await client.unsubscribe_resource(WORKFLOW + "/tab-2")
        assert await changed(app, "tab-2") == 200
        assert await changed(app, "tab-1") == 200
        await asyncio.wait_for(updated.wait(), 10)
        assert (await quiet.list_resources()).resources
    assert heard == [WORKFLOW, WORKFLOW + "/tab-2", WORKFLOW]


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_subscribing_to_what_does_not_change_and_a_bad_state_are_refused(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        with pytest.raises(MCPError) as models:
            await client.subscribe_resource("comfyui-assistant://models")
    assert str(models.value) == "Only the workflow resources change: 'comfyui-assistant://models'"
    async with FakePanel(app, "tab-1", "a.json"):
        assert await changed(app, "tab-1", changed="yes") == 400
