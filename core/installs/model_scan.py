"""The model files of a workflow: each loader widget's value against the files its combo lists,
the download entries the workflow carries, Manager's model list; what is missing and where it
would be downloaded from (the scan's model half, scan.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import Environment, Input
from .download_checks import PICKLE_SUFFIXES
from .model_refs import (
    ModelEntry,
    download_problem,
    entries,
    folder_name,
    is_model_file,
    url_host,
)
from .workflow_nodes import WorkflowNode

SEED_INPUTS = ("seed", "noise_seed")  # the frontend gives these a control widget unasked
# Where ComfyUI's own loaders read their files from, for a missing file no entry describes.
LOADER_FOLDERS = {
    "ckpt_name": "checkpoints", "lora_name": "loras", "vae_name": "vae",
    "unet_name": "diffusion_models", "clip_name": "text_encoders",
    "clip_name1": "text_encoders", "clip_name2": "text_encoders",
    "clip_name3": "text_encoders", "clip_name4": "text_encoders",
    "control_net_name": "controlnet", "gligen_name": "gligen", "style_model_name": "style_models",
    "hypernetwork_name": "hypernetworks", "photomaker_model_name": "photomaker",
    "audio_encoder_name": "audio_encoders",
    "CLIPVisionLoader.clip_name": "clip_vision", "UpscaleModelLoader.model_name": "upscale_models",
    "ModelPatchLoader.name": "model_patches",
}  # fmt: skip
SOURCE_ORDER = {"node": 0, "workflow": 1, "manager": 2}


@dataclass
class _Model:
    name: str
    entries: list[ModelEntry] = field(default_factory=list)
    folder_from_files: str | None = None  # the folder whose listing the loader shows
    folder_from_loader: str | None = None  # LOADER_FOLDERS
    nodes: list[dict[str, Any]] = field(default_factory=list)
    seen: list[bool] = field(default_factory=list)  # each widget's verdict: value installed?

    def download(self) -> ModelEntry | None:
        """The entry to download from: the node's own, else the workflow's, else Manager's
        (its URL and hash go together: a hash is only checked against the file it names)."""
        ordered = sorted(self.entries, key=lambda e: SOURCE_ORDER[e.source])
        return next((e for e in ordered if e.url), None)

    def size(self) -> int | None:
        return next((e.size for e in self.entries if e.size), None)

    def directory(self) -> str | None:
        by_entry = [e.directory for e in self.entries if e.source != "manager" and e.directory]
        by_manager = [e.directory for e in self.entries if e.source == "manager" and e.directory]
        choices = [*by_entry, self.folder_from_files, *by_manager, self.folder_from_loader]
        return next((d for d in choices if d), None)


def widget_values(env: Environment, node: WorkflowNode) -> dict[str, Any]:
    """A node's widget values by input name. A saved list follows the node definition's
    widget inputs in order, with the frontend's control widget ("control_after_generate")
    after each seed-like INT (as ui/src/litegraph/defs.ts controlDefault); a dict is by name
    already; an API node's inputs are by name (a link [node, slot] is no value)."""
    if node.inputs is not None:
        return {k: v for k, v in node.inputs.items() if not isinstance(v, list)}
    if isinstance(node.widgets, dict):
        return dict(node.widgets)
    values = list(node.widgets or [])
    out: dict[str, Any] = {}
    i = 0
    for inp in env.node_inputs(node.type):
        if inp.kind is None:
            continue
        if i < len(values):
            out[inp.name] = values[i]
        i += 1 + _has_control(inp)
    return out


def _has_control(inp: Input) -> bool:
    if inp.kind != "int":
        return False
    flag = inp.options.get("control_after_generate")
    return bool(inp.name in SEED_INPUTS if flag is None else flag)


class ModelScan:
    """The model files a workflow's nodes name, and which of them this ComfyUI lacks."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.models: dict[str, _Model] = {}
        self._listed: set[str] | None = None

    def _model(self, name: str) -> _Model:
        return self.models.setdefault(name, _Model(name))

    def node(self, node: WorkflowNode) -> None:
        declared = entries(node.models, "node")
        used: set[str] = set()
        if node.type in self.env.nodes:
            by_name = {e.name: e for e in declared}
            values = widget_values(self.env, node)
            for inp in self.env.node_inputs(node.type):
                value = values.get(inp.name)
                if inp.kind != "combo" or not isinstance(value, str) or not value:
                    continue
                entry = by_name.get(value) or by_name.get(_basename(value))
                if entry is None and not is_model_file(value):
                    continue
                model = self._model(value)
                model.seen.append(_installed(value, inp.choices or []))
                model.folder_from_files = model.folder_from_files or self._folder_of(inp)
                model.folder_from_loader = model.folder_from_loader or _loader_folder(
                    node.type, inp.name
                )
                model.nodes.append({**node.ref(), "input": inp.name})
                if entry is not None:
                    model.entries.append(entry)
                    used.add(entry.name)
        for entry in declared:
            if entry.name not in used:  # a node of a missing type, or no widget holds it
                model = self._model(entry.name)
                model.entries.append(entry)
                model.nodes.append(node.ref())

    def top_level(self, declared: list[ModelEntry]) -> None:
        for entry in declared:
            self._model(entry.name).entries.append(entry)

    def enrich(self, manager: Mapping[str, ModelEntry]) -> None:
        for model in self.models.values():
            listed = manager.get(model.name) or manager.get(_basename(model.name))
            if listed is not None:
                model.entries.append(listed)

    def _folder_of(self, inp: Input) -> str | None:
        """The models folder whose files the combo lists (when any are installed)."""
        files = {str(c) for c in inp.choices or [] if is_model_file(str(c))}
        for folder, listed in self.env.models.items():
            if files and files <= set(listed):
                return folder_name(folder)
        return None

    def _on_disk(self, model: _Model, directory: str | None) -> bool:
        """For an entry no widget holds: its folder's listing (inside ComfyUI), else the files
        any loader of object_info lists (standalone: no folder listing)."""
        folders = {folder_name(k): v for k, v in self.env.models.items()}
        if directory in folders:
            return _installed(model.name, folders[directory])
        if self._listed is None:
            self._listed = {
                str(choice)
                for node_type in self.env.nodes
                for inp in self.env.node_inputs(node_type)
                for choice in inp.choices or []
            }
        return _installed(model.name, self._listed)

    def result(
        self, folders: Iterable[str], trusted: Callable[[str], bool] = lambda url: False
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        known = set(folders)
        missing, present = [], []
        for model in self.models.values():
            directory = model.directory()
            there = any(model.seen) if model.seen else self._on_disk(model, directory)
            if there:
                present.append({"name": model.name, "directory": directory, "nodes": model.nodes})
                continue
            entry = model.download()
            url, digest = (entry.url, entry.hash) if entry else (None, None)
            problem = download_problem(model.name, url, directory, known, trusted)
            missing.append(
                {
                    "name": model.name,
                    "directory": directory,
                    "url": url,
                    "host": url_host(url),
                    "hash": digest,
                    "hashType": "SHA256" if digest else None,
                    "size": model.size(),  # bytes; a HEAD may give it later (model_sizes.py)
                    "sizeFrom": "manager" if model.size() else None,
                    "pickle": model.name.lower().endswith(PICKLE_SUFFIXES),
                    "source": entry.source if entry else None,
                    "nodes": model.nodes,
                    "downloadable": problem is None,
                    "problem": problem,
                }
            )
        return missing, present


def _installed(name: str, files: Iterable[Any]) -> bool:
    """Whether `name` is among the files: as written, with either slash, or by its base name
    (a template names a file that the user keeps in a sub-folder)."""
    wanted = name.replace("\\", "/")
    for file in files:
        text = str(file).replace("\\", "/")
        if text == wanted or _basename(text) == wanted:
            return True
    return False


def _basename(name: str) -> str:
    return name.replace("\\", "/").rsplit("/", 1)[-1]


def _loader_folder(node_type: str, input_name: str) -> str | None:
    return LOADER_FOLDERS.get(f"{node_type}.{input_name}") or LOADER_FOLDERS.get(input_name)
