"""What a workflow needs that this ComfyUI lacks: node types (and the packs that provide them)
and model files (and where to download them). Pure: the workflow, the Environment and what
ComfyUI-Manager answered go in, a ScanResult comes out; the route does the I/O.

A node type is missing when object_info does not have it (the frontend's own nodes and the
workflow's subgraphs are not node types). A model is missing when a loader's combo value is not
among its choices (the files ComfyUI lists), or, for an entry not tied to a widget (a node of a
missing type, the workflow's top-level `models`), when its folder's listing does not have it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..knowledge import Environment
from .model_refs import COMFYUI_FOLDERS, ModelEntry, entries, folder_name
from .model_scan import ModelScan
from .node_map import REGISTRY_MAP, InstalledPacks, NodeMap, Pack, recorded_pack
from .registry_pack import RegistryFacts, as_pack
from .workflow_nodes import FRONTEND_NODES, WorkflowNode, workflow_nodes

NO_LOOKUPS = "neither ComfyUI-Manager nor the Comfy Registry is reachable"
PACK_NOTES = {
    "disabled": "installed but disabled",
    "not-loaded": "installed, but its nodes did not load (it failed to import, or ComfyUI was "
    "not restarted since it was installed)",
    "loaded": "installed and loaded, but this version does not have the node: update it",
}


@dataclass(frozen=True)
class Lookups:
    """What ComfyUI-Manager (or the Registry) answered; None for what it could not give, and
    `notes` say why."""

    node_map: NodeMap | None = None
    installed: InstalledPacks | None = None
    models: Mapping[str, ModelEntry] | None = None
    notes: tuple[str, ...] = ()
    # Manager serves its model list only with its legacy UI, which this ComfyUI does not use
    model_list_legacy_only: bool = False
    registry: RegistryFacts | None = None  # asked after a first pass (registry_lookups.py)


@dataclass(frozen=True)
class ScanResult:
    format: str
    missing_nodes: list[dict[str, Any]]
    packs: list[dict[str, Any]]
    missing_models: list[dict[str, Any]]
    present_models: list[dict[str, Any]]
    sources: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "counts": {
                "missingNodeTypes": len(self.missing_nodes),
                "packs": len(self.packs),
                "missingModels": len(self.missing_models),
                "presentModels": len(self.present_models),
            },
            "missingNodes": self.missing_nodes,
            "packs": self.packs,
            "missingModels": self.missing_models,
            "presentModels": self.present_models,
            "sources": self.sources,
        }


def scan_workflow(
    workflow: Any,
    env: Environment,
    lookups: Lookups | None = None,
    trusted: Callable[[str], bool] = lambda url: False,
) -> ScanResult:
    """Raises RequestError (coded `installs.*`) for something that is not a workflow.
    `trusted`: a non-https address the downloader may start from (Origins.trusts)."""
    lookups = lookups or Lookups()
    kind, nodes, subgraphs = workflow_nodes(workflow)
    missing = [n for n in nodes if _is_missing(n.type, env, subgraphs)]
    missing_nodes, packs = _missing_nodes(missing, env, lookups)
    models = ModelScan(env)
    for node in nodes:
        if node.active:
            models.node(node)
    if kind == "ui":
        models.top_level(entries(_list(workflow.get("models")), "workflow"))
    models.enrich(lookups.models or {})
    folders = COMFYUI_FOLDERS | {folder_name(f) or f for f in env.models}
    missing_models, present_models = models.result(folders, trusted)
    sources = {
        "nodeMap": lookups.node_map.source if lookups.node_map else None,
        "installedPacks": lookups.installed is not None,
        "modelList": lookups.models is not None,
        "modelListLegacyUiOnly": lookups.model_list_legacy_only,
        "registry": bool(lookups.registry and lookups.registry.packs),
        "notes": [*lookups.notes, *_registry_reason(lookups)],
    }
    return ScanResult(kind, missing_nodes, packs, missing_models, present_models, sources)


def _is_missing(node_type: str, env: Environment, subgraphs: set[str]) -> bool:
    return node_type not in env.nodes and node_type not in FRONTEND_NODES | subgraphs


def _missing_nodes(
    missing: list[WorkflowNode], env: Environment, lookups: Lookups
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    by_type: dict[str, list[WorkflowNode]] = {}
    for node in missing:
        by_type.setdefault(node.type, []).append(node)
    packs: dict[str, dict[str, Any]] = {}
    out = []
    for node_type, uses in by_type.items():
        providers = lookups.node_map.providers(node_type) if lookups.node_map else []
        recorded = {p for p in (recorded_pack(*n.pack) for n in uses) if p is not None}
        from_workflow = not providers and bool(recorded)
        if from_workflow:
            providers = sorted(recorded, key=lambda p: p.key)
        named = lookups.registry.by_type.get(node_type) if lookups.registry else None
        from_registry = not providers and named is not None
        if named is not None and from_registry:
            providers = [as_pack(named)]
        for pack in providers:
            described = packs.setdefault(pack.key, _pack_json(pack, env, lookups))
            described["nodeTypes"].append(node_type)
        item: dict[str, Any] = {
            "type": node_type,
            "nodes": [n.ref() for n in uses],
            "packs": [p.key for p in providers],
        }
        if from_workflow:
            item["note"] = "the pack the workflow recorded for it (no node map has the type)"
        if from_registry:
            item["note"] = f"the pack {REGISTRY_MAP} names for it"
        if not providers:
            item["provider"] = "unknown"
            item["note"] = _unknown_note(node_type, lookups)
        out.append(item)
    return out, list(packs.values())


def _unknown_note(node_type: str, lookups: Lookups) -> str:
    registry = lookups.registry
    asked = [lookups.node_map.source] if lookups.node_map else []
    if registry and node_type in registry.unknown_types:
        asked.append(REGISTRY_MAP)
    if not asked:
        reasons = [*lookups.notes, *_registry_reason(lookups)]
        return f"unknown: {NO_LOOKUPS}" + (f": {'; '.join(reasons)}" if reasons else "")
    note = f"no pack in {' or '.join(asked)} provides it"
    if REGISTRY_MAP not in asked and registry and registry.reason:
        note += f" ({registry.reason})"
    return note


def _registry_reason(lookups: Lookups) -> list[str]:
    return [lookups.registry.reason] if lookups.registry and lookups.registry.reason else []


def _pack_json(pack: Pack, env: Environment, lookups: Lookups) -> dict[str, Any]:
    installed = lookups.installed
    found = installed.find(pack) if installed else None
    folder = found.folder if found else _repo_folder(pack)
    loaded = any(folder.lower() == p.lower() for p in env.packages)
    if found is None:
        state = "loaded" if loaded and installed is None else "not-installed"
    elif not found.enabled:
        state = "disabled"
    else:
        state = "loaded" if loaded else "not-loaded"
    out: dict[str, Any] = {
        "id": pack.key,
        "title": pack.title,
        "author": pack.author,
        "description": pack.description,
        "repository": pack.repository,
        "registryId": pack.registry_id or (found.registry_id if found else None),
        "state": state,
        "note": PACK_NOTES.get(state),
        "version": found.version if found else None,
        "nodeTypes": [],
        "license": None,
        "size": None,  # neither Manager nor the Registry gives one
    }
    details = lookups.registry.details(pack) if lookups.registry else None
    if details is not None:  # what Manager's map lacks, from the Registry
        if details.name and pack.title in (pack.key, pack.registry_id):
            out["title"] = details.name
        for field in ("author", "description", "repository"):
            out[field] = out[field] or getattr(details, field)
        out["registryId"] = out["registryId"] or details.id
        out.update(
            license=details.license,
            downloads=details.downloads,
            latestVersion=details.latest_version,
            detailsFrom=REGISTRY_MAP,
        )
    return out


def _repo_folder(pack: Pack) -> str:
    return (pack.repository or pack.key).rstrip("/").split("/")[-1].removesuffix(".git")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
