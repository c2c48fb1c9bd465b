"""ComfyUI-Manager's answers as data: its node map (`getmappings`), its installed packs
(`customnode/installed`) and, where the legacy handlers serve them, its pack and model lists.
Pure parsing: an entry of the wrong shape is skipped, never an exception; only a body that is
not the expected JSON container at all is refused (`None`), and the caller says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MappedPack:
    """A pack of the node map. Its key is a repository URL, or the Registry's id when Manager
    reached the Registry (`map_to_unified_keys`): a client meets both in one map."""

    key: str
    title: str
    node_types: tuple[str, ...]
    pattern: str | None = None  # `nodename_pattern`: node types it provides beyond its list
    meta: dict[str, Any] = field(default_factory=dict)  # author, description, nickname, ...

    @property
    def is_url(self) -> bool:
        return "://" in self.key


@dataclass(frozen=True)
class NodeMap:
    packs: dict[str, MappedPack]
    by_type: dict[str, tuple[str, ...]]  # node type -> the keys of the packs listing it
    patterns: tuple[tuple[re.Pattern[str], str], ...]  # (nodename_pattern, pack key)
    preemptions: dict[str, str]  # node type -> the pack whose type wins when several list it

    def packs_for(self, node_type: str) -> list[str]:
        """The packs that provide a node type: those listing it (the preempting one first),
        else those whose pattern finds it, as Manager's UI resolves a missing node."""
        name = node_type.strip()
        listed = list(self.by_type.get(name, ()))
        first = self.preemptions.get(name)
        if first in listed:
            listed.remove(first)
            return [first, *listed]
        if listed:
            return listed
        return [key for pattern, key in self.patterns if pattern.search(name)]


def parse_node_map(body: Any) -> NodeMap | None:
    if not isinstance(body, dict):
        return None
    packs: dict[str, MappedPack] = {}
    by_type: dict[str, list[str]] = {}
    patterns: list[tuple[re.Pattern[str], str]] = []
    preemptions: dict[str, str] = {}
    for key, entry in body.items():
        pack = _mapped_pack(key, entry)
        if pack is None:
            continue
        packs[key] = pack
        for name in pack.node_types:
            by_type.setdefault(name, []).append(key)
        for name in pack.meta.get("preemptions") or []:
            preemptions.setdefault(str(name), key)
        compiled = _compiled(pack.pattern)
        if compiled is not None:
            patterns.append((compiled, key))
    frozen = {name: tuple(keys) for name, keys in by_type.items()}
    return NodeMap(packs, frozen, tuple(patterns), preemptions)


def _mapped_pack(key: Any, entry: Any) -> MappedPack | None:
    """`[[node types…], {title_aux, nodename_pattern?, …}]`, as getmappings sends a pack."""
    if not (isinstance(key, str) and isinstance(entry, list) and len(entry) == 2):
        return None
    names, meta = entry
    if not (isinstance(names, list) and isinstance(meta, dict)):
        return None
    title = meta.get("title_aux") or meta.get("title") or key
    pattern = meta.get("nodename_pattern")
    return MappedPack(
        key,
        str(title),
        tuple(str(n) for n in names if isinstance(n, str)),
        pattern if isinstance(pattern, str) else None,
        {k: v for k, v in meta.items() if k != "nodename_pattern"},
    )


def _compiled(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error:  # one pack's bad regex must not hide the others
        return None


@dataclass(frozen=True)
class InstalledPack:
    id: str  # its Registry id, else `author/repo`, else its folder name
    key: str  # Manager's key: the folder, or `<cnr_id>@<version>` for a disabled pack
    version: str  # a semantic version or a git commit
    enabled: bool
    cnr_id: str
    aux_id: str | None

    def provides(self, map_key: str) -> bool:
        """Whether this is the node map's pack `map_key` (a Registry id or a repository URL)."""
        if map_key in (self.cnr_id, self.id):
            return bool(map_key)
        if "://" not in map_key:
            return False
        repo = repo_path(map_key)
        if self.aux_id:
            return repo == self.aux_id.lower()
        return repo.rsplit("/", 1)[-1] == self.key.split("@")[0].lower()


def repo_path(url: str) -> str:
    """`author/repo` of a repository URL, lower case (how Manager's aux_id names a git pack)."""
    path = url.split("://", 1)[-1].split("/", 1)[-1].strip("/").lower()
    return path[:-4] if path.endswith(".git") else path


def parse_installed(body: Any) -> dict[str, InstalledPack] | None:
    """By id; of an enabled and a disabled copy of one pack, the enabled one."""
    if not isinstance(body, dict):
        return None
    out: dict[str, InstalledPack] = {}
    for key, entry in body.items():
        if not (isinstance(key, str) and isinstance(entry, dict)):
            continue
        cnr_id = entry.get("cnr_id") if isinstance(entry.get("cnr_id"), str) else ""
        aux_id = entry.get("aux_id") if isinstance(entry.get("aux_id"), str) else None
        pack = InstalledPack(
            id=cnr_id or aux_id or key.split("@")[0],
            key=key,
            version=str(entry.get("ver", "")),
            enabled=entry.get("enabled") is not False,
            cnr_id=cnr_id or "",
            aux_id=aux_id,
        )
        if pack.id not in out or (pack.enabled and not out[pack.id].enabled):
            out[pack.id] = pack
    return out


@dataclass(frozen=True)
class PackInfo:
    """A pack of the legacy `customnode/getlist`: the only Manager source of author and
    description (it has no licence and no size)."""

    key: str
    id: str | None
    title: str
    author: str
    description: str
    repository: str
    state: str  # not-installed | enabled | disabled | ...


def parse_pack_list(body: Any) -> dict[str, PackInfo] | None:
    """Each pack under every name the node map may give it: its key, id and URLs."""
    packs = body.get("node_packs") if isinstance(body, dict) else None
    if not isinstance(packs, dict):
        return None
    out: dict[str, PackInfo] = {}
    for key, entry in packs.items():
        if not (isinstance(key, str) and isinstance(entry, dict)):
            continue
        info = _pack_info(key, entry)
        files = entry.get("files")
        first = files[0] if isinstance(files, list) and files else None
        for name in (key, info.id, info.repository, entry.get("reference"), first):
            if isinstance(name, str) and name:
                out.setdefault(name, info)
    return out


def _pack_info(key: str, entry: dict[str, Any]) -> PackInfo:
    def text(name: str) -> str:
        value = entry.get(name)
        return value if isinstance(value, str) else ""

    return PackInfo(
        key=key,
        id=text("id") or None,
        title=text("title") or key,
        author=text("author"),
        description=text("description"),
        repository=text("repository") or text("reference"),
        state=text("state"),
    )


@dataclass(frozen=True)
class ModelEntry:
    """A model of Manager's model list (legacy `externalmodel/getlist`)."""

    name: str
    type: str
    base: str
    save_path: str  # "default" (the folder of its type) or a models/ subfolder
    filename: str
    url: str
    size: str  # as Manager writes it ("4.71MB"); "" when it has none
    installed: bool


def parse_model_list(body: Any) -> list[ModelEntry] | None:
    models = body.get("models") if isinstance(body, dict) else None
    if not isinstance(models, list):
        return None
    out = []
    for entry in models:
        if not isinstance(entry, dict):
            continue
        fields = {k: entry.get(k) for k in ("name", "type", "base", "save_path", "filename")}
        values = {k: v if isinstance(v, str) else "" for k, v in fields.items()}
        url, size = entry.get("url"), entry.get("size")
        if not (isinstance(url, str) and values["filename"]):
            continue
        installed = str(entry.get("installed")).lower() == "true"  # a string: "True"/"False"
        out.append(ModelEntry(**values, url=url, size=str(size or ""), installed=installed))
    return out
