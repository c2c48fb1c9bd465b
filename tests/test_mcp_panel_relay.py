"""The server's half of the panel relay (mcp_server/panel_relay.py): an MCP client's panel tool
call goes to a connected panel's stream and the panel's answer back to the client. The official
MCP client over a real socket; the panel's side is played by an HTTP client that speaks the
routes the panel uses (its own half: ui/src/runtime/mcpRelay.ts, tested in the browser suite)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import mcp_types as types
import pytest
from comfyui_assistant.core.base import DENIED, compact_json
from comfyui_assistant.mcp_server.panel_relay import (
    NO_SUCH_PANEL,
    PANEL_CLOSED,
    PANEL_META,
    TIMED_OUT,
    PanelRelay,
    RelayError,
)
from mcp import Client

from .conftest import App, start_app

MCP = "/api/assistant/mcp"
PANEL = MCP + "/panel"
AGENT = types.Implementation(name="test-agent", version="1.2")


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    started = await start_app(tmp_path / "data", {})
    yield started
    await started.close()


class FakePanel:
    """The routes a panel will use: its stream of calls, its answers, its state."""

    def __init__(self, app: App, panel_id: str, workflow: str) -> None:
        self.app, self.id, self.workflow = app, panel_id, workflow
        self.response: aiohttp.ClientResponse | None = None

    async def __aenter__(self) -> FakePanel:
        query = {"panel": self.id, "workflow": self.workflow}
        self.response = await self.app.session.get(self.app.base + PANEL, params=query)
        assert self.response.status == 200
        assert await self.response.content.readline() == b": connected\n"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.response is not None
        self.response.close()

    async def event(self, clients: bool = False) -> tuple[str, dict[str, Any]]:
        """The next event (keep-alive comments skipped; the list of connected MCP clients too,
        unless `clients`: test_mcp_clients.py)."""
        assert self.response is not None
        kind, data = "", ""
        while True:
            line = (await asyncio.wait_for(self.response.content.readline(), 10)).decode()
            if line.startswith("event: "):
                kind = line[7:].strip()
            elif line.startswith("data: "):
                data = line[6:].strip()
            elif line == "\n" and kind:
                if clients or kind != "clients":
                    return kind, json.loads(data)
                kind = ""

    async def answer(self, call_id: str, **outcome: Any) -> tuple[int, Any]:
        body = {"panel": self.id, "callId": call_id, **outcome}
        async with await self.app.post(PANEL + "/results", body) as response:
            return response.status, await response.json()

    async def state(self, active: bool) -> int:
        body = {"panel": self.id, "workflow": self.workflow, "active": active}
        async with await self.app.post(PANEL + "/state", body) as response:
            return response.status


async def test_a_call_runs_in_the_panel_and_its_answer_goes_back(app: App) -> None:
    output = {"ok": True, "nodeId": 7, "note": "added KSampler"}
    args = {"nodeType": "KSampler"}
    async with (
        FakePanel(app, "tab-1", "flux.json") as panel,
        Client(app.base + MCP, mode="legacy", client_info=AGENT) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("addNode", args))
        kind, event = await panel.event()
        assert (kind, event["name"], event["input"]) == ("call", "addNode", args)
        session = event["client"].pop("session")
        assert (event["client"], len(session)) == ({"name": "test-agent", "version": "1.2"}, 32)
        assert await panel.answer(event["callId"], output=output) == (200, {"accepted": True})
        result = await call
        # (an answer comes once: a second is refused)
        assert (await panel.answer(event["callId"], output=output))[0] == 404
    assert result.is_error is False
    assert result.content == [types.TextContent(text=compact_json(output))]


async def test_an_error_and_a_denial_are_said_as_in_a_chat(app: App) -> None:
    outcomes = ({"errorText": "no node 99"}, {"denied": "not this one"}, {"denied": ""})
    results = []
    async with (
        FakePanel(app, "tab-1", "a.json") as panel,
        Client(app.base + MCP, mode="legacy") as client,
    ):
        for outcome in outcomes:
            call = asyncio.ensure_future(client.call_tool("removeNodes", {"nodeIds": [99]}))
            _, event = await panel.event()
            assert (await panel.answer(event["callId"], **outcome))[0] == 200
            results.append(await call)
    assert [(r.is_error, r.content[0].text) for r in results] == [  # type: ignore[union-attr]
        (True, "Error: no node 99"),
        (True, f'{DENIED} The user said: "not this one"'),
        (True, DENIED),
    ]


async def test_the_active_panel_takes_a_call_unless_the_call_names_one(app: App) -> None:
    async with (
        FakePanel(app, "tab-a", "a.json") as a,
        FakePanel(app, "tab-b", "b.json") as b,
        Client(app.base + MCP, mode="legacy") as client,
    ):
        assert await a.state(active=True) == 200  # the user went back to tab a
        call = asyncio.ensure_future(client.call_tool("getWorkflow", {}))
        _, event = await a.event()
        await a.answer(event["callId"], output={"ok": True, "in": "a"})
        assert (await call).content[0].text == compact_json({"ok": True, "in": "a"})  # type: ignore[union-attr]

        named = {PANEL_META: "tab-b"}
        call = asyncio.ensure_future(client.call_tool("getWorkflow", {}, meta=named))
        _, event = await b.event()
        await b.answer(event["callId"], output={"ok": True, "in": "b"})
        assert (await call).content[0].text == compact_json({"ok": True, "in": "b"})  # type: ignore[union-attr]

        gone = await client.call_tool("getWorkflow", {}, meta={PANEL_META: "tab-z"})
    assert gone.is_error is True
    said = NO_SUCH_PANEL.format(wanted="tab-z", listed="tab-a, tab-b")
    assert gone.content[0].text == f"Error: {said}"  # type: ignore[union-attr]


async def test_a_panel_that_closes_fails_its_call(app: App) -> None:
    async with Client(app.base + MCP, mode="legacy") as client:
        async with FakePanel(app, "tab-1", "a.json") as panel:
            call = asyncio.ensure_future(client.call_tool("connectNodes", {}))
            await panel.event()
        result = await asyncio.wait_for(call, 10)
    assert result.is_error is True
    expected = "Error: " + PANEL_CLOSED.format(name="connectNodes")
    assert result.content[0].text == expected  # type: ignore[union-attr]


async def test_the_panel_routes_refuse_what_they_cannot_use(app: App) -> None:
    for body, status in (
        ({"panel": "tab-1", "callId": "mcp_x", "output": 1}, 404),
        ({"panel": "../x", "callId": "mcp_x", "output": 1}, 400),
        ({"panel": "tab-1"}, 400),
    ):
        async with await app.post(PANEL + "/results", body) as response:
            assert response.status == status, await response.text()
    async with await app.post(PANEL + "/state", {"panel": "tab-9", "active": True}) as response:
        assert response.status == 404
    async with app.session.get(app.base + PANEL, params={"panel": "x" * 65}) as response:
        assert response.status == 400
    async with (
        FakePanel(app, "tab-1", "a.json") as panel,
        Client(app.base + MCP, mode="legacy") as client,
    ):
        call = asyncio.ensure_future(client.call_tool("getWorkflow", {}))
        _, event = await panel.event()
        status, said = await panel.answer(event["callId"], result="?")
        assert (status, said["error"]) == (
            400,
            "send one of 'output', 'errorText' (a string), 'denied' (a string)",
        )
        await panel.answer(event["callId"], output={"ok": True})  # (still open after that)
        assert (await call).is_error is False


async def test_a_waiting_call_reports_progress_gives_up_and_tells_the_panel() -> None:
    relay = PanelRelay(progress_every=0.05)
    panel = relay.connect("tab-1", "default", "a.json")
    waited: list[float] = []

    async def waiting(seconds: float) -> None:
        waited.append(seconds)

    with pytest.raises(RelayError) as caught:
        await relay.call(panel, "queueWorkflow", {}, {"name": "t"}, waiting, limit=0.3)
    assert str(caught.value) == TIMED_OUT.format(name="queueWorkflow", seconds=0.3)
    assert len(waited) >= 4 and waited == sorted(waited)
    kind, call = panel.events.get_nowait()
    assert kind == "call"
    assert panel.events.get_nowait() == ("cancel", {"callId": call["callId"]})
    assert panel.pending == {}


async def test_a_client_that_leaves_mid_call_ends_the_panels_call(app: App) -> None:
    async with FakePanel(app, "tab-1", "a.json") as panel:
        client = Client(app.base + MCP, mode="legacy")
        await client.__aenter__()
        call = asyncio.ensure_future(client.call_tool("queueWorkflow", {}))
        _, event = await panel.event()
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
        await client.__aexit__(None, None, None)
        assert await panel.event() == ("cancel", {"callId": event["callId"]})
        assert (await panel.answer(event["callId"], output={"ok": True}))[0] == 404


async def test_a_client_killed_mid_call_ends_only_its_own_panel_call(app: App) -> None:
    """Its process killed (no DELETE, no cancel: the socket closes): the server keeps no events
    to resume the stream from, so the panel's call ends; another client's call goes on."""
    script = str(Path(__file__).with_name("mcp_e2e_client.py"))
    async with (
        FakePanel(app, "tab-1", "a.json") as panel,
        Client(app.base + MCP, mode="legacy", client_info=AGENT) as other,
    ):
        kept = asyncio.ensure_future(other.call_tool("getWorkflow", {}))
        _, kept_event = await panel.event()
        leaver = await asyncio.create_subprocess_exec(
            sys.executable,
            script,
            app.base,
            "removeNodes",
            '{"nodeIds": ["3"]}',
            stdout=asyncio.subprocess.PIPE,
        )
        _, event = await panel.event()
        assert event["client"]["name"] == "e2e-agent"
        leaver.kill()
        assert await leaver.wait() != 0
        assert await panel.event() == ("cancel", {"callId": event["callId"]})
        assert (await panel.answer(event["callId"], output={"ok": True}))[0] == 404
        assert (await panel.answer(kept_event["callId"], output={"ok": True}))[0] == 200
        result = await asyncio.wait_for(kept, 10)
    assert result.content[0].text == compact_json({"ok": True})  # type: ignore[union-attr]


async def test_two_clients_at_once_each_get_their_own_answer(app: App) -> None:
    one = types.Implementation(name="agent-one", version="1")
    two = types.Implementation(name="agent-two", version="2")
    async with (
        FakePanel(app, "tab-1", "a.json") as panel,
        Client(app.base + MCP, mode="legacy", client_info=one) as first,
        Client(app.base + MCP, mode="legacy", client_info=two) as second,
    ):
        calls = [
            asyncio.ensure_future(first.call_tool("getWorkflow", {"detail": "summary"})),
            asyncio.ensure_future(second.call_tool("getWorkflow", {"detail": "full"})),
        ]
        events = [(await panel.event())[1], (await panel.event())[1]]
        by_client = {e["client"]["name"]: e for e in events}
        # answered in the other order than asked
        for name in ("agent-two", "agent-one"):
            event = by_client[name]
            await panel.answer(event["callId"], output={"for": name, **event["input"]})
        results = await asyncio.gather(*calls)
    assert [r.content[0].text for r in results] == [  # type: ignore[union-attr]
        compact_json({"for": "agent-one", "detail": "summary"}),
        compact_json({"for": "agent-two", "detail": "full"}),
    ]
