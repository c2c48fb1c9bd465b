"""The one registry of tools (the design card's name for it); it lives in
`core/tools/tool_registry.py`, where the core can use it without importing from above itself."""

from .core.tools.tool_registry import (
    CITATION_TOOLS,
    SERVER_TOOLS,
    TOOLS,
    get_tool,
    openai_tools,
    tools_for,
)
from .core.tools.tool_spec import GROUPS, ToolGroup, ToolRunner, ToolSpec

__all__ = [
    "CITATION_TOOLS",
    "GROUPS",
    "SERVER_TOOLS",
    "TOOLS",
    "ToolGroup",
    "ToolRunner",
    "ToolSpec",
    "get_tool",
    "openai_tools",
    "tools_for",
]
