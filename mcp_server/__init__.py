"""The assistant as an MCP server (issue 41): an outside agent (Claude, Cursor, any MCP client)
uses the assistant's tools, while the user stays in charge.

| module | what |
| --- | --- |
| `endpoint.py` | Streamable HTTP at `/api/assistant/mcp`, through the SDK's session manager |
| `asgi.py` | the bridge from our aiohttp request to the SDK's ASGI transport |
| `server.py` | the SDK's low-level server: tools/list, tools/call, prompts/list, prompts/get |
| `prompts.py` | skills as MCP prompts |
| `resources.py` | the models, a node definition, the connected panels, as MCP resources |
| `tools.py` | the registry's tools as MCP tools, and how a call runs |
| `access.py` | who may connect (loopback, or a token from Settings) and as which user |
| `limits.py` | at most 32 tool calls a minute |
| `workflow.py` | the open workflow as a resource (read through the panel), and its changes |
| `clients.py` | the connected clients as the panels list them, and the panel's Disconnect |
| `panel_relay.py` | panel tools relayed to the user's open panel: the design, the server's half |
| `panel_routes.py` | the panel's routes of the relay: its stream of calls, its answers, its state |
| `stdio.py` | `python -m comfyui_assistant mcp`: stdio, relayed to a running ComfyUI's endpoint |

Built so far: both transports, the registry's tools (the server tools run here, as in a chat;
those that ask the user first ask in the panel, then run here on Allow), the access rules, the
rate limit, skills as prompts, resources (the open workflow, read through the panel, with
change notifications to the sessions that subscribed; the models, a node definition, the
connected panels), the relay to the panel (its half: ui/src/runtime/mcpRelay.ts, which runs a
call as a chat's, with the approval card marked with the client's name, and lists it under the
"external agent" line), and the connected clients (clients.py: the line shows a client from its
`initialize`; its Disconnect ends the client's session and refuses it until the user allows it
again).
"""
