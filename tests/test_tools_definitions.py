from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.base.wire_types import ContextReport
from comfyui_assistant.core.tools.server_tools import search_nodes
from comfyui_assistant.tools_definitions import (
    GROUPS,
    TOOLS,
    ToolSpec,
    get_tool,
    openai_tools,
    tools_for,
)

PANEL_TOOL_NAMES = [
    "getWorkflow",
    "addNode",
    "removeNodes",
    "connectNodes",
    "setWidgetValues",
    "queueWorkflow",
    "loadWorkflow",
    "loadTemplate",
    "findMissing",
    "installNodePacks",
    "downloadModels",
    "restartComfyUI",
]

SERVER_TOOL_NAMES = [
    "searchInstalledNodes",
    "searchTemplates",
    "getNodeDefinition",
    "getAvailableModels",
    "readDocumentation",
    "listSystemSkills",
    "getSystemSkill",
    "listUserSkills",
    "getUserSkill",
    "createUserSkill",
    "updateUserSkill",
    "recallToolResult",
    "searchConversation",
    "readSystemContext",
    "delegate",
]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _params(spec: ToolSpec) -> dict[str, Any]:
    params: dict[str, Any] = spec.openai_tool()["function"]["parameters"]
    return params


def _all_properties(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property schema, nested ones included, with a dotted path for messages."""
    for name, prop in schema.get("properties", {}).items():
        yield f"{path}{name}", prop
        yield from _all_properties(prop, f"{path}{name}.")


def _type_ok(value: Any, json_type: str | list[str]) -> bool:
    types = [json_type] if isinstance(json_type, str) else json_type
    for t in types:
        # bool is an int subclass in Python but not a JSON integer/number.
        if isinstance(value, bool) and t in ("integer", "number"):
            continue
        if isinstance(value, _JSON_TYPES[t]):
            return True
    return False


def test_expected_tools_in_registry_order() -> None:
    assert [spec.name for spec in TOOLS] == PANEL_TOOL_NAMES + SERVER_TOOL_NAMES
    assert [spec.name for spec in tools_for("server")] == SERVER_TOOL_NAMES


def test_names_unique_and_valid_for_openai() -> None:
    names = [spec.name for spec in TOOLS]
    assert len(names) == len(set(names))
    for name in names:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name), name


def test_every_tool_has_a_description_and_a_runner() -> None:
    for spec in TOOLS:
        assert spec.description.strip(), spec.name
        assert spec.runs in ("panel", "server"), spec.name


def test_parameters_are_closed_object_schemas() -> None:
    for spec in TOOLS:
        params = _params(spec)
        assert set(params) == {"type", "properties", "required", "additionalProperties"}
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert isinstance(params["properties"], dict)
        assert isinstance(params["required"], list)
        assert len(params["required"]) == len(set(params["required"])), spec.name
        assert set(params["required"]) <= set(params["properties"]), spec.name


def test_every_property_has_a_description() -> None:
    for spec in TOOLS:
        for path, prop in _all_properties(_params(spec)):
            assert isinstance(prop.get("description"), str), f"{spec.name}.{path}"
            assert prop["description"].strip(), f"{spec.name}.{path}"
            assert "type" in prop, f"{spec.name}.{path}"


def test_nested_object_schemas_declare_their_required_properties() -> None:
    for spec in TOOLS:
        for path, prop in _all_properties(_params(spec)):
            if "properties" in prop:
                assert set(prop.get("required", [])) <= set(prop["properties"]), path


def test_defaults_satisfy_their_own_constraints() -> None:
    defaults = 0
    for spec in TOOLS:
        for path, prop in _all_properties(_params(spec)):
            if "default" not in prop:
                continue
            defaults += 1
            value = prop["default"]
            where = f"{spec.name}.{path}"
            assert _type_ok(value, prop["type"]), where
            if "enum" in prop:
                assert value in prop["enum"], where
            if "minimum" in prop:
                assert value >= prop["minimum"], where
            if "maximum" in prop:
                assert value <= prop["maximum"], where
    assert defaults >= 3  # detail, waitForResult, timeoutSeconds


def test_required_arguments_of_each_tool() -> None:
    required = {spec.name: _params(spec)["required"] for spec in TOOLS}
    assert required == {
        "getWorkflow": [],
        "addNode": ["nodeType"],
        "removeNodes": ["nodeIds"],
        "connectNodes": ["fromNodeId", "fromOutput", "toNodeId", "toInput"],
        "setWidgetValues": ["nodeId", "values"],
        "queueWorkflow": [],
        "loadWorkflow": [],  # workflow, or the id of an attachment that holds one
        "loadTemplate": ["name"],
        "findMissing": [],  # the open workflow, or an attachment's
        "installNodePacks": ["packs"],
        "downloadModels": ["scan", "models"],
        "restartComfyUI": [],
        "searchInstalledNodes": ["query"],
        "searchTemplates": ["query"],
        "getNodeDefinition": ["nodeType"],
        "getAvailableModels": [],
        "readDocumentation": ["nodeType"],
        "listSystemSkills": [],
        "getSystemSkill": ["slug"],
        "listUserSkills": [],
        "getUserSkill": ["slug"],
        "createUserSkill": ["name", "description", "body"],
        "updateUserSkill": ["slug"],
        "recallToolResult": ["toolCallId"],
        "searchConversation": [],  # words, a time, or a message to read around
        "readSystemContext": ["section"],
        "delegate": ["task"],
    }


def test_digest_args_name_declared_properties() -> None:
    for spec in TOOLS:
        assert isinstance(spec.digest_args, tuple)
        assert set(spec.digest_args) <= set(_params(spec)["properties"]), spec.name
    assert {spec.name: spec.digest_args for spec in TOOLS} == {
        "getWorkflow": ("detail",),
        "addNode": ("nodeType",),
        "removeNodes": ("nodeIds",),
        "connectNodes": ("fromNodeId", "fromOutput", "toNodeId", "toInput"),
        "setWidgetValues": ("nodeId",),
        "queueWorkflow": (),
        "loadWorkflow": (),
        "loadTemplate": ("name",),
        "findMissing": (),
        "installNodePacks": ("packs",),
        "downloadModels": ("models",),
        "restartComfyUI": ("nodeTypes",),
        "searchInstalledNodes": ("query",),
        "searchTemplates": ("query",),
        "getNodeDefinition": ("nodeType",),
        "getAvailableModels": ("category",),
        "readDocumentation": ("nodeType",),
        "listSystemSkills": (),
        "getSystemSkill": ("slug",),
        "listUserSkills": (),
        "getUserSkill": ("slug",),
        "createUserSkill": ("name",),
        "updateUserSkill": ("slug",),
        "recallToolResult": ("toolCallId",),
        "searchConversation": ("query", "when", "around"),
        "readSystemContext": ("section",),
        "delegate": ("task",),
    }


def test_openai_tool_has_the_exact_openai_shape() -> None:
    spec = get_tool("connectNodes")
    assert spec is not None
    slot = ["string", "integer"]
    node_id = ["integer", "string"]  # 5, or "12:5" inside subgraph node 12
    assert spec.openai_tool() == {
        "type": "function",
        "function": {
            "name": "connectNodes",
            "description": spec.description,
            "parameters": {
                "type": "object",
                "properties": {
                    "fromNodeId": {"type": node_id, "description": "Source node id."},
                    "fromOutput": {
                        "type": slot,
                        "description": 'Output name (e.g. "LATENT") or 0-based index.',
                    },
                    "toNodeId": {"type": node_id, "description": "Target node id."},
                    "toInput": {
                        "type": slot,
                        "description": 'Input name (e.g. "samples") or 0-based index.',
                    },
                },
                "required": ["fromNodeId", "fromOutput", "toNodeId", "toInput"],
                "additionalProperties": False,
            },
        },
    }
    for other in TOOLS:
        tool = other.openai_tool()
        assert set(tool) == {"type", "function"}
        assert set(tool["function"]) == {"name", "description", "parameters"}


def test_as_json_is_the_endpoint_shape() -> None:
    spec = get_tool("queueWorkflow")
    assert spec is not None
    assert spec.as_json() == {
        "name": "queueWorkflow",
        "description": spec.description,
        "parameters": {
            "type": "object",
            "properties": {
                "waitForResult": {
                    "type": "boolean",
                    "default": True,
                    "description": "Wait until it finishes; false returns once queued.",
                },
                "timeoutSeconds": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 3600,
                    "default": 300,
                    "description": "Longest wait, in seconds.",
                },
                "outputNodeIds": {
                    "type": "array",
                    "items": {"type": ["integer", "string"]},
                    "description": "Run only what these output nodes need. Default: everything.",
                },
            },
            "required": [],
            "additionalProperties": False,
        },
        "runs": "panel",
    }


def test_output_round_trips_through_json() -> None:
    tools = openai_tools()
    assert json.loads(json.dumps(tools)) == tools
    endpoint = [spec.as_json() for spec in TOOLS]
    assert json.loads(json.dumps(endpoint)) == endpoint


def test_mutating_returned_dicts_does_not_change_the_registry() -> None:
    before = copy.deepcopy(openai_tools())
    before_json = copy.deepcopy([spec.as_json() for spec in TOOLS])

    for tool in openai_tools():
        params = tool["function"]["parameters"]
        params["required"].append("bogus")
        params["properties"].clear()
        params["additionalProperties"] = True
        tool["function"]["name"] = "changed"
    for spec in TOOLS:
        as_json = spec.as_json()
        as_json["parameters"]["type"] = "array"
        as_json["runs"] = "server"
    get_workflow = get_tool("getWorkflow")
    assert get_workflow is not None
    get_workflow.openai_tool()["function"]["parameters"]["properties"]["detail"]["enum"].append("x")

    assert openai_tools() == before
    assert [spec.as_json() for spec in TOOLS] == before_json


def test_registry_parameters_are_read_only() -> None:
    spec = get_tool("getWorkflow")
    assert spec is not None
    with pytest.raises(TypeError):
        spec.parameters["type"] = "array"  # type: ignore[index]
    with pytest.raises(TypeError):
        spec.parameters["properties"]["detail"]["default"] = "full"
    with pytest.raises(AttributeError):
        spec.parameters["properties"]["detail"]["enum"].append("x")
    with pytest.raises(AttributeError):
        spec.name = "other"  # type: ignore[misc]


def test_constructing_a_spec_copies_the_callers_schema() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "Query."}},
        "required": ["q"],
        "additionalProperties": False,
    }
    spec = ToolSpec(
        "searchNodes", "Search node types.", schema, "server", ("q",), group="lookup",
        handler=search_nodes, brief="Search.",
    )  # fmt: skip
    schema["properties"]["q"]["type"] = "integer"
    schema["required"].append("other")
    assert spec.openai_tool()["function"]["parameters"] == {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "Query."}},
        "required": ["q"],
        "additionalProperties": False,
    }
    assert spec.as_json()["runs"] == "server"
    assert spec in {spec}  # hashable although its parameters are a mapping


@pytest.mark.parametrize(
    ("name", "parameters", "runs", "digest_args"),
    [
        ("bad name", {"type": "object", "properties": {}}, "panel", ()),
        ("x" * 65, {"type": "object", "properties": {}}, "panel", ()),
        ("trailing\n", {"type": "object", "properties": {}}, "panel", ()),
        ("ok", {"type": "array"}, "panel", ()),
        ("ok", {"type": "object", "properties": {}}, "browser", ()),
        ("ok", {"type": "object", "properties": {}}, "panel", ("missing",)),
        ("ok", {"type": "object", "properties": {}, "required": ["missing"]}, "panel", ()),
    ],
)
def test_malformed_specs_are_rejected(
    name: str, parameters: dict[str, Any], runs: Any, digest_args: tuple[str, ...]
) -> None:
    with pytest.raises(ValueError, match=r"invalid tool name|runs must|object schema|undeclared"):
        ToolSpec(name, "d", parameters, runs, digest_args, group="graph", brief="b")


@pytest.mark.parametrize(("brief", "tier"), [("", "small"), ("  ", "full"), ("b", "tiny")])
def test_a_spec_needs_a_brief_form_and_a_known_tier(brief: str, tier: Any) -> None:
    with pytest.raises(ValueError, match=r"brief|tier"):
        ToolSpec("ok", "d", {"type": "object", "properties": {}}, "panel", group="graph",
                 brief=brief, tier=tier)  # fmt: skip


@pytest.mark.parametrize(
    ("runs", "group", "handler"),
    [
        ("server", "lookup", None),  # a server tool without its handler
        ("panel", "graph", search_nodes),  # a panel tool with one
        ("panel", "nowhere", None),  # a group the prompt does not list
        ("panel", "", None),
    ],
)
def test_a_spec_must_say_where_it_runs_and_where_it_is_listed(
    runs: Any, group: str, handler: Any
) -> None:
    with pytest.raises(ValueError, match=r"handler|group"):
        ToolSpec("ok", "d", {"type": "object", "properties": {}}, runs, group=group,
                 handler=handler, brief="b")  # fmt: skip


def test_the_graph_editing_tools_are_the_panel_tools_that_change_the_graph() -> None:
    """A checkpoint is saved before a turn's first call of one of these (ui/src/runtime)."""
    assert [s.name for s in TOOLS if s.edits_graph] == [
        "addNode", "removeNodes", "connectNodes", "setWidgetValues", "loadWorkflow", "loadTemplate",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="only a panel tool edits the graph"):
        ToolSpec("ok", "d", {"type": "object", "properties": {}}, "server", group="lookup",
                 handler=search_nodes, brief="b", edits_graph=True)  # fmt: skip


def test_every_tool_is_declared_in_one_place() -> None:
    """Server tools run by their spec's handler, every tool is in a prompt group, and the
    lists other modules use are derived from the specs."""
    from comfyui_assistant.core.tools import tool_registry as registry

    for spec in TOOLS:
        assert spec.group in GROUPS
        # (one handler: a plain one, or a streaming one for a tool that reports progress)
        assert (spec.handler is not None or spec.streaming is not None) == (spec.runs == "server")
    assert {s.name for s in TOOLS if s.runs == "server"} == registry.SERVER_TOOLS
    assert {"readDocumentation", "searchConversation"} == registry.CITATION_TOOLS


def test_get_tool() -> None:
    for spec in TOOLS:
        assert get_tool(spec.name) is spec
    assert get_tool("nope") is None
    assert get_tool("") is None
    assert get_tool("getworkflow") is None  # names are case-sensitive


def test_tools_for_partitions_the_registry_in_order() -> None:
    panel = tools_for("panel")
    server = tools_for("server")
    assert isinstance(panel, tuple)
    assert [spec.name for spec in panel] == PANEL_TOOL_NAMES
    assert all(spec.runs == "panel" for spec in panel)
    assert all(spec.runs == "server" for spec in server)
    assert set(panel) | set(server) == set(TOOLS)
    assert not set(panel) & set(server)
    assert list(server) == [spec for spec in TOOLS if spec in set(server)]


def test_openai_tools_defaults_to_all_and_accepts_any_iterable() -> None:
    assert openai_tools() == [spec.openai_tool() for spec in TOOLS]
    chosen = (get_tool("queueWorkflow"), get_tool("addNode"))
    assert [t["function"]["name"] for t in openai_tools(s for s in chosen if s)] == [
        "queueWorkflow",
        "addNode",
    ]
    assert openai_tools([]) == []


def test_tool_definitions_fit_the_token_budget() -> None:
    """Tool schemas are sent with every request: measured, and kept small."""
    from comfyui_assistant.core.tokens.token_encoding import shipped_cl100k

    enc = shipped_cl100k()

    def cost(specs: Any) -> int:
        return len(enc.encode(json.dumps(openai_tools(specs))))

    # (1,953: the seven graph tools 1,368 and the four install tools 585 — findMissing 120,
    # installNodePacks 171, downloadModels 158, restartComfyUI 139 — which are offered from the
    # medium profile, above 6K, but downloadModels, above 12K: 246 tokens brief without
    # downloadModels (issue 35), 357 with it; 1,677 before
    # findMissing and downloadModels)
    # (2,065 with loadTemplate, issue 40: 86)
    assert cost(tools_for("panel")) < 2080  # (1,328 before queueWorkflow's outputNodeIds, a
    # partial run; 1,295 before loadWorkflow took an attachment;
    # 1,312 before getWorkflow said that every tool works in the graph the user views; 1,325
    # before loadWorkflow said that it opens a new tab and the chat follows)
    # (1,277 before `delegate`, which costs about 140 and is not offered at the smallest windows)
    # (1,786 with searchTemplates, issue 40: 130)
    assert cost(tools_for("server")) < 1800  # (1,417 before searchConversation: 210)


def test_the_panel_schemas_are_generated_from_this_registry() -> None:
    """`scripts/gen_panel_types.py --check` passes: the committed panel schemas (and the
    context report's type) are what the Python renders now (scripts/check runs it too)."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "gen_panel_types.py"
    ok = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    generated = script.parent.parent / "ui" / "src" / "tools" / "schemas.generated.ts"
    assert all(f'"{spec.name}"' in generated.read_text() for spec in tools_for("panel"))
    report = script.parent.parent / "ui" / "src" / "runtime" / "contextReport.generated.ts"
    assert all(f"  {key}: " in report.read_text() for key in ContextReport.__annotations__)
