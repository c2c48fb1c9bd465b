"""For the browser tests (ui/e2e/mcp.test.mjs): one MCP tool call with the official client (the
Python SDK) over Streamable HTTP, as an agent makes it. Prints the result as one JSON line
(`{"isError": ..., "text": ...}`) and exits.

    python tests/mcp_e2e_client.py BASE_URL TOOL 'JSON_ARGUMENTS' [--token TOKEN]

With `--token`, every request carries it (`Authorization: Bearer`), as a client on another
machine sends the token made in Settings.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

AGENT = types.Implementation(name="e2e-agent", version="0.9")


async def call(
    base: str, tool: str, arguments: dict[str, object], token: str | None = None
) -> dict[str, object]:
    url = base + "/api/assistant/mcp"
    if token is None:
        async with Client(url, mode="legacy", client_info=AGENT) as client:
            result = await client.call_tool(tool, arguments)
    else:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(url, http_client=http)
        async with http, Client(transport, mode="legacy", client_info=AGENT) as client:
            result = await client.call_tool(tool, arguments)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return {"isError": result.is_error, "text": text}


def main() -> None:
    base, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    token = sys.argv[5] if sys.argv[4:5] == ["--token"] else None
    result = asyncio.run(call(base.rstrip("/"), tool, arguments, token))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
