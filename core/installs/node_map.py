"""Which pack provides a node type, and which packs are installed: ComfyUI-Manager's answers, as
the Manager client reads them (manager_client.py) and the scan uses them (scan.py).

The node map is Manager's `getmappings`: `{pack key: [[node types], {title_aux, author,
nodename_pattern?, preemptions?, …}]}`, keyed by repository URL (Manager offline) or by Comfy
Registry id (online, `map_to_unified_keys`): one map holds both. The installed packs are Manager's
`customnode/installed`: `{folder: {ver, cnr_id, aux_id, enabled}}`, a disabled pack under
`<cnr_id>@<version>`. Both are parsed leniently: an entry of another shape is skipped, never
fatal; only a body that is not a JSON object at all is refused (`parse_*` give None).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("comfyui_assistant")

MANAGER_MAP = "ComfyUI-Manager's node map"
REGISTRY_MAP = "the Comfy Registry"
PATTERN_CHARS = 500  # a longer nodename_pattern is not one of Manager's


@dataclass(frozen=True)
class Pack:
    key: str  # the map's key: a repository URL or a Registry id
    title: str
    author: str | None
    description: str | None
    repository: str | None
    registry_id: str | None

    @classmethod
    def parse(cls, key: str, meta: Mapping[str, Any]) -> Pack:
        url = key if key.startswith(("https://", "http://")) else None
        return cls(
            key,
            _text(meta.get("title_aux")) or _text(meta.get("title")) or _repo_name(key),
            _text(meta.get("author")) or None,
            _text(meta.get("description")) or None,
            url or _text(meta.get("reference")) or _text(meta.get("repository")) or None,
            None if url else key,
        )


def recorded_pack(registry_id: str | None, repo: str | None) -> Pack | None:
    """The pack a saved node names in its properties (`cnr_id`, `aux_id`), when no map has
    its type: what the frontend recorded when the workflow was saved."""
    if registry_id is None and repo is None:
        return None
    url = f"https://github.com/{repo}" if repo else None
    key = registry_id or url or ""
    return Pack(key, registry_id or _repo_name(key), None, None, url, registry_id)


class NodeMap:
    """Node type -> the packs that provide it, as Manager resolves a missing node: the packs
    that claim the type (`preemptions`) first, then those listing it in the map's order; only
    when none does, those whose `nodename_pattern` finds it."""

    def __init__(self, data: Mapping[str, Any], source: str = MANAGER_MAP) -> None:
        self.source = source
        self.packs: dict[str, Pack] = {}
        self._listed: dict[str, list[str]] = {}
        self._claims: dict[str, list[str]] = {}
        patterns: list[tuple[re.Pattern[str], str]] = []
        for key, entry in data.items():
            if isinstance(key, str) and isinstance(entry, list) and len(entry) == 2:
                patterns += self._add(key, entry[0], entry[1])
        self.patterns = tuple(patterns)

    def _add(self, key: str, types: Any, meta: Any) -> list[tuple[re.Pattern[str], str]]:
        if not isinstance(types, list) or not isinstance(meta, Mapping):
            return []
        self.packs[key] = Pack.parse(key, meta)
        for node_type in types:
            if isinstance(node_type, str):
                self._listed.setdefault(node_type, []).append(key)
        for node_type in meta.get("preemptions") or []:
            if isinstance(node_type, str):
                self._claims.setdefault(node_type, []).append(key)
        pattern = meta.get("nodename_pattern")
        if not (isinstance(pattern, str) and 0 < len(pattern) <= PATTERN_CHARS):
            return []
        try:
            return [(re.compile(pattern), key)]
        except re.error:  # one pack's bad regex must not hide the others
            log.info("ignoring the node name pattern %r of %s: not a regex", pattern, key)
            return []

    def providers(self, node_type: str) -> list[Pack]:
        name = node_type.strip()  # as Manager's UI: " AddMask " is AddMask
        keys = [*self._claims.get(name, []), *self._listed.get(name, [])]
        if not keys:
            keys = [key for pattern, key in self.patterns if pattern.search(name)]
        return [self.packs[key] for key in dict.fromkeys(keys)]


def parse_node_map(body: Any, source: str = MANAGER_MAP) -> NodeMap | None:
    return NodeMap(body, source) if isinstance(body, Mapping) else None


@dataclass(frozen=True)
class Installed:
    key: str  # Manager's key: the folder, or `<cnr_id>@<version>` for a disabled pack
    version: str | None  # a semantic version or a git commit
    registry_id: str | None
    repo: str | None  # "author/name" of a git clone (`aux_id`)
    enabled: bool

    @property
    def folder(self) -> str:
        return self.key.split("@")[0]

    @property
    def id(self) -> str:
        return self.registry_id or self.repo or self.folder

    def provides(self, pack: Pack) -> bool:
        """Whether this is the map's `pack`: by Registry id, else by "author/name", else by
        name (a clone's folder and, mostly, the Registry id are named after the repository)."""
        if self.registry_id and pack.registry_id:
            return self.registry_id.lower() == pack.registry_id.lower()
        repo = _owner_repo(pack.repository)
        if self.repo and repo:  # (a fork of the same name is another pack)
            return self.repo.lower() == repo.lower()
        wanted = {x.lower() for x in (pack.registry_id, repo and repo.split("/")[-1]) if x}
        return bool(wanted & {x.lower() for x in (self.registry_id, self.folder) if x})


class InstalledPacks(Mapping[str, Installed]):
    """The installed packs by id (Registry id, else "author/name", else folder); of an enabled
    and a disabled copy of one pack, the enabled one."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._by_id: dict[str, Installed] = {}
        for key, info in data.items():
            if not isinstance(info, Mapping):
                continue
            pack = Installed(
                str(key),
                _text(info.get("ver")) or None,
                _text(info.get("cnr_id")) or None,
                _text(info.get("aux_id")) or None,
                info.get("enabled") is not False,
            )
            known = self._by_id.get(pack.id)
            if known is None or (pack.enabled and not known.enabled):
                self._by_id[pack.id] = pack

    def __getitem__(self, pack_id: str) -> Installed:
        return self._by_id[pack_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def find(self, pack: Pack) -> Installed | None:
        """The installed copy of a map's pack, an enabled one first."""
        found = [p for p in self._by_id.values() if p.provides(pack)]
        return next((p for p in found if p.enabled), found[0] if found else None)


def parse_installed(body: Any) -> InstalledPacks | None:
    return InstalledPacks(body) if isinstance(body, Mapping) else None


def _owner_repo(url: str | None) -> str | None:
    """ "author/name" of a repository URL (github.com/author/name[.git])."""
    if not url:
        return None
    parts = [p for p in re.sub(r"^[a-z]+://[^/]+/", "", url).split("/") if p]
    if len(parts) < 2:
        return None
    return f"{parts[0]}/{parts[1].removesuffix('.git')}"


def _repo_name(key: str) -> str:
    return key.rstrip("/").split("/")[-1].removesuffix(".git") or key


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
