"""Which pack provides a node type, and which packs are installed: ComfyUI-Manager's answers.

The node map is Manager's `getmappings`: `{pack key: [[node types], {title_aux, author,
nodename_pattern?, preemptions?, …}]}`, keyed by repository URL (Manager offline) or by Comfy
Registry id (online). The installed packs are Manager's `customnode/installed`:
`{folder: {ver, cnr_id, aux_id, enabled}}`, a disabled pack under `<cnr_id>@<version>`.
Both are parsed leniently: an entry of another shape is skipped, never fatal.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
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


@dataclass(frozen=True)
class Installed:
    folder: str
    version: str | None
    registry_id: str | None
    repo: str | None  # "author/name" of a git clone
    enabled: bool


class NodeMap:
    """Node type -> the packs that provide it, in order: a pack that claims the type
    (`preemptions`) first, then the map's own order; `nodename_pattern` matches last."""

    def __init__(self, data: Mapping[str, Any], source: str = MANAGER_MAP) -> None:
        self.source = source
        self.packs: dict[str, Pack] = {}
        self._listed: dict[str, list[str]] = {}
        self._claims: dict[str, list[str]] = {}
        self._patterns: list[tuple[re.Pattern[str], str]] = []
        for key, entry in data.items():
            if isinstance(key, str) and isinstance(entry, list) and len(entry) == 2:
                self._add(key, entry[0], entry[1])

    def _add(self, key: str, types: Any, meta: Any) -> None:
        if not isinstance(types, list) or not isinstance(meta, Mapping):
            return
        self.packs[key] = Pack.parse(key, meta)
        for node_type in types:
            if isinstance(node_type, str):
                self._listed.setdefault(node_type, []).append(key)
        for node_type in meta.get("preemptions") or []:
            if isinstance(node_type, str):
                self._claims.setdefault(node_type, []).append(key)
        pattern = meta.get("nodename_pattern")
        if isinstance(pattern, str) and 0 < len(pattern) <= PATTERN_CHARS:
            try:
                self._patterns.append((re.compile(pattern), key))
            except re.error:
                log.info("ignoring the node name pattern %r of %s: not a regex", pattern, key)

    def providers(self, node_type: str) -> list[Pack]:
        keys = [*self._claims.get(node_type, []), *self._listed.get(node_type, [])]
        keys += [key for pattern, key in self._patterns if pattern.search(node_type)]
        return [self.packs[key] for key in dict.fromkeys(keys)]


class InstalledPacks:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.packs = [
            Installed(
                str(folder).split("@")[0],
                _text(info.get("ver")) or None,
                _text(info.get("cnr_id")) or None,
                _text(info.get("aux_id")) or None,
                info.get("enabled") is not False,
            )
            for folder, info in data.items()
            if isinstance(info, Mapping)
        ]

    def find(self, pack: Pack) -> Installed | None:
        """The installed pack a map entry names: by Registry id, by "author/name", else by the
        folder a clone of its repository gets (Manager names both after the repository)."""
        repo = _owner_repo(pack.repository)
        name = repo.split("/")[-1] if repo else None
        wanted = {x.lower() for x in (pack.registry_id, name) if x}
        for installed in self.packs:
            if installed.repo and repo and installed.repo.lower() == repo.lower():
                return installed
            names = {x.lower() for x in (installed.registry_id, installed.folder) if x}
            if names & wanted:
                return installed
        return None


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
