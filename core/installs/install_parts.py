"""What the service keeps for installs, built in one place from its options: where missing nodes
and models are looked up (Manager, and the Comfy Registry or why it is not asked), the scans
made, the downloads and the model sizes' lookups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..base import offline
from .download_checks import Origins
from .downloads import Downloads
from .lookups import LookupProvider, standalone_lookups
from .manager_client import Unavailable
from .model_folders import ModelFolders
from .model_sizes import ModelSizes
from .registry_client import RegistryClient, registry_from_environ
from .scans import ScanStore


@dataclass(frozen=True)
class InstallParts:
    lookups: LookupProvider
    registry: RegistryClient | Unavailable  # or why it is not asked
    scans: ScanStore
    downloads: Downloads
    model_sizes: ModelSizes

    @classmethod
    def build(
        cls,
        environ: Mapping[str, str],
        data_dir: Path,
        lookups: LookupProvider | None = None,  # default: COMFYUI_URL's Manager, if set
        model_folders: ModelFolders | None = None,  # default: <data_dir>/models/<folder>
    ) -> InstallParts:
        lookups = lookups or standalone_lookups(environ)
        registry = registry_from_environ(environ)
        downloads = Downloads(
            model_folders or ModelFolders.standalone(data_dir), Origins.from_environ(environ)
        )
        sizes = ModelSizes(downloads.origins, offline(environ))
        return cls(lookups, registry, ScanStore(), downloads, sizes)
