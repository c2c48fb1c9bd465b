"""The scan with the Comfy Registry: a first pass with what ComfyUI-Manager answered shows what
is left to ask (the missing node types no map places; the packs named, for their licence and
details), the Registry is asked that, and a second pass (pure, as the first) uses its answers.
No missing pack: the Registry is not asked at all. Meanwhile the missing models' hosts are asked
their sizes (model_sizes.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..knowledge import Environment
from .manager_client import Unavailable
from .model_sizes import ModelSizes, with_sizes
from .registry_client import RegistryClient
from .registry_pack import RegistryFacts, RegistryPack
from .scan import Lookups, ScanResult, scan_workflow


async def scan_with_registry(
    workflow: Any,
    env: Environment,
    lookups: Lookups,
    registry: RegistryClient | Unavailable,
    trusted: Callable[[str], bool] = lambda url: False,
    sizes: ModelSizes | None = None,
) -> ScanResult:
    first = await asyncio.to_thread(scan_workflow, workflow, env, lookups, trusted)
    facts, found = await asyncio.gather(
        ask_registry(registry, first), sizes.find(first.missing_models) if sizes else _none()
    )
    if facts is None:
        return with_sizes(first, found)
    with_registry = replace(lookups, registry=facts)
    second = await asyncio.to_thread(scan_workflow, workflow, env, with_registry, trusted)
    return with_sizes(second, found)


async def _none() -> dict[str, int]:
    return {}


async def ask_registry(
    registry: RegistryClient | Unavailable, result: ScanResult
) -> RegistryFacts | None:
    """None when there is nothing to ask (no missing pack)."""
    types, ids = _questions(result)
    if not (types or ids):
        return None
    if isinstance(registry, Unavailable):
        return RegistryFacts({}, frozenset(), (), registry.reason)
    by_type = await asyncio.gather(*(registry.pack_for_node(t) for t in types))
    by_id = await asyncio.gather(*(registry.pack(i) for i in ids))
    packs = {a.id: a for a in [*by_type, *by_id] if isinstance(a, RegistryPack)}
    failed = list(dict.fromkeys(a.reason for a in [*by_type, *by_id] if isinstance(a, Unavailable)))
    return RegistryFacts(
        by_type={t: a for t, a in zip(types, by_type, strict=True) if isinstance(a, RegistryPack)},
        unknown_types=frozenset(t for t, a in zip(types, by_type, strict=True) if a is None),
        packs=tuple(packs.values()),
        reason=_first_of(failed),
    )


def _first_of(reasons: list[str]) -> str | None:
    """One reason, not one per node type: a Registry failing fails alike for all."""
    if len(reasons) < 2:
        return reasons[0] if reasons else None
    others = len(reasons) - 1
    return f"{reasons[0]} (and {others} other lookup{'s' if others > 1 else ''} failed)"


def _questions(result: ScanResult) -> tuple[list[str], list[str]]:
    """The node types to look up (those no pack was found for, and one of each pack known only
    by its repository: the Registry's pack for it tells its id) and the Registry ids to
    describe."""
    types = [m["type"] for m in result.missing_nodes if not m["packs"]]
    types += [p["nodeTypes"][0] for p in result.packs if not p["registryId"] and p["nodeTypes"]]
    ids = [p["registryId"] for p in result.packs if p["registryId"]]
    return list(dict.fromkeys(types)), list(dict.fromkeys(ids))
