"""The downloads an install asks for, by model name, resolved in a stored scan: the address,
folder, hash and size are the scan's record of the model, never a client's (the size only as
its host gave it: Manager's is rounded, not one to check the free room against). A name the
scan does not list, or lists as not downloadable (with the scan's reason), is refused before
any download starts."""

from __future__ import annotations

from typing import Any

from ..base import RequestError, coded
from .download_checks import DownloadError, DownloadSpec, plan
from .downloads import Job
from .scan import ScanResult
from .user_downloads import UserDownloads

MODELS_LIMIT = 50  # more than any workflow needs at once


def requested_names(body: Any) -> tuple[str, list[str]]:
    """The scan id and the model names of `{"scan": id, "models": [name, ...]}`; anything else
    (an address, a folder: the scan has those) is refused."""
    if (
        not isinstance(body, dict)
        or set(body) != {"scan", "models"}
        or not isinstance(body["scan"], str)
        or not 0 < len(body["scan"]) <= 64
        or not isinstance(body["models"], list)
        or not 0 < len(body["models"]) <= MODELS_LIMIT
        or not all(isinstance(n, str) and 0 < len(n) <= 1024 for n in body["models"])
    ):
        raise RequestError(coded("installs.downloads_body", limit=MODELS_LIMIT))
    return body["scan"], list(dict.fromkeys(body["models"]))


def download_specs(scan_id: str, result: ScanResult, names: list[str]) -> list[DownloadSpec]:
    """One spec per name, from the scan's missing model of that name."""
    missing = {m["name"]: m for m in result.missing_models}
    specs = []
    for name in names:
        model = missing.get(name)
        if model is None:
            listed = ", ".join(missing) or "none"
            raise RequestError(
                coded("installs.model_not_in_scan", name=name[:200], scan=scan_id, names=listed)
            )
        if not model["downloadable"]:
            raise RequestError(
                coded("installs.model_not_downloadable", name=name, reason=model["problem"])
            )
        specs.append(
            DownloadSpec(
                url=model["url"],
                folder=model["directory"],
                name=name,
                size=model["size"] if model.get("sizeFrom") == "host" else None,
                sha256=model["hash"],
            )
        )
    return specs


def start_downloads(
    downloads: UserDownloads, scan_id: str, result: ScanResult, names: list[str]
) -> list[Job]:
    """Start the downloads of the scan's missing models `names`, every one checked (the
    name, the folder, the address: download_checks.plan) before the first starts; a check that
    fails is a 400 that says what is wrong."""
    specs = download_specs(scan_id, result, names)
    try:
        for spec in specs:
            plan(spec, downloads.origins, downloads.folders)
    except DownloadError as exc:
        raise RequestError(exc.coded) from None
    return [downloads.start(spec) for spec in specs]
