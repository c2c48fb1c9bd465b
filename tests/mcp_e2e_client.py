"""For the browser tests (ui/e2e/mcp.test.mjs): one MCP tool call with the official client (the
Python SDK) over Streamable HTTP, as an agent makes it. Prints the result as one JSON line
(`{"isError": ..., "text": ...}`) and exits.

    python tests/mcp_e2e_client.py BASE_URL TOOL 'JSON_ARGUMENTS'
"""

from __future__ import annotations

import asyncio
import json
import sys

import mcp_types as types
from mcp import Client

AGENT = types.Implementation(name="e2e-agent", version="0.9")


async def call(base: str, tool: str, arguments: dict[str, object]) -> dict[str, object]:
    async with Client(base + "/api/assistant/mcp", mode="legacy", client_info=AGENT) as client:
        result = await client.call_tool(tool, arguments)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return {"isError": result.is_error, "text": text}


def main() -> None:
    base, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    print(json.dumps(asyncio.run(call(base.rstrip("/"), tool, arguments))), flush=True)


if __name__ == "__main__":
    main()
