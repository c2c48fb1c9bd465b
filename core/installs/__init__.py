"""Installing what a workflow needs (issue 28): which node packs and models it lacks (`scan`), where
they come from: ComfyUI-Manager read over HTTP (`manager_client`), its answers parsed once
(`node_map`: node map and installed packs; `model_refs`: model list; `pack_list`: pack list)
and handed to the scan (`lookups`); the Comfy Registry, when online (`registry_client`, its
packs in `registry_pack`), asked for what Manager leaves open (`registry_lookups`); models
downloaded into ComfyUI's folders (`downloads`); all of it built for the service in one
place (`install_parts`).

May import: base, knowledge, store.
"""

from .downloads import Job
from .install_parts import InstallParts
from .lookups import ComfyUIAddress, LookupProvider, manager_lookups
from .manager_client import comfyui_loopback_url
from .model_folders import ModelFolders
from .registry_client import registry_origin
from .registry_lookups import scan_with_registry
from .scan_downloads import requested_names, start_downloads
from .scans import ScanStore
from .user_downloads import UserDownloads

__all__ = [
    "ComfyUIAddress",
    "InstallParts",
    "Job",
    "LookupProvider",
    "ModelFolders",
    "ScanStore",
    "UserDownloads",
    "comfyui_loopback_url",
    "manager_lookups",
    "registry_origin",
    "requested_names",
    "scan_with_registry",
    "start_downloads",
]
