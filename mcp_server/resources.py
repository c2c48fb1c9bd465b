"""MCP resources: what the lookup tools read, to attach without a tool call, and the connected
panels (panel_relay.py), each as the JSON the tool (or the relay) gives.

| URI | what |
| --- | --- |
| `comfyui-assistant://panels` | the user's connected panels: id, workflow, which is active |
| `comfyui-assistant://models` | the installed models, by folder (getAvailableModels) |
| `comfyui-assistant://models/{folder}` | one folder's models |
| `comfyui-assistant://node/{type}` | a node type's definition (getNodeDefinition) |

The open workflow as compact text (getWorkflow's) is the panel's to give: workflow.py.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..core.base import compact_json
from ..core.tools import ToolFailure, server_tool_outputs
from .panel_relay import PanelRelay
from .tools import ServerParts, tool_context

SCHEME = "comfyui-assistant://"
PANELS = SCHEME + "panels"
MODELS = SCHEME + "models"
JSON = "application/json"


def listed() -> list[types.Resource]:
    return [
        types.Resource(
            uri=PANELS,
            name="panels",
            description="The ComfyUI panels connected to take this server's panel tool calls.",
            mime_type=JSON,
        ),
        types.Resource(
            uri=MODELS,
            name="models",
            description="The installed models, by folder.",
            mime_type=JSON,
        ),
    ]


def templates() -> list[types.ResourceTemplate]:
    return [
        types.ResourceTemplate(
            uri_template=MODELS + "/{folder}",
            name="models-in-folder",
            description="The installed models of one folder (e.g. checkpoints, loras).",
            mime_type=JSON,
        ),
        types.ResourceTemplate(
            uri_template=SCHEME + "node/{type}",
            name="node-definition",
            description="A node type's definition: inputs, outputs, widgets (type: its exact "
            "class name, e.g. KSampler, percent-encoded).",
            mime_type=JSON,
        ),
    ]


def node_uri(node_type: str) -> str:
    return SCHEME + "node/" + quote(node_type, safe="")


async def _tool_json(tool: str, args: dict[str, Any], parts: ServerParts, uri: str) -> str:
    value: Any = None
    try:
        async for output in server_tool_outputs(tool, args, tool_context(parts, "")):
            value = output.value
    except ToolFailure as exc:
        raise MCPError(types.INVALID_PARAMS, f"{uri[:200]}: {exc}") from None
    return compact_json(value)


async def read(
    uri: str, parts: ServerParts, relay: PanelRelay, user: str
) -> types.ReadResourceResult:
    if uri == PANELS:
        text = compact_json({"panels": relay.listed(user)})
    elif uri == MODELS:
        text = await _tool_json("getAvailableModels", {}, parts, uri)
    elif uri.startswith(MODELS + "/"):
        folder = unquote(uri[len(MODELS) + 1 :])
        text = await _tool_json("getAvailableModels", {"category": folder}, parts, uri)
    elif uri.startswith(SCHEME + "node/"):
        node_type = unquote(uri[len(SCHEME) + len("node/") :])
        text = await _tool_json("getNodeDefinition", {"nodeType": node_type}, parts, uri)
    else:
        raise MCPError(types.INVALID_PARAMS, f"There is no resource {uri[:200]!r}.")
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)]
    )
