"""A pack as the Comfy Registry describes it: its `Node` schema (/work/notes/registry_api.md),
read leniently (every field is optional in the spec; a field of the wrong type is dropped), and
its `license` shown as the ComfyUI frontend shows it (`formatLicense`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .node_map import Pack

LICENCE_FILE = re.compile(r"^license(\.md|\.txt)?$", re.IGNORECASE)
GITHUB_REPO = re.compile(r"^(https?://github\.com/[^/]+/[^/]+)", re.IGNORECASE)
LICENCE_CHARS = 120  # some packs put the whole licence text there


@dataclass(frozen=True)
class RegistryPack:
    id: str
    name: str | None
    description: str | None
    author: str | None  # `author`, else the publisher's name or id
    repository: str | None
    license: str | None  # as shown: "MIT", or the licence file's address
    downloads: int | None
    latest_version: str | None
    status: str | None  # NodeStatusActive | NodeStatusDeleted | NodeStatusBanned


def parse_registry_pack(data: Any) -> RegistryPack | None:
    """A `Node`, or None for anything without an `id`."""
    if not isinstance(data, dict) or not _text(data.get("id")):
        return None
    publisher = _object(data.get("publisher"))
    latest = _object(data.get("latest_version"))
    repository = _text(data.get("repository")) or None
    downloads = data.get("downloads")
    return RegistryPack(
        id=_text(data["id"]),
        name=_text(data.get("name")) or None,
        description=_text(data.get("description")) or None,
        author=_text(data.get("author"))
        or _text(publisher.get("name"))
        or _text(publisher.get("id"))
        or None,
        repository=repository,
        license=licence_text(data.get("license"), repository),
        downloads=downloads if isinstance(downloads, int) and downloads >= 0 else None,
        latest_version=_text(latest.get("version")) or None,
        status=_text(data.get("status")) or None,
    )


def licence_text(raw: Any, repository: str | None) -> str | None:
    """`license` is a string: "{}" (none), a serialised pyproject table ({"file": "LICENSE"}
    or {"text": "MIT"}), a licence file's name, or the licence's name."""
    text = _text(raw)
    if not text or text == "{}":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if isinstance(value, dict):
        named = value.get("text") if isinstance(value.get("text"), str) else value.get("file")
        value = named if isinstance(named, str) else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if LICENCE_FILE.match(value) and repository:
        base = GITHUB_REPO.match(repository)
        return f"{base.group(1) if base else repository.rstrip('/')}/blob/main/{value}"
    first = value.splitlines()[0].strip()
    return first if len(first) <= LICENCE_CHARS else first[: LICENCE_CHARS - 1] + "…"


def same_repository(a: str | None, b: str | None) -> bool:
    return bool(a and b) and _repo_key(a or "") == _repo_key(b or "")


def _repo_key(url: str) -> str:
    url = re.sub(r"^[a-z]+://", "", url.strip().lower()).removeprefix("www.")
    return url.rstrip("/").removesuffix(".git")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


@dataclass(frozen=True)
class RegistryFacts:
    """What the Registry answered for one scan: the packs it names for node types, the types it
    knows no pack for, every pack it described, and why some question got no answer."""

    by_type: dict[str, RegistryPack]
    unknown_types: frozenset[str]
    packs: tuple[RegistryPack, ...]
    reason: str | None = None

    def details(self, pack: Pack) -> RegistryPack | None:
        """The Registry's entry for a pack of the scan: by Registry id, else by repository."""
        wanted = (pack.registry_id or "").lower()
        found = [p for p in self.packs if wanted and p.id.lower() == wanted]
        found += [p for p in self.packs if same_repository(p.repository, pack.repository)]
        return found[0] if found else None


def as_pack(entry: RegistryPack) -> Pack:
    """A pack the Registry names for a node type, as the scan lists packs."""
    return Pack(
        entry.id,
        entry.name or entry.id,
        entry.author,
        entry.description,
        entry.repository,
        entry.id,
    )
