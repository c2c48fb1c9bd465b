"""ComfyUI-Manager's pack list (legacy `customnode/getlist`): the only Manager source of a pack's
author and description (it has no licence and no size). Pure parsing, as node_map.py: an entry
of the wrong shape is skipped; a body without `node_packs` is refused (None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PackInfo:
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
