"""The connected MCP clients as the panel sees them, and the panel's Disconnect (mcp_server/
clients.py): the official MCP client over a real socket; the panel is played by an HTTP client
on its routes (FakePanel)."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import mcp_types as types
import pytest
from comfyui_assistant.mcp_server.clients import DISCONNECTED
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import App
from .test_mcp_panel_relay import MCP, PANEL, FakePanel

AGENT = types.Implementation(name="agent-x", version="3.1")
OTHER = types.Implementation(name="agent-y", version="1")


async def clients_event(panel: FakePanel) -> dict[str, Any]:
    kind, data = await panel.event(clients=True)
    assert kind == "clients", (kind, data)
    return data


def the_error(raised: BaseException) -> MCPError:
    """The MCP error the client raised (at `initialize`, in the SDK's task groups)."""
    while len(getattr(raised, "exceptions", ())) == 1:  # (an exception group)
        raised = raised.exceptions[0]  # type: ignore[attr-defined]
    assert isinstance(raised, MCPError), repr(raised)
    return raised


async def post(app: App, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    async with await app.post(PANEL + path, body) as response:
        return response.status, await response.json()


async def test_a_client_is_listed_when_it_connects_and_gone_when_it_leaves(app: App) -> None:
    async with FakePanel(app, "tab-1", "a.json") as panel:
        assert await clients_event(panel) == {"clients": [], "disconnected": []}
        started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        async with Client(app.base + MCP, mode="legacy", client_info=AGENT):
            joined = await clients_event(panel)  # (before any call)
        assert await clients_event(panel) == {"clients": [], "disconnected": []}
    [listed] = joined["clients"]
    since = datetime.datetime.fromisoformat(listed.pop("since"))
    assert started <= since <= datetime.datetime.now(datetime.timezone.utc)
    assert len(listed.pop("id")) == 32  # (the session id)
    assert (listed, joined["disconnected"]) == ({"name": "agent-x", "version": "3.1"}, [])


async def test_a_panel_that_connects_later_gets_the_list(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy", client_info=AGENT) as client:
        await client.list_tools()  # (its `initialized` notification has been taken by then)
        async with FakePanel(app, "tab-1", "a.json") as panel:
            listed = await clients_event(panel)
    assert [(c["name"], c["version"]) for c in listed["clients"]] == [("agent-x", "3.1")]


async def test_disconnect_ends_the_session_and_its_call_and_refuses_the_client_until_allowed(
    app: App,
) -> None:
    refused = DISCONNECTED.format(name="agent-x")
    async with (
        FakePanel(app, "tab-1", "a.json") as panel,
        Client(app.base + MCP, mode="legacy", client_info=OTHER) as other,
    ):
        await clients_event(panel)
        await clients_event(panel)  # (agent-y joined)
        async with Client(app.base + MCP, mode="legacy", client_info=AGENT) as client:
            session = (await clients_event(panel))["clients"][1]["id"]
            waiting = asyncio.ensure_future(client.call_tool("removeNodes", {"nodeIds": [1]}))
            _, call = await panel.event(clients=True)

            assert await post(app, "/disconnect", {"session": session}) == (
                200,
                {"disconnected": "agent-x"},
            )
            result = await asyncio.wait_for(waiting, 10)
            assert (result.is_error, result.content) == (
                True,
                [types.TextContent(text=f"Error: {refused}")],
            )
            events = [await panel.event(clients=True) for _ in range(3)]
            assert ("cancel", {"callId": call["callId"]}) in events
            listings = [data for kind, data in events if kind == "clients"]
            assert [[c["name"] for c in d["clients"]] for d in listings] == [
                ["agent-y", "agent-x"],  # (disconnected, its session not closed yet)
                ["agent-y"],
            ]
            assert listings[-1]["disconnected"] == ["agent-x"]
            with pytest.raises(MCPError) as ended:  # the session is closed
                await client.call_tool("getWorkflow", {})
            assert ended.value.error.message == "Session not found"

        with pytest.raises(BaseException) as again:  # a new connection of it is refused
            async with Client(app.base + MCP, mode="legacy", client_info=AGENT):
                pass
        assert the_error(again.value).error.message == refused
        assert (await other.list_tools()).tools  # another client goes on

        assert await post(app, "/allow", {"name": "agent-x"}) == (200, {"allowed": "agent-x"})
        assert (await clients_event(panel))["disconnected"] == []
        async with Client(app.base + MCP, mode="legacy", client_info=AGENT) as back:
            assert (await back.list_tools()).tools


async def test_a_2026_era_client_of_a_disconnected_name_is_refused_too(app: App) -> None:
    async with FakePanel(app, "tab-1", "a.json") as panel:
        await clients_event(panel)
        async with Client(app.base + MCP, mode="legacy", client_info=AGENT):
            session = (await clients_event(panel))["clients"][0]["id"]
            assert (await post(app, "/disconnect", {"session": session}))[0] == 200
        # (its first request, server/discover, is refused; so is the initialize it falls
        # back to)
        with pytest.raises(BaseException) as refused:
            async with Client(app.base + MCP, mode="auto", client_info=AGENT):
                pass
    assert the_error(refused.value).error.message == DISCONNECTED.format(name="agent-x")


async def test_disconnect_and_allow_refuse_what_they_cannot_use(app: App) -> None:
    assert (await post(app, "/disconnect", {"session": "nope"}))[0] == 404
    assert (await post(app, "/allow", {"name": "agent-x"}))[0] == 404
    status, said = await post(app, "/disconnect", {"session": 5})
    assert (status, said["error"]) == (
        400,
        "send an object with 'session' (a string of 1 to 200 characters)",
    )
