"""The registry: every tool the assistant's model can call, each declared once, as a `ToolSpec`
(`tool_spec.py`): its name, a description written for the model, the JSON Schema of its
arguments, where it runs ("panel": in the browser, against ComfyUI's `window.app` graph;
"server": here, by its handler), the group the system prompt lists it in, whether it is left
out first on a small window, whether its results are sources to cite, and how a digest shows it.

Adding a server tool: one spec here and its handler in `server_tools.py`. Adding a panel tool:
one spec here, its implementation in `ui/src/tools/`, one line in that folder's table (the
panel's schemas are generated from this file: `scripts/gen_panel_types.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from . import server_tools, template_tools
from .tool_spec import ToolRunner, ToolSpec


def _args(required: Iterable[str] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


# A bare type list rather than oneOf: small local models follow it more reliably.
_SLOT: dict[str, Any] = {"type": ["string", "integer"]}
# 5: node 5 of the graph the user views; "12:5": node 5 inside subgraph node 12; "root:5".
_NODE_ID: dict[str, Any] = {"type": ["integer", "string"]}
_GRAPH: dict[str, Any] = {
    "type": "string",
    "description": 'Subgraph node id to work inside, or "root". Default: the graph the user views.',
}
_WIDGET_VALUE: dict[str, Any] = {"type": ["string", "number", "boolean"]}
_SLUG: dict[str, Any] = {"type": "string", "description": "Skill slug, e.g. txt2img."}
_EXACT = "Exact node type (class name), e.g. KSampler."
_QUERY: dict[str, Any] = {"type": "string", "minLength": 1, "description": "Words to search for."}

# The seven graph tools cost about 1,300 cl100k tokens as json.dumps(openai_tools()); the two
# install tools about 300 more (tests/test_tools_definitions.py).
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="getWorkflow",
        brief="Read the graph the user views (detail: summary, compact or full).",
        tier="small",
        description="Read the graph the user views (every tool works there: id 5 is its node "
        '5); again before editing if it may have changed. "12:5": node 5 inside subgraph node '
        '12; "12:in"/"12:out" its inputs/outputs; "root:5": root node 5.',
        parameters=_args(
            detail={
                "type": "string",
                "enum": ["summary", "compact", "full"],
                "default": "compact",
                "description": "summary: counts. compact: ids, types, links, non-default widget "
                "values. full: all widget values, positions.",
            },
            nodeIds={
                "type": "array",
                "items": _NODE_ID,
                "minItems": 1,
                "description": "Only these nodes (default: all).",
            },
            subgraph=_GRAPH,
        ),
        runs="panel",
        group="graph",
        digest_args=("detail",),
        digest_files=False,
    ),
    ToolSpec(
        name="addNode",
        brief="Add a node by exact class name (e.g. KSampler); returns its id.",
        tier="small",
        description="Add one node; returns its id. nodeType must be an exact registered class "
        "name (e.g. KSampler); if unsure it exists, search the node types first.",
        parameters=_args(
            ["nodeType"],
            nodeType={"type": "string", "minLength": 1, "description": "Exact class name."},
            title={"type": "string", "description": "Display title."},
            widgets={
                "type": "object",
                "additionalProperties": _WIDGET_VALUE,
                "description": 'Widget name -> value, e.g. {"steps": 30}.',
            },
            nearNodeId={**_NODE_ID, "description": "Place the new node next to this node."},
            position={
                "type": "object",
                "properties": {
                    "x": {"type": "number", "description": "Canvas x."},
                    "y": {"type": "number", "description": "Canvas y."},
                },
                "required": ["x", "y"],
                "additionalProperties": False,
                "description": "Exact canvas position.",
            },
            subgraph=_GRAPH,
        ),
        runs="panel",
        group="graph",
        edits_graph=True,
        digest_args=("nodeType",),
        digest_files=False,
    ),
    ToolSpec(
        name="removeNodes",
        brief="Remove nodes by id, with their links.",
        tier="small",
        description="Remove nodes by id, with all their links.",
        parameters=_args(
            ["nodeIds"],
            nodeIds={
                "type": "array",
                "items": _NODE_ID,
                "minItems": 1,
                "description": "Ids of the nodes to remove.",
            },
        ),
        runs="panel",
        group="graph",
        edits_graph=True,
        digest_args=("nodeIds",),
        digest_files=False,
    ),
    ToolSpec(
        name="connectNodes",
        brief="Link an output to an input (slot name or 0-based index); replaces its old link.",
        tier="small",
        description="Link one node's output to another node's input. Slot types must match "
        "(e.g. MODEL to MODEL). An input takes one link: an existing link into it is replaced. "
        "An output may feed many inputs.",
        parameters=_args(
            ["fromNodeId", "fromOutput", "toNodeId", "toInput"],
            fromNodeId={**_NODE_ID, "description": "Source node id."},
            fromOutput={**_SLOT, "description": 'Output name (e.g. "LATENT") or 0-based index.'},
            toNodeId={**_NODE_ID, "description": "Target node id."},
            toInput={**_SLOT, "description": 'Input name (e.g. "samples") or 0-based index.'},
        ),
        runs="panel",
        group="graph",
        edits_graph=True,
        digest_format="{}.{} -> {}.{}",
        digest_args=("fromNodeId", "fromOutput", "toNodeId", "toInput"),
        digest_files=False,
    ),
    ToolSpec(
        name="setWidgetValues",
        brief="Set widget values on one node; a wrong value fails with the choices.",
        tier="small",
        description="Set widget values on one node. Values are checked against the node "
        "definition (combo choices, number min/max); an invalid value fails with the valid "
        "choices listed.",
        parameters=_args(
            ["nodeId", "values"],
            nodeId={**_NODE_ID, "description": "Node id."},
            values={
                "type": "object",
                "additionalProperties": _WIDGET_VALUE,
                "minProperties": 1,
                "description": 'Widget name -> new value, e.g. {"steps": 30, "cfg": 6.5}.',
            },
        ),
        runs="panel",
        group="graph",
        edits_graph=True,
        digest_args=("nodeId",),
        digest_files=False,
    ),
    ToolSpec(
        name="queueWorkflow",
        brief="Run the workflow; returns outputs, or each node error.",
        tier="small",
        description="Run the workflow. Returns each output file (size; all black or blank = "
        "failed) and time, or each node error (node id, input name, received value, message).",
        parameters=_args(
            waitForResult={
                "type": "boolean",
                "default": True,
                "description": "Wait until it finishes; false returns once queued.",
            },
            timeoutSeconds={
                "type": "integer",
                "minimum": 1,
                "maximum": 3600,
                "default": 300,
                "description": "Longest wait, in seconds.",
            },
            outputNodeIds={
                "type": "array",
                "items": _NODE_ID,
                "description": "Run only what these output nodes need. Default: everything.",
            },
        ),
        runs="panel",
        group="graph",
    ),
    ToolSpec(
        name="loadWorkflow",
        brief="Open a workflow (or an attached one) in a new tab; only when asked.",
        tier="medium",
        description="Open a workflow in a new tab (the user's tab is kept; the chat and tools "
        "follow), only when the user asks for a new or complete one; else prefer small edits.",
        parameters=_args(
            workflow={
                "type": "object",
                "description": 'ComfyUI workflow: UI format ("nodes", "links") or API format '
                "(node id -> {class_type, inputs}).",
            },
            attachment={"type": "string", "description": "Or: an attached file's id."},
        ),
        runs="panel",
        group="graph",
        edits_graph=True,
    ),
    # Templates (issue 40): the cheapest way for a small model to a working graph is a known-good
    # one. About 110 cl100k tokens brief for both, 200 in full (tests/test_prompt_profile.py).
    ToolSpec(
        name="loadTemplate",
        brief="Open a template in a new tab; lists missing models.",
        tier="small",
        description="Open an official template in a new tab (the chat follows); returns "
        "missing models and a scan id for downloadModels.",
        parameters=_args(["name"], name={"type": "string", "description": "e.g. flux_schnell"}),
        runs="panel",
        group="graph",
        edits_graph=True,
        digest_args=("name",),
        digest_files=False,
    ),
    # Installs (issue 28): in the browser, through ComfyUI-Manager's own API, each after the
    # user's Allow. Finding, installing packs and restarting from 8K windows (issue 35: about
    # 250 tokens brief); downloads from above 12K; none at 4K (measured in
    # tests/test_tools_definitions.py and bench/small_windows.py).
    ToolSpec(
        name="findMissing",
        brief="Find the open workflow's missing node packs and models; cards show details.",
        tier="medium",
        description="Scan the open workflow (or an attached one) for node types and model files "
        "this ComfyUI lacks: the packs that provide them and where models download from. The "
        "user sees details on cards; use the scan id and names with installNodePacks and "
        "downloadModels.",
        parameters=_args(
            attachmentId={
                "type": "string",
                "description": "Scan an attached workflow instead: the id its [attached …] note "
                'gives loadWorkflow ({"attachment": id}).',
            },
        ),
        runs="panel",
        group="installs",
        digest_files=False,
    ),
    ToolSpec(
        name="installNodePacks",
        brief="Install node packs (ids from the missing-node scan) via ComfyUI-Manager; asks.",
        tier="medium",
        description="Install node packs through ComfyUI-Manager, once the user allows it. packs: "
        "the pack ids the missing-node scan gave (Registry ids or repository URLs). Reports each "
        "pack (installed, already-installed, refused, failed); without Manager, the steps to do "
        "it by hand. New packs load only after restartComfyUI.",
        parameters=_args(
            ["packs"],
            packs={
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": 20,
                "description": "Pack ids, as the scan named them.",
            },
        ),
        runs="panel",
        group="installs",
        digest_args=("packs",),
        digest_files=False,
    ),
    ToolSpec(
        name="downloadModels",
        brief="Download missing models a findMissing scan listed; asks first.",
        tier="full",
        description="Download models findMissing found downloadable into their models folders, "
        "once the user allows it. Reports each: done, already present, failed, cancelled.",
        parameters=_args(
            ["scan", "models"],
            scan={"type": "string", "minLength": 1, "description": "findMissing's scan id."},
            models={
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": 20,
                "description": "Model names, as the scan gave them.",
            },
        ),
        runs="panel",
        group="installs",
        digest_args=("models",),
        digest_files=False,
    ),
    ToolSpec(
        name="restartComfyUI",
        brief="Restart ComfyUI (to load installed packs), then check node types; asks first.",
        tier="medium",
        description="Restart ComfyUI through ComfyUI-Manager, once the user allows it, so that "
        "installed packs load (a running job stops). Waits until it is back (up to 3 minutes) "
        "and reports which of nodeTypes are registered then.",
        parameters=_args(
            nodeTypes={
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "description": "Node types the new packs should provide, to check.",
            },
        ),
        runs="panel",
        group="installs",
        digest_args=("nodeTypes",),
        digest_files=False,
    ),
    # Server tools: they need no browser and run inside the same /api/assistant/chat response.
    ToolSpec(
        name="searchInstalledNodes",
        brief="Find installed node types by purpose, name, category or slot type.",
        tier="small",
        description="Search the installed node types by purpose, name, category or slot type "
        '(e.g. "upscale image", "load lora", "LATENT"). Returns types with their link inputs '
        "and outputs.",
        parameters=_args(
            ["query"],
            query=_QUERY,
            limit={
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 15,
                "description": "Most results to return.",
            },
        ),
        runs="server",
        group="lookup",
        handler=server_tools.search_nodes,
        digest_args=("query",),
        digest_files=False,
    ),
    ToolSpec(
        name="searchTemplates",
        brief="Find official workflow templates.",
        tier="small",
        description="Search ComfyUI's official templates: each one's name, use, model files "
        "(installed or missing), API nodes.",
        parameters=_args(
            ["query"],
            query=_QUERY,
            tags={"type": "array", "items": {"type": "string"}, "description": "Any of these."},
            limit={"type": "integer", "maximum": 20, "default": 5, "description": "Most results."},
        ),
        runs="server",
        group="lookup",
        handler=template_tools.search_templates,
        digest_args=("query",),
        digest_files=False,
    ),
    ToolSpec(
        name="getNodeDefinition",
        brief="One node type's inputs (widget defaults, ranges, choices) and outputs.",
        tier="small",
        description="The full definition of one node type: inputs with widget kinds, defaults, "
        "ranges and choices, and outputs. Use before setting values you are unsure of.",
        parameters=_args(["nodeType"], nodeType={"type": "string", "description": _EXACT}),
        runs="server",
        group="lookup",
        handler=server_tools.node_definition,
        digest_args=("nodeType",),
        digest_files=False,
    ),
    ToolSpec(
        name="getAvailableModels",
        brief="Installed model files of a folder type (checkpoints, loras, vae, ...).",
        tier="small",
        description="Model files installed for a folder type (checkpoints, loras, vae, "
        "text_encoders, diffusion_models, upscale_models, controlnet, ...). Without a "
        "category: the count per folder type.",
        parameters=_args(category={"type": "string", "description": "Folder type."}),
        runs="server",
        group="lookup",
        handler=server_tools.available_models,
        digest_args=("category",),
    ),
    ToolSpec(
        name="readDocumentation",
        brief="A node type's documentation.",
        tier="medium",
        description="The documentation of a node type (how it works, its inputs and tips).",
        parameters=_args(["nodeType"], nodeType={"type": "string", "description": _EXACT}),
        runs="server",
        group="lookup",
        handler=server_tools.documentation,
        cites=True,
        digest_args=("nodeType",),
        digest_files=False,
    ),
    ToolSpec(
        name="listSystemSkills",
        brief="List the built-in skills.",
        tier="full",
        description="List the built-in skills (procedures and model-family notes).",
        parameters=_args(),
        runs="server",
        group="skills",
        handler=server_tools.list_system_skills,
        digest_files=False,
    ),
    ToolSpec(
        name="getSystemSkill",
        brief="Read a built-in skill by slug and follow it.",
        tier="small",
        description="Read a built-in skill's instructions by slug; follow them for the task.",
        parameters=_args(["slug"], slug=_SLUG),
        runs="server",
        group="skills",
        handler=server_tools.get_system_skill,
        digest_args=("slug",),
        digest_files=False,
    ),
    ToolSpec(
        name="listUserSkills",
        brief="List the user's skills.",
        tier="full",
        description="List the procedures the user taught you (their skills).",
        parameters=_args(),
        runs="server",
        group="skills",
        handler=server_tools.list_user_skills,
        digest_files=False,
    ),
    ToolSpec(
        name="getUserSkill",
        brief="Read one of the user's skills by slug and follow it.",
        tier="small",
        description="Read one of the user's skills by slug; follow it for the task.",
        parameters=_args(["slug"], slug=_SLUG),
        runs="server",
        group="skills",
        handler=server_tools.get_user_skill,
        digest_args=("slug",),
        digest_files=False,
    ),
    ToolSpec(
        name="createUserSkill",
        brief="Save a procedure the user asks you to remember, as markdown steps.",
        tier="medium",
        description="Save a procedure the user wants you to remember, as a new skill. Write "
        "the body as clear markdown steps with exact node types and values.",
        parameters=_args(
            ["name", "description", "body"],
            name={"type": "string", "minLength": 1, "maxLength": 80, "description": "Short name."},
            description={
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "One line: when to use it.",
            },
            body={"type": "string", "minLength": 1, "description": "The instructions."},
        ),
        runs="server",
        group="skills",
        handler=server_tools.create_user_skill,
        digest_args=("name",),
        asks=lambda a: (
            f"Save a new skill “{a.get('name')}” to your user skills "
            f"({len(str(a.get('body') or ''))} characters of instructions)."
        ),
    ),
    ToolSpec(
        name="updateUserSkill",
        brief="Change one of the user's skills; send only the fields that change.",
        tier="full",
        description="Change one of the user's skills; send only the fields that change.",
        parameters=_args(
            ["slug"],
            slug=_SLUG,
            name={"type": "string", "minLength": 1, "maxLength": 80, "description": "New name."},
            description={
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "New one-line description.",
            },
            body={"type": "string", "minLength": 1, "description": "New instructions."},
        ),
        runs="server",
        group="skills",
        handler=server_tools.update_user_skill,
        digest_args=("slug",),
        asks=lambda a: (
            f"Change your skill “{a.get('slug')}”: its "
            + ", ".join(k for k in ("name", "description", "body") if a.get(k) is not None)
            + "."
        ),
    ),
    ToolSpec(
        name="recallToolResult",
        brief="The full result of an earlier call shortened to a digest, by the id in the digest.",
        tier="small",
        description="The full result of an earlier tool call that was shortened to a digest, "
        "by the id shown in the digest.",
        parameters=_args(
            ["toolCallId"], toolCallId={"type": "string", "description": "Id from the digest."}
        ),
        runs="server",
        group="memory",
        handler=server_tools.recall_tool_result,
        digest_args=("toolCallId",),
    ),
    ToolSpec(
        name="searchConversation",
        brief="Search this conversation, also parts no longer shown, by topic words (not "
        "names or dates alone) and a time to prefer; around=a messageId reads there.",
        # (not at the smallest windows: its definition does not fit their prompt budget)
        tier="medium",
        description="Search all that was said in this conversation, also parts no longer "
        "shown to you; or read around a result. Returns matches with their neighbours, to "
        "cite.",
        parameters=_args(
            query={
                "type": "string",
                "description": "Topic words (and synonyms); not names or dates alone.",
            },
            when={
                "type": "string",
                "description": 'A time to prefer: "yesterday", "last week", "in May", '
                '"3 days ago", "2025-05-14", "2025-05-01..2025-05-20".',
            },
            around={"type": "string", "description": "A result's messageId: read around it."},
            limit={
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "description": "Most results (5).",
            },
        ),
        runs="server",
        group="memory",
        handler=server_tools.conversation,
        cites=True,
        digest_args=("query", "when", "around"),
        digest_files=False,
    ),
    ToolSpec(
        name="readSystemContext",
        brief="Read a section of your instructions left out to save space.",
        tier="full",
        description="Read a section of your instructions that was left out to save space, by "
        "the name listed in the system prompt.",
        parameters=_args(["section"], section={"type": "string", "description": "Section name."}),
        runs="server",
        group="memory",
        handler=server_tools.read_system_context,
        digest_args=("section",),
        digest_files=False,
    ),
    ToolSpec(
        name="delegate",
        brief="A helper does several lookups for a task and returns only its answer; not for "
        "one lookup or graph edits.",
        # (not at the smallest windows: its definition does not fit their prompt budget, and a
        # helper there has barely room for its own lookups)
        tier="medium",
        description="A helper runs the lookup and skill tools for a task and returns only its "
        "answer, facts and sources: their results stay out of this conversation. Use it for "
        "several lookups whose details will not matter later; not for one lookup, never for "
        "graph edits (it cannot make them).",
        parameters=_args(
            ["task"],
            task={"type": "string", "minLength": 1, "description": "What to find out."},
            context={
                "type": "string",
                "description": "What the helper needs from this conversation (names, ids, "
                "constraints); it sees nothing else.",
            },
        ),
        runs="server",
        group="delegate",
        streaming=server_tools.delegate,
        digest_args=("task",),
        digest_files=False,
    ),
)

_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
if len(_BY_NAME) != len(TOOLS):
    raise ValueError("duplicate tool names in TOOLS")


def get_tool(name: str) -> ToolSpec | None:
    """The tool called `name`, or None if there is none."""
    return _BY_NAME.get(name)


# (their handlers return documents with citation ids and the note to cite them:
# core/tools/documents.py)
CITATION_TOOLS = frozenset(spec.name for spec in TOOLS if spec.cites)
SERVER_TOOLS = frozenset(spec.name for spec in TOOLS if spec.runs == "server")


def tools_for(runs: ToolRunner) -> tuple[ToolSpec, ...]:
    """The tools that run in `runs`, in registry order."""
    return tuple(spec for spec in TOOLS if spec.runs == runs)


def openai_tools(specs: Iterable[ToolSpec] | None = None) -> list[dict[str, Any]]:
    """OpenAI `tools` for `specs` (default: every tool), as fresh dicts."""
    return [spec.openai_tool() for spec in (TOOLS if specs is None else specs)]


async def server_tool_outputs(
    name: str, args: dict[str, Any], ctx: server_tools.ToolContext
) -> AsyncIterator[server_tools.ToolOutput]:
    """The outputs of one server tool: its progress if it reports any, then its result.
    ToolFailure for errors the model can fix, never a crash."""
    spec = _BY_NAME.get(name)
    if spec is None or spec.streaming is None:
        yield server_tools.ToolOutput(await run_server_tool(name, args, ctx))
        return
    try:
        async for output in spec.streaming(args, ctx):
            yield output
    except (KeyError, TypeError, ValueError) as exc:
        raise server_tools.ToolFailure(f"{name} could not use these arguments: {exc}") from None


async def run_server_tool(name: str, args: dict[str, Any], ctx: server_tools.ToolContext) -> Any:
    """Run one server tool; ToolFailure for errors the model can fix, never a crash."""
    spec = _BY_NAME.get(name)
    if spec is None or spec.handler is None:
        raise server_tools.ToolFailure(f"'{name}' is not a server tool.")
    try:
        return await spec.handler(args, ctx)
    except server_tools.ToolFailure:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise server_tools.ToolFailure(f"{name} could not use these arguments: {exc}") from None
