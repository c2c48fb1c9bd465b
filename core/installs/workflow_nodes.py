"""The nodes of a workflow, whatever its format, as one flat list for the scan.

UI format (what the frontend saves): `nodes`, the subgraph definitions under
`definitions.subgraphs[].nodes` (a node whose type is a subgraph's id is an instance of it, not
a node type), and the group nodes of older frontends (`extra.groupNodes`, instances typed
`workflow>name`, or `workflow/name` before that). API format (a prompt): node id ->
`{"class_type", "inputs"}`. Anything else is refused with what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..base import RequestError, coded

# Node types the frontend itself provides: never in object_info, never missing.
FRONTEND_NODES = frozenset({"Note", "MarkdownNote", "Reroute", "PrimitiveNode"})
GROUP_PREFIXES = ("workflow>", "workflow/")
INACTIVE_MODES = (2, 4)  # muted, bypassed: never run
MAX_NODES = 20_000  # subgraphs included; a real workflow has at most a few thousand


@dataclass(frozen=True)
class Place:
    """Where a node is: the root graph, a subgraph definition, or an old group node."""

    kind: str  # "root", "subgraph", "group"
    id: str = ""
    name: str = ""

    def as_json(self) -> dict[str, str] | None:
        if self.kind == "root":
            return None
        return {"kind": self.kind, "id": self.id, "name": self.name}


ROOT = Place("root")


@dataclass(frozen=True)
class WorkflowNode:
    id: int | str
    type: str
    title: str | None
    place: Place
    active: bool
    widgets: list[Any] | dict[str, Any] | None  # UI format: widgets_values as saved
    inputs: dict[str, Any] | None  # API format: input name -> value, or a link [id, slot]
    models: list[Any]  # properties.models as written (checked later)
    pack: tuple[str | None, str | None] = (None, None)  # properties cnr_id, aux_id

    def ref(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.title:
            out["title"] = self.title
        place = self.place.as_json()
        if place is not None:
            out["in"] = place
        return out


def _refuse(why: str) -> RequestError:
    return RequestError(coded("installs.not_a_workflow", why=why))


def workflow_nodes(workflow: Any) -> tuple[str, list[WorkflowNode], set[str]]:
    """(format "ui" or "api", every node, the ids of the workflow's subgraphs)."""
    if not isinstance(workflow, dict) or not workflow:
        raise _refuse("it is not a JSON object with nodes")
    if "nodes" in workflow:
        return "ui", *_ui_nodes(workflow)
    return "api", _api_nodes(workflow), set()


def _api_nodes(prompt: dict[str, Any]) -> list[WorkflowNode]:
    _bounded(len(prompt))
    nodes = []
    for node_id, node in prompt.items():
        kind = node.get("class_type") if isinstance(node, dict) else None
        if not isinstance(kind, str) or not kind:
            raise _refuse(
                f'it has no "nodes" list, and its entry {node_id!r} is not an API-format node '
                '(an object with "class_type" and "inputs")'
            )
        inputs = node.get("inputs", {})
        if not isinstance(inputs, dict):
            raise _refuse(f'"inputs" of node {node_id!r} is not an object')
        meta = node.get("_meta")
        title = meta.get("title") if isinstance(meta, dict) else None
        nodes.append(WorkflowNode(node_id, kind, _title(title, kind), ROOT, True, None, inputs, []))
    return nodes


def _ui_nodes(workflow: dict[str, Any]) -> tuple[list[WorkflowNode], set[str]]:
    subgraphs = _subgraphs(workflow)
    graphs: list[tuple[Place, Any, str]] = [(ROOT, workflow.get("nodes"), "nodes")]
    for i, sub in enumerate(subgraphs):
        place = Place("subgraph", str(sub.get("id")), _text(sub.get("name")))
        graphs.append((place, sub.get("nodes"), f"definitions.subgraphs[{i}].nodes"))
    _bounded(sum(len(items) for _, items, _ in graphs if isinstance(items, list)))
    nodes = [node for place, items, where in graphs for node in _graph(place, items, where)]
    subgraph_ids = {str(sub.get("id")) for sub in subgraphs}
    nodes = _run_state(nodes, subgraph_ids)
    groups = _group_nodes(workflow)
    nodes += _group_members(nodes, groups)
    group_types = {prefix + name for name in groups for prefix in GROUP_PREFIXES}
    return nodes, subgraph_ids | group_types


def _run_state(nodes: list[WorkflowNode], subgraph_ids: set[str]) -> list[WorkflowNode]:
    """A subgraph's nodes run only when an active instance of it runs: one in the root graph,
    or inside a subgraph that runs. A bypassed instance, or a definition no node uses, runs
    nothing (its node types still count as missing: the graph cannot load them)."""
    running: set[str] = set()
    while True:
        more = {
            n.type
            for n in nodes
            if n.active and n.type in subgraph_ids and n.type not in running
            if n.place.kind == "root" or n.place.id in running
        }
        if not more:
            break
        running |= more
    return [
        replace(n, active=False) if n.place.kind == "subgraph" and n.place.id not in running else n
        for n in nodes
    ]


def _bounded(count: int) -> None:
    if count > MAX_NODES:
        raise RequestError(coded("installs.too_many_nodes", count=count, limit=MAX_NODES))


def _group_members(nodes: list[WorkflowNode], groups: dict[str, list[Any]]) -> list[WorkflowNode]:
    """The nodes inside each old group node placed in the workflow. The instance saves the
    values of all its members' widgets in one list, member after member: when its length
    matches theirs, each member gets its part (the user may have changed them on the group)."""
    found = []
    for node in nodes:
        name = next((node.type[len(p) :] for p in GROUP_PREFIXES if node.type.startswith(p)), "")
        if name not in groups:
            continue
        place = Place("group", str(node.id), name)
        members = list(_graph(place, groups[name], f"extra.groupNodes[{name!r}].nodes"))
        sizes = [len(m.widgets) if isinstance(m.widgets, list) else 0 for m in members]
        values = node.widgets if isinstance(node.widgets, list) else None
        start = 0
        for member, size in zip(members, sizes, strict=True):
            if values is not None and len(values) == sum(sizes):
                member = replace(member, widgets=values[start : start + size])
            found.append(replace(member, active=member.active and node.active))
            start += size
        _bounded(len(nodes) + len(found))
    return found


def _subgraphs(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    definitions = workflow.get("definitions")
    if definitions is None:
        return []
    found = definitions.get("subgraphs", []) if isinstance(definitions, dict) else None
    if not isinstance(found, list) or not all(
        isinstance(s, dict) and isinstance(s.get("id"), str) for s in found
    ):
        raise _refuse('"definitions.subgraphs" is not a list of subgraphs with an "id"')
    return found


def _group_nodes(workflow: dict[str, Any]) -> dict[str, list[Any]]:
    extra = workflow.get("extra")
    groups = extra.get("groupNodes") if isinstance(extra, dict) else None
    if not isinstance(groups, dict):
        return {}
    return {
        str(name): group["nodes"]
        for name, group in groups.items()
        if isinstance(group, dict) and isinstance(group.get("nodes"), list)
    }


def _graph(place: Place, items: Any, where: str) -> Iterator[WorkflowNode]:
    if not isinstance(items, list):
        raise _refuse(f'"{where}" is not a list of nodes')
    for i, node in enumerate(items):
        kind = node.get("type") if isinstance(node, dict) else None
        if not isinstance(kind, str) or not kind:
            raise _refuse(f'{where}[{i}] is not a node with a "type"')
        # A group's members are saved with id -1 and their index in the group.
        node_id = node.get("index", i) if place.kind == "group" else node.get("id", i)
        widgets = node.get("widgets_values")
        yield WorkflowNode(
            node_id if isinstance(node_id, (int, str)) else i,
            kind,
            _title(node.get("title"), kind),
            place,
            node.get("mode") not in INACTIVE_MODES,
            widgets if isinstance(widgets, (list, dict)) else None,
            None,
            _models(node.get("properties")),
            _pack(node.get("properties")),
        )


def _models(holder: Any) -> list[Any]:
    models = holder.get("models") if isinstance(holder, Mapping) else None
    return models if isinstance(models, list) else []


def _pack(properties: Any) -> tuple[str | None, str | None]:
    """The pack the frontend recorded the node came from (a Registry id, or "author/repo" of
    a git clone); ComfyUI's own nodes say "comfy-core"."""
    if not isinstance(properties, Mapping):
        return None, None
    cnr_id, aux_id = _text(properties.get("cnr_id")), _text(properties.get("aux_id"))
    cnr = cnr_id if cnr_id and cnr_id != "comfy-core" else None
    aux = aux_id if aux_id.count("/") == 1 else None
    return cnr, aux


def _title(title: Any, kind: str) -> str | None:
    return title if isinstance(title, str) and title and title != kind else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
