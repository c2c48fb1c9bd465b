"""The assistant as an MCP server (issue 41): an outside agent (Claude, Cursor, any MCP client)
uses the assistant's tools, while the user stays in charge.

| module | what |
| --- | --- |
| `endpoint.py` | Streamable HTTP at `/api/assistant/mcp`, through the SDK's session manager |
| `asgi.py` | the bridge from our aiohttp request to the SDK's ASGI transport |
| `server.py` | the SDK's low-level server: tools/list, tools/call |
| `tools.py` | the registry's tools as MCP tools, and how a call runs |
| `access.py` | who may connect (loopback, or a token from Settings) and as which user |
| `limits.py` | at most 32 tool calls a minute |
| `stdio.py` | `python -m comfyui_assistant mcp`: stdio, relayed to a running ComfyUI's endpoint |

Built so far: both transports, the registry's tools (the server tools run here, as in a chat),
the access rules and the rate limit. Not built yet: relaying panel tools to the open panel
(and with it approvals, undo and checkpoints), resources and prompts. Until then a panel tool,
or a tool that asks the user first, answers with a tool error that says it did not run.
"""
