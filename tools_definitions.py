"""The one registry of tools (the design card's name for it); it lives in
`core/tools/tool_registry.py`, where the core can use it without importing from above itself."""

from .core.tools import (
    CITATION_TOOLS,
    GROUPS,
    SERVER_TOOLS,
    TOOLS,
    ToolGroup,
    ToolRunner,
    ToolSpec,
    get_tool,
    openai_tools,
    tools_for,
)

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
