"""For the browser tests (ui/e2e/mcp.test.mjs): the official MCP client (the Python SDK) over
Streamable HTTP, as an agent uses it. Each answer is one JSON line: `{"isError": ..., "text":
...}` for a tool call, `{"error": message}` for a request the server refused.

    python tests/mcp_e2e_client.py BASE_URL TOOL 'JSON_ARGUMENTS' [--token TOKEN] [--name NAME]
        [--panel PANEL]
        one call, then exit
    python tests/mcp_e2e_client.py BASE_URL --hold [--name NAME]
        connect and print {"connected": true}; then one call per line read
        ('TOOL JSON_ARGUMENTS'); exit at EOF

With `--token`, every request carries it (`Authorization: Bearer`), as a client on another
machine sends the token made in Settings. With `--name`, the client says that name in its
`initialize` (two clients at once), else "e2e-agent"; its version is always 0.9. With
`--panel`, each call names the panel that runs it (the page's id, as a client picks one of
several open tabs), else the server picks the one the user was last active in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

AGENT_NAME, AGENT_VERSION = "e2e-agent", "0.9"
PANEL_META = "comfyui-assistant/panel"  # (the `_meta` key a call names its panel with, as an
# agent sends it: mcp_server/panel_relay.py)


def say(answer: dict[str, Any]) -> None:
    print(json.dumps(answer), flush=True)


def refused(raised: BaseException) -> dict[str, Any]:
    while len(getattr(raised, "exceptions", ())) == 1:  # (the SDK's task groups)
        raised = raised.exceptions[0]  # type: ignore[attr-defined]
    error = getattr(raised, "error", None)
    return {"error": getattr(error, "message", None) or repr(raised)}


@contextlib.asynccontextmanager
async def connected(base: str, token: str | None, name: str) -> AsyncIterator[Client]:
    url = base + "/api/assistant/mcp"
    agent = types.Implementation(name=name, version=AGENT_VERSION)
    if token is None:
        async with Client(url, mode="legacy", client_info=agent) as client:
            yield client
        return
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="legacy", client_info=agent) as client:
        yield client


async def call(
    client: Client, tool: str, arguments: dict[str, Any], panel: str | None
) -> dict[str, Any]:
    meta = {PANEL_META: panel} if panel else None
    try:
        result = await client.call_tool(tool, arguments, meta=meta)
    except Exception as exc:
        return refused(exc)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return {"isError": result.is_error, "text": text}


def options(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The positional arguments, and the `--token`/`--name`/`--panel` options' values."""
    rest: list[str] = []
    named: dict[str, str] = {}
    words = iter(args)
    for word in words:
        if word in ("--token", "--name", "--panel"):
            named[word[2:]] = next(words)
        else:
            rest.append(word)
    return rest, named


async def run(base: str, argv: list[str]) -> None:
    args, named = options(argv)
    try:
        async with connected(base, named.get("token"), named.get("name", AGENT_NAME)) as client:
            if args[0] != "--hold":
                say(await call(client, args[0], json.loads(args[1]), named.get("panel")))
                return
            say({"connected": True})
            loop = asyncio.get_running_loop()
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                tool, _, arguments = line.strip().partition(" ")
                say(await call(client, tool, json.loads(arguments or "{}"), named.get("panel")))
    except Exception as exc:  # (refused at initialize)
        say(refused(exc))


def main() -> None:
    asyncio.run(run(sys.argv[1].rstrip("/"), sys.argv[2:]))


if __name__ == "__main__":
    main()
