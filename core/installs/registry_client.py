"""The Comfy Registry (api.comfy.org) as the scan asks it, when it is online: which pack provides
a node type (`GET /comfy-nodes/{name}/node`) and a pack's details (`GET /nodes/{id}`), both
answering the Registry's `Node` (/work/notes/registry_api.md; registry_pack.py reads it).

Every answer is cached per process for a few minutes (a 404, "the Registry knows none", too);
a failure for a short while, and a Registry that did not answer at all (timeout, no route) is
taken as down for that while, so a scan with many missing types waits at most one timeout.
Nothing raises: each lookup gives the pack, None (unknown to the Registry) or `Unavailable`.

`COMFY_ASSISTANT_REGISTRY_URL` sets the address (tests, a mirror); `COMFY_ASSISTANT_OFFLINE=1`
means it is never asked (core/base/egress.py lists what else the switch turns off).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
from yarl import URL

from ..base import OFFLINE_ENV, REGISTRY, client_session, offline, origin_of, read_capped
from .manager_client import Unavailable
from .registry_pack import RegistryPack, parse_registry_pack

REGISTRY_ENV = "COMFY_ASSISTANT_REGISTRY_URL"
DEFAULT_URL = "https://api.comfy.org"
TIMEOUT = 3.0  # seconds per request
TTL = 300.0  # seconds an answer is reused
FAILED_TTL = 30.0  # a failure (and a Registry that is down) is asked again after this
MAX_BYTES = 1 << 20  # a Node is a few KB
PARALLEL = 4  # requests in flight per scan
CACHED = 2048  # answers kept at most (a few scans' worth of node types)
REGISTRY_OFF = f"the Comfy Registry is not asked ({OFFLINE_ENV} is set)"

Answer = RegistryPack | None | Unavailable
_cache: dict[tuple[str, str], tuple[float, Answer]] = {}
_down: dict[str, tuple[float, Unavailable]] = {}


def forget() -> None:
    """Drop every cached answer (tests; a port one test frees may be the next one's)."""
    _cache.clear()
    _down.clear()


def registry_from_environ(environ: Mapping[str, str]) -> RegistryClient | Unavailable:
    """The Registry at COMFY_ASSISTANT_REGISTRY_URL (default api.comfy.org), or why none is."""
    if offline(environ):
        return Unavailable(REGISTRY_OFF)
    value = environ.get(REGISTRY_ENV, "").strip()
    url = value or DEFAULT_URL
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Unavailable(
            f"the Comfy Registry is not asked: {REGISTRY_ENV} must be an http(s) address "
            "such as https://api.comfy.org"  # (its value is not quoted: it may hold a token)
        )
    return RegistryClient(url)


def registry_origin(environ: Mapping[str, str]) -> str | None:
    """The Registry's origin as set (asked or not), None when the setting is refused."""
    return origin_of(environ.get(REGISTRY_ENV, "").strip() or DEFAULT_URL)


class RegistryClient:
    def __init__(self, base_url: str, timeout: float = TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._gate = asyncio.Semaphore(PARALLEL)

    async def pack_for_node(self, node_type: str) -> Answer:
        """The pack the Registry names for a node type (its pick when several have it)."""
        return await self._ask("node", f"/comfy-nodes/{quote(node_type, safe='')}/node")

    async def pack(self, registry_id: str) -> Answer:
        return await self._ask("pack", f"/nodes/{quote(registry_id, safe='')}")

    async def _ask(self, kind: str, path: str) -> Answer:
        key = (self.base_url, path)
        hit = _cache.get(key)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        async with self._gate:
            down = _down.get(self.base_url)  # (after the wait: those before may have failed)
            if down is not None and down[0] > time.monotonic():
                return down[1]
            answer = await self._fetch(kind, path)
        ttl = FAILED_TTL if isinstance(answer, Unavailable) else TTL
        if len(_cache) >= CACHED:
            _prune()
        _cache[key] = (time.monotonic() + ttl, answer)
        return answer

    async def _fetch(self, kind: str, path: str) -> Answer:
        reply = await self._get(path)
        if isinstance(reply, Unavailable):
            return reply
        status, body = reply
        if status == 404:
            return None  # the Registry has no such pack or node type
        if status != 200:
            return Unavailable(f"the Comfy Registry answered HTTP {status} for {path}")
        try:
            data: Any = json.loads(body)
        except ValueError:  # e.g. a proxy's or captive portal's HTML page
            return Unavailable(f"the Comfy Registry's answer for {path} is not JSON")
        pack = parse_registry_pack(data)
        if pack is None:
            return Unavailable(f"the Comfy Registry's answer for {path} is not a pack ({kind})")
        return pack

    async def _get(self, path: str) -> tuple[int, bytes] | Unavailable:
        url = URL(self.base_url + path, encoded=True)  # (the path is quoted already)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        headers = {"Accept": "application/json"}
        try:
            async with (
                client_session(REGISTRY, timeout=timeout) as session,
                session.get(url, headers=headers, allow_redirects=False) as resp,
            ):
                body = await read_capped(resp, MAX_BYTES)
                status = resp.status
        except asyncio.TimeoutError:
            return self._went_down(f"did not answer within {self.timeout:g} s")
        except (aiohttp.ClientError, ValueError) as exc:  # ValueError: a malformed URL
            return self._went_down(f"could not be reached: {exc}")
        if body is None:
            return Unavailable(f"the Comfy Registry's answer for {path} is over {MAX_BYTES:,} B")
        return status, body

    def _went_down(self, why: str) -> Unavailable:
        down = Unavailable(f"the Comfy Registry at {self.base_url} {why}")
        _down[self.base_url] = (time.monotonic() + FAILED_TTL, down)
        return down


def _prune() -> None:
    """Drop the expired answers, and the oldest half if that is not enough."""
    now = time.monotonic()
    for key in [k for k, (expiry, _) in _cache.items() if expiry <= now]:
        del _cache[key]
    for key in list(_cache)[: len(_cache) // 2 if len(_cache) >= CACHED else 0]:
        del _cache[key]
