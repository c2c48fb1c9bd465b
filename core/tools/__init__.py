"""The tools: each declared once (the registry, generating the panel's schemas), the server tools'
handlers (they get the thread's store through their ToolContext, never by import), a tool call
in one line (digests), results cut to size, and documents to cite.

May import: base, knowledge.
"""

from .digests import DIGEST_PREFIX, digest_tool_part, digest_tool_result, one_line
from .documents import Citations, cite_note, document, documents_of, next_citation_id
from .json_cut import cut_json
from .server_tools import LookBack, ToolContext, ToolFailure, ToolOutput
from .tool_registry import (
    CITATION_TOOLS,
    SERVER_TOOLS,
    TOOLS,
    get_tool,
    openai_tools,
    server_tool_outputs,
    tools_for,
)
from .tool_spec import GROUPS, TIERS, Tier, ToolGroup, ToolRunner, ToolSpec

__all__ = [
    "CITATION_TOOLS",
    "DIGEST_PREFIX",
    "GROUPS",
    "SERVER_TOOLS",
    "TIERS",
    "TOOLS",
    "Citations",
    "LookBack",
    "Tier",
    "ToolContext",
    "ToolFailure",
    "ToolGroup",
    "ToolOutput",
    "ToolRunner",
    "ToolSpec",
    "cite_note",
    "cut_json",
    "digest_tool_part",
    "digest_tool_result",
    "document",
    "documents_of",
    "get_tool",
    "next_citation_id",
    "one_line",
    "openai_tools",
    "server_tool_outputs",
    "tools_for",
]
