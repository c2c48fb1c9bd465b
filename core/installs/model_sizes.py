"""The size of each missing model a scan found, asked of the host it downloads from: a HEAD to
its address, only where the downloader would start (download_checks.Origins: https to the
allowed hosts, or an extra origin), redirects followed only where the downloader follows them
(https: Hugging Face answers `resolve/` with a 302 to its CDN). The size is the final answer's
Content-Length, else the `X-Linked-Size` Hugging Face sends on that redirect for a file in LFS.

At most LIMIT addresses per scan, PARALLEL at a time, TIMEOUT each; a failure leaves the size
unknown and never fails the scan. A size found is kept for the process, a failure for
FAILED_TTL. `COMFY_ASSISTANT_OFFLINE=1`: nothing is asked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import aiohttp
from yarl import URL

from ..base import MODEL_SIZES, client_session
from .download_checks import DownloadError, Origins
from .download_transfer import HEADERS, MAX_REDIRECTS, REDIRECTS
from .scan import ScanResult

LIMIT = 16  # addresses asked per scan
PARALLEL = 8  # HEADs in flight: a scan waits at most two timeouts
TIMEOUT = 3.0  # seconds per address, its redirects included
FAILED_TTL = 30.0  # a failed address is asked again after this
CACHED = 1024  # sizes kept at most


class ModelSizes:
    def __init__(self, origins: Origins, offline: bool, timeout: float = TIMEOUT) -> None:
        self.origins, self.offline, self.timeout = origins, offline, timeout
        self._sizes: dict[str, int] = {}
        self._failed: dict[str, float] = {}  # address -> when it may be asked again

    async def find(self, models: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        """The sizes by address of the downloadable ones among a scan's missing models."""
        if self.offline:
            return {}
        wanted = {m["url"]: m["name"] for m in models if m["downloadable"] and self._may(m)}
        now = time.monotonic()
        ask = [u for u in wanted if u not in self._sizes and self._failed.get(u, 0) <= now]
        ask = ask[:LIMIT]
        if ask:
            gate = asyncio.Semaphore(PARALLEL)
            async with client_session(
                MODEL_SIZES,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),  # (nothing sent but the address)
            ) as session:
                found = await asyncio.gather(*(self._ask(session, gate, u, wanted[u]) for u in ask))
            self._keep(dict(zip(ask, found, strict=True)))
        return {u: self._sizes[u] for u in wanted if u in self._sizes}

    def _may(self, model: Mapping[str, Any]) -> bool:
        try:
            self.origins.check_start(model["url"], model["name"])
        except DownloadError:
            return False
        return True

    async def _ask(
        self, session: aiohttp.ClientSession, gate: asyncio.Semaphore, url: str, name: str
    ) -> int | None:
        async with gate:
            try:  # (the timeout covers the redirects too)
                return await asyncio.wait_for(self._head(session, URL(url), name), self.timeout)
            except (aiohttp.ClientError, asyncio.TimeoutError, DownloadError, ValueError):
                return None

    async def _head(self, session: aiohttp.ClientSession, url: URL, name: str) -> int | None:
        host, linked = url.host or "", None
        for _ in range(MAX_REDIRECTS + 1):
            async with session.head(url, headers=HEADERS, allow_redirects=False) as resp:
                if resp.status in REDIRECTS:
                    linked = _count(resp.headers.get("X-Linked-Size")) or linked
                    moved = url.join(URL(resp.headers.get("Location", "")))
                    url = self.origins.check_redirect(moved, name, host)  # (else DownloadError)
                    continue
                if resp.status == 200 and resp.content_type != "text/html":  # (not a login page)
                    return _count(resp.headers.get("Content-Length")) or linked
                return linked
        return linked

    def _keep(self, found: dict[str, int | None]) -> None:
        if len(self._sizes) + len(found) > CACHED:
            self._sizes.clear()
        if len(self._failed) + len(found) > CACHED:
            self._failed.clear()
        retry = time.monotonic() + FAILED_TTL
        for url, size in found.items():
            if size is None:
                self._failed[url] = retry
            else:
                self._sizes[url] = size
                self._failed.pop(url, None)


def _count(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def with_sizes(result: ScanResult, sizes: Mapping[str, int]) -> ScanResult:
    """The scan with each size its host gave (exact: it wins over Manager's rounded one)."""
    if not sizes:
        return result
    models = [
        {**m, "size": sizes[m["url"]], "sizeFrom": "host"} if m["url"] in sizes else m
        for m in result.missing_models
    ]
    return replace(result, missing_models=models)
