"""What the scan asks ComfyUI-Manager (`Lookups`): its node map, its installed packs and its
model list, each in place or with the reason it is not (the scan shows the reasons in
`sources.notes`). Manager's routes live on ComfyUI's own server: inside ComfyUI its loopback
address, known once ComfyUI listens (so asked at each scan); standalone, COMFYUI_URL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from .manager_client import ManagerClient, Unavailable
from .scan import Lookups

LookupProvider = Callable[[], Awaitable[Lookups]]
ComfyUIAddress = Callable[[], str | None]  # ComfyUI's URL now; None before it listens
NO_COMFYUI_URL = (
    "ComfyUI-Manager is not reachable: the assistant runs without ComfyUI and COMFYUI_URL is "
    "not set (set it to ComfyUI's address, e.g. http://127.0.0.1:8188)"
)
NOT_LISTENING = "ComfyUI-Manager is not reachable yet: ComfyUI is not listening"


async def no_lookups() -> Lookups:
    return Lookups(notes=(NO_COMFYUI_URL,))


def standalone_lookups(environ: Mapping[str, str]) -> LookupProvider:
    """Outside ComfyUI: the Manager of the ComfyUI at COMFYUI_URL, else none."""
    url = environ.get("COMFYUI_URL", "").strip()
    return manager_lookups(lambda: url) if url else no_lookups


def manager_lookups(address: ComfyUIAddress) -> LookupProvider:
    async def lookups() -> Lookups:
        url = address()
        if not url:
            return Lookups(notes=(NOT_LISTENING,))
        return await ask_manager(ManagerClient(url))

    return lookups


async def ask_manager(client: ManagerClient) -> Lookups:
    """The client caches each answer (the node map is about 1 MB), so a scan rarely waits."""
    await client.detect()  # once, before the three lists ask for it
    node_map, installed, models = await asyncio.gather(
        client.node_map(), client.installed(), client.model_list()
    )
    # (the model list only the legacy UI serves: a flag the panel words for the user, no fault)
    failed = [x for x in (node_map, installed, models) if isinstance(x, Unavailable)]
    reasons = [x.reason for x in failed if not x.legacy_ui_only]
    return Lookups(
        node_map=None if isinstance(node_map, Unavailable) else node_map,
        installed=None if isinstance(installed, Unavailable) else installed,
        models=None if isinstance(models, Unavailable) else models,
        notes=tuple(dict.fromkeys(reasons)),  # without Manager, all three say the same
        model_list_legacy_only=isinstance(models, Unavailable) and models.legacy_ui_only,
    )
