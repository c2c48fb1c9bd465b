"""Who may use the MCP endpoint: a connection from another address needs a token made in
Settings (shown once, stored hashed, revocable); every user gets at most 32 tool calls a minute.
The server listens on this machine's network address, so the requests come from a
non-loopback address over a real socket."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.mcp_server.access import BAD_TOKEN, NEEDS_TOKEN, TOKEN_PREFIX
from comfyui_assistant.mcp_server.limits import CALLS_PER_MINUTE, CallRate, over_limit_message
from comfyui_assistant.routes.guard import HostPolicy
from comfyui_assistant.standalone import create_app
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from . import e2e_harness
from .conftest import App, start_app
from .test_mcp_http import ACCEPT, INIT

MCP = "/api/assistant/mcp"
TOKENS = MCP + "/tokens"


def network_address() -> str:
    """This machine's address on its network (the one a packet out would leave from)."""
    address = e2e_harness.network_address()
    assert not address.startswith("127."), "this test needs a network interface besides lo"
    return address


@pytest.fixture
async def remote(tmp_path: Path) -> AsyncIterator[App]:
    """The standalone server on the network address: every request to it is non-loopback."""
    host = network_address()
    options = ServiceOptions(data_dir=tmp_path / "data", environ={"COMFY_ASSISTANT_OFFLINE": "1"})
    app = create_app(options, HostPolicy.listening_on([host]))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    served = App(app, runner, f"http://{host}:{port}")
    yield served
    await served.close()


async def refusal(app: App, headers: dict[str, str]) -> tuple[int, Any, str | None]:
    async with await app.post(MCP, INIT, headers={**ACCEPT, **headers}) as response:
        return response.status, await response.json(), response.headers.get("WWW-Authenticate")


async def tools_with(url: str, token: str) -> list[str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_another_machine_needs_a_token_and_a_revoked_one_is_refused(
    remote: App, tmp_path: Path
) -> None:
    assert await refusal(remote, {}) == (401, {"error": NEEDS_TOKEN}, "Bearer")
    assert await refusal(remote, {"Authorization": "Bearer made-up"}) == (
        401,
        {"error": BAD_TOKEN},
        "Bearer",
    )

    async with await remote.post(TOKENS, {"name": "laptop"}) as response:
        assert response.status == 201
        assert response.headers["Cache-Control"] == "no-store"
        made = await response.json()
    token = made.pop("token")
    assert token.startswith(TOKEN_PREFIX) and len(token) > 40
    assert set(made) == {"id", "name", "created", "lastUsed"} and made["name"] == "laptop"
    assert made["lastUsed"] is None
    async with remote.session.get(remote.base + TOKENS) as response:
        assert await response.json() == {"tokens": [made]}  # (never the token again)

    assert "searchInstalledNodes" in await tools_with(remote.base + MCP, token)
    async with remote.session.get(remote.base + TOKENS) as response:
        [listed] = (await response.json())["tokens"]
    # when it was last used, to the minute (written at most once a minute)
    used = datetime.datetime.fromisoformat(listed.pop("lastUsed"))
    assert listed == {k: v for k, v in made.items() if k != "lastUsed"}
    now = datetime.datetime.now(datetime.timezone.utc)
    assert used.second == 0 and datetime.timedelta(0) <= now - used < datetime.timedelta(minutes=2)

    async with remote.session.delete(f"{remote.base}{TOKENS}/{made['id']}") as response:
        assert (response.status, await response.json()) == (200, {"revoked": made["id"]})
    assert await refusal(remote, {"Authorization": f"Bearer {token}"}) == (
        401,
        {"error": BAD_TOKEN},
        "Bearer",
    )
    async with remote.session.delete(f"{remote.base}{TOKENS}/{made['id']}") as response:
        assert response.status == 404
    # only a hash was ever stored
    stored = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert token.encode() not in stored


async def test_a_token_needs_a_name(remote: App) -> None:
    for body, said in (
        ({}, "send an object with the token's 'name' (a string)"),
        ({"name": "  "}, "give the token a name of 1 to 80 characters"),
    ):
        async with await remote.post(TOKENS, body) as response:
            assert (response.status, (await response.json())["error"]) == (400, said)


async def test_at_most_32_tool_calls_a_minute(tmp_path: Path) -> None:
    app = await start_app(tmp_path / "data", {})
    try:
        async with Client(app.base + MCP, mode="legacy") as client:
            results = [
                await client.call_tool("listSystemSkills", {}) for _ in range(CALLS_PER_MINUTE + 1)
            ]
    finally:
        await app.close()
    assert [r.is_error for r in results] == [False] * CALLS_PER_MINUTE + [True]
    said = results[-1].content[0].text  # type: ignore[union-attr]
    assert said.startswith(
        "Error: Too many tool calls: MCP clients may make at most 32 a minute. This call did "
        "not run; try again in "
    )


def test_the_window_slides() -> None:
    now = [0.0]
    rate = CallRate(limit=2, window=60.0, clock=lambda: now[0])
    assert [rate.take(), rate.take()] == [None, None]
    now[0] = 50.0
    assert rate.take() == 10.0  # (not counted)
    now[0] = 60.0
    assert rate.take() is None  # the first two left the window: one counted now
    assert rate.take() is None
    assert rate.take() == 60.0
    assert over_limit_message(0.2).endswith("try again in 1 s.")


async def test_a_session_answers_only_the_caller_that_opened_it(remote: App) -> None:
    """A session opened with one token is not found with another (the SDK's binding)."""
    tokens = []
    for name in ("one", "two"):
        async with await remote.post(TOKENS, {"name": name}) as response:
            tokens.append((await response.json())["token"])
    headers = {**ACCEPT, "Authorization": f"Bearer {tokens[0]}"}
    async with await remote.post(MCP, INIT, headers=headers) as response:
        assert response.status == 200
        session = response.headers["Mcp-Session-Id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for token, status in ((tokens[1], 404), (tokens[0], 200)):
        headers = {
            **ACCEPT,
            "Authorization": f"Bearer {token}",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": LATEST_HANDSHAKE_VERSION,
        }
        async with await remote.post(MCP, ping, headers=headers) as response:
            assert response.status == status, await response.text()
