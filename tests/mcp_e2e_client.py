"""For the browser tests (ui/e2e/mcp.test.mjs): the official MCP client (the Python SDK) over
Streamable HTTP, as an agent uses it. Each answer is one JSON line: `{"isError": ..., "text":
...}` for a tool call, `{"error": message}` for a request the server refused.

    python tests/mcp_e2e_client.py BASE_URL TOOL 'JSON_ARGUMENTS' [--token TOKEN]
        one call, then exit
    python tests/mcp_e2e_client.py BASE_URL --hold
        connect and print {"connected": true}; then one call per line read
        ('TOOL JSON_ARGUMENTS'); exit at EOF

With `--token`, every request carries it (`Authorization: Bearer`), as a client on another
machine sends the token made in Settings.
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

AGENT = types.Implementation(name="e2e-agent", version="0.9")


def say(answer: dict[str, Any]) -> None:
    print(json.dumps(answer), flush=True)


def refused(raised: BaseException) -> dict[str, Any]:
    while len(getattr(raised, "exceptions", ())) == 1:  # (the SDK's task groups)
        raised = raised.exceptions[0]  # type: ignore[attr-defined]
    error = getattr(raised, "error", None)
    return {"error": getattr(error, "message", None) or repr(raised)}


@contextlib.asynccontextmanager
async def connected(base: str, token: str | None) -> AsyncIterator[Client]:
    url = base + "/api/assistant/mcp"
    if token is None:
        async with Client(url, mode="legacy", client_info=AGENT) as client:
            yield client
        return
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="legacy", client_info=AGENT) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as exc:
        return refused(exc)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return {"isError": result.is_error, "text": text}


async def run(base: str, args: list[str]) -> None:
    token = args[3] if args[2:3] == ["--token"] else None
    try:
        async with connected(base, token) as client:
            if args[0] != "--hold":
                say(await call(client, args[0], json.loads(args[1])))
                return
            say({"connected": True})
            loop = asyncio.get_running_loop()
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                tool, _, arguments = line.strip().partition(" ")
                say(await call(client, tool, json.loads(arguments or "{}")))
    except Exception as exc:  # (refused at initialize)
        say(refused(exc))


def main() -> None:
    asyncio.run(run(sys.argv[1].rstrip("/"), sys.argv[2:]))


if __name__ == "__main__":
    main()
