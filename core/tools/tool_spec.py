"""What the registry knows about one tool (`ToolSpec`) and the groups the system prompt lists
tools in. A spec is checked when it is made, so a malformed entry fails at import, not at the
model. The registry itself is `tool_registry.py`."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from .server_tools import ToolContext, ToolOutput

Handler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
# A server tool that reports as it works (its outputs: progress, then the result).
StreamingHandler = Callable[[dict[str, Any], ToolContext], AsyncIterator[ToolOutput]]


@dataclass(frozen=True)
class ToolGroup:
    title: str
    note: str  # one line for the model: how to use the group's tools


GROUPS: Mapping[str, ToolGroup] = MappingProxyType(
    {
        "graph": ToolGroup(
            "Graph tools",
            "run in the user's browser on the open workflow; each edit can be undone with Ctrl+Z.",
        ),
        "lookup": ToolGroup(
            "Lookup tools",
            "answer from what this ComfyUI has installed; trust them over your memory.",
        ),
        "skills": ToolGroup(
            "Skill tools",
            "load procedures on demand; save a procedure only when the user asks you to remember.",
        ),
        "memory": ToolGroup(
            "Memory tools",
            "bring back a shortened result, an instruction section left out, or what was said "
            "earlier in this conversation.",
        ),
        "installs": ToolGroup(
            "Install tools",
            "install what a workflow lacks through ComfyUI-Manager; each asks the user first and "
            "Ctrl+Z does not undo it.",
        ),
        "delegate": ToolGroup(
            "Delegation",
            "hands a research task (several lookups whose details will not matter later) to a "
            "helper that returns only its answer; not for one lookup, never for graph edits.",
        ),
    }
)

ToolRunner = Literal["panel", "server"]
# The smallest prompt profile (`prompt_profile.py`) that offers a tool: "small" tools are
# offered at every window, "medium" ones from about 8K, "full" ones from about 16K.
Tier = Literal["small", "medium", "full"]
TIERS: tuple[Tier, ...] = ("small", "medium", "full")

_NAME_RE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_RUNNERS: frozenset[str] = frozenset({"panel", "server"})


def _freeze(value: Any) -> Any:
    """Read-only copy of a JSON value: dicts become mapping proxies, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


# Left out of the compact form: words for the model, and lower bounds on lengths and counts that
# a model rarely breaks (a call that does gets the full schema's error: the panel and the server
# check the full one). Issue 40 made room so for the template tools at 4K.
_BRIEF_DROPS = frozenset({"description", "default", "minLength", "minItems", "minProperties"})


def _brief_schema(schema: Any) -> Any:
    """A JSON Schema in its compact form: without "description" texts, defaults, lower bounds
    on lengths and counts, `"additionalProperties": false` and empty "required" lists (the
    shapes, types, choices and numeric ranges stay; a default may differ by profile, e.g. the
    number of search results)."""
    if not isinstance(schema, Mapping):
        return schema
    out = {}
    for key, value in schema.items():
        if key in _BRIEF_DROPS or (key, value) in (
            ("additionalProperties", False),
            ("required", ()),
        ):
            continue
        if key == "properties":  # property names, each a schema
            out[key] = {name: _brief_schema(sub) for name, sub in value.items()}
        else:
            out[key] = _brief_schema(value)
    return out


def _thaw(value: Any) -> Any:
    """Fresh, mutable, JSON-serialisable copy of a frozen value."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    # Frozen in __post_init__, so callers can neither mutate the registry nor hash this field.
    parameters: Mapping[str, Any] = field(hash=False)
    runs: ToolRunner
    # Argument names that identify a call in a one-line digest, e.g. "addNode KSampler".
    digest_args: tuple[str, ...] = ()
    # Whether a digest names the files found in the result (walking it for them). Off for
    # tools whose results are graphs, graph edits, node definitions or documents: never
    # outputs (and some large).
    digest_files: bool = True
    # How a digest shows the call when all `digest_args` are there (a str.format pattern, one
    # {} per argument), if not "a b c".
    digest_format: str | None = None
    # Where the system prompt lists it (a key of GROUPS).
    group: str = ""
    # The handler of a server tool (None for a panel tool), or for a server tool that reports
    # its progress, its streaming handler instead.
    handler: Handler | None = field(default=None, compare=False)
    streaming: StreamingHandler | None = field(default=None, compare=False)
    # A server tool that changes what the user keeps (their skills): it runs only after the
    # user allows the call (the AI SDK's approval parts; `asks` says what it will do).
    asks: Callable[[dict[str, Any]], str] | None = field(default=None, compare=False)
    # One sentence for the compact profiles, where the definition goes without its
    # parameters' descriptions: what the tool does and anything the model must know to call it.
    brief: str = ""
    # The smallest prompt profile that offers it (see Tier).
    tier: Tier = "full"
    # Its results are sources the answer should name (documentation, searches).
    cites: bool = False
    # It changes the workflow graph: the panel saves a checkpoint of the graph before a turn's
    # first such call (core/store/checkpoints.py), which "Rewind to here" restores.
    edits_graph: bool = False

    def __post_init__(self) -> None:
        # Checked at import time so that a malformed new entry fails loudly, not at the LLM.
        if not _NAME_RE.fullmatch(self.name):
            raise ValueError(f"invalid tool name {self.name!r}")
        if self.runs not in _RUNNERS:
            raise ValueError(f"{self.name}: runs must be 'panel' or 'server', not {self.runs!r}")
        if self.parameters.get("type") != "object":
            raise ValueError(f"{self.name}: parameters must be an object schema")
        props = self.parameters.get("properties", {})
        named = (*self.digest_args, *self.parameters.get("required", ()))
        unknown = [a for a in named if a not in props]
        if unknown:
            raise ValueError(f"{self.name}: undeclared argument(s) {unknown}")
        if self.group not in GROUPS:
            raise ValueError(f"{self.name}: group must be one of {sorted(GROUPS)}")
        if self.tier not in TIERS:
            raise ValueError(f"{self.name}: tier must be one of {TIERS}")
        if self.edits_graph and self.runs != "panel":
            raise ValueError(f"{self.name}: only a panel tool edits the graph")
        if not self.brief.strip():
            raise ValueError(f"{self.name}: a brief description is needed (compact profiles)")
        handlers = (self.handler is not None) + (self.streaming is not None)
        if handlers != (self.runs == "server"):
            raise ValueError(f"{self.name}: a server tool needs one handler, a panel tool none")
        object.__setattr__(self, "parameters", _freeze(self.parameters))
        object.__setattr__(self, "digest_args", tuple(self.digest_args))

    def openai_tool(self, brief: bool = False) -> dict[str, Any]:
        """This tool in the OpenAI chat-completions `tools` format; `brief`: the compact form
        (the brief description, `_brief_schema`: about half the tokens). The arguments the
        model may send are the same in both forms."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.brief if brief else self.description,
                "parameters": _thaw(_brief_schema(self.parameters) if brief else self.parameters),
            },
        }

    def as_json(self) -> dict[str, Any]:
        """This tool as served to the browser panel."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": _thaw(self.parameters),
            "runs": self.runs,
        }
