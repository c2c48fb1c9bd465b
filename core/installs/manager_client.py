"""ComfyUI-Manager as the server reads it, over HTTP to ComfyUI itself (Manager's routes live
on ComfyUI's own server; the caller gives its address: inside ComfyUI the PromptServer's
`address` and `port`, see `comfyui_loopback_url`). Read only: installing goes through Manager's
own API from the panel, so Manager's security level and its queue stay Manager's.

What it finds (recorded from Manager 4.3 and 3.41, docs in tests/manager_standin.py):
- Manager 4.x answers `/api/v2/manager/version`; its new UI ("glob" handlers) serves the node
  map and the installed packs under `/api/v2`, and no pack or model list (the new UI reads
  packs from the Comfy Registry); with `--enable-manager-legacy-ui`
  (`is_legacy_manager_ui: true`) the same paths also serve the legacy lists;
- Manager 3.x (the custom node) answers `/api/manager/version` and serves all of it under
  `/api`;
- neither: no Manager (4.x is installed but ComfyUI was started without --enable-manager, or
  it is not installed).

Every answer is cached per process for a short time (the node map is about 1 MB and a scan
asks often); every failure is an `Unavailable` with its reason, never an exception: a missing
or broken Manager must not break a scan.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast
from urllib.parse import urlsplit

import aiohttp

from ..base import MANAGER, client_session, read_capped
from .model_refs import ModelEntry, parse_model_list
from .node_map import InstalledPacks, NodeMap, parse_installed, parse_node_map
from .pack_list import PackInfo, parse_pack_list

TIMEOUT = 2.0  # seconds per request: loopback; the 1 MB map took 31 ms when recorded
TTL = 60.0  # seconds an answer is reused
INSTALLED_TTL = 5.0  # the installed packs change with every install
FAILED_TTL = 5.0  # a failure is asked again soon (ComfyUI may be restarting)
MAX_BYTES = 32 << 20  # the legacy pack list is 3.5 MB
LEGACY_PACKS = "pack details come from the Comfy Registry"
LEGACY_MODELS = (
    "it serves its model list only when ComfyUI is started with --enable-manager-legacy-ui"
)
_VERSION = re.compile(r"^V?\d[\w.\-]*$")
T = TypeVar("T")


@dataclass(frozen=True)
class Unavailable:
    reason: str
    legacy_ui_only: bool = False  # Manager serves it only with its legacy UI (not a fault)


@dataclass(frozen=True)
class Manager:
    api: Literal["v4", "v3", "none"]
    version: str = ""  # "V4.3", "V3.41"
    legacy_ui: bool = False  # the legacy handlers: the pack and model lists are there
    reason: str = ""  # for "none": why there is none

    @property
    def prefix(self) -> str:
        return "/api/v2" if self.api == "v4" else "/api"


_cache: dict[tuple[str, str], tuple[float, Any]] = {}


def forget(base_url: str | None = None) -> None:
    """Drop the cached answers (of one ComfyUI): after an install or a restart."""
    for key in [k for k in _cache if base_url is None or k[0] == base_url.rstrip("/")]:
        del _cache[key]


def comfyui_loopback_url(address: str, port: int, tls: bool = False) -> str:
    """ComfyUI's own URL as seen from inside its process: a wildcard listener is reached on
    loopback (its `--listen` may name several addresses; the first is used)."""
    host = (address or "").split(",")[0].strip() or "127.0.0.1"
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{'https' if tls else 'http'}://{host}:{port}"


class ManagerClient:
    def __init__(self, base_url: str, timeout: float = TIMEOUT, ttl: float = TTL) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout, self.ttl = timeout, ttl

    async def detect(self, fresh: bool = False) -> Manager | Unavailable:
        return await self._cached("detect", self.ttl, fresh, self._detect)

    async def node_map(self, fresh: bool = False) -> NodeMap | Unavailable:
        """Node type -> the packs that provide it (`getmappings?mode=cache`: Manager's cached
        or bundled map, never a download)."""

        async def load() -> NodeMap | Unavailable:
            body = await self._manager_json("customnode/getmappings", {"mode": "cache"})
            return _parsed(body, parse_node_map, "node map")

        return await self._cached("node_map", self.ttl, fresh, load)

    async def installed(self, fresh: bool = False) -> InstalledPacks | Unavailable:
        """The packs in custom_nodes, disabled ones included (`enabled` False)."""

        async def load() -> InstalledPacks | Unavailable:
            body = await self._manager_json("customnode/installed")
            return _parsed(body, parse_installed, "installed packs")

        return await self._cached("installed", INSTALLED_TTL, fresh, load)

    async def pack_list(self, fresh: bool = False) -> dict[str, PackInfo] | Unavailable:
        """Title, author and description of each pack: only Manager's legacy handlers have
        them."""

        async def load() -> dict[str, PackInfo] | Unavailable:
            params = {"mode": "cache", "skip_update": "true"}
            body = await self._manager_json("customnode/getlist", params, LEGACY_PACKS)
            return _parsed(body, parse_pack_list, "pack list")

        return await self._cached("pack_list", self.ttl, fresh, load)

    async def model_list(self, fresh: bool = False) -> dict[str, ModelEntry] | Unavailable:
        """Manager's model list by file name, with URLs and sizes: only its legacy handlers
        serve it."""

        async def load() -> dict[str, ModelEntry] | Unavailable:
            params = {"mode": "cache"}
            body = await self._manager_json("externalmodel/getlist", params, LEGACY_MODELS)
            return _parsed(body, parse_model_list, "model list")

        return await self._cached("model_list", self.ttl, fresh, load)

    # --- detection ----------------------------------------------------------------------------

    async def _detect(self) -> Manager | Unavailable:
        new = await self._get("/api/v2/manager/version")
        if isinstance(new, Unavailable):
            return new
        if _is_version(new):
            legacy = await self._get("/api/v2/manager/is_legacy_manager_ui")
            legacy_ui = _json_field(legacy, "is_legacy_manager_ui") is True
            return Manager("v4", new[1].decode().strip(), legacy_ui)
        old = await self._get("/api/manager/version")
        if isinstance(old, Unavailable):
            return old
        if _is_version(old):
            return Manager("v3", old[1].decode().strip(), legacy_ui=True)
        if new[0] == old[0] == 404:
            return Manager("none", reason=self._none_reason())
        status = old[0] if new[0] == 404 else new[0]
        return Unavailable(
            f"ComfyUI at {self.base_url} answered HTTP {status} for Manager's version"
        )

    def _none_reason(self) -> str:
        return (
            f"ComfyUI at {self.base_url} has no ComfyUI-Manager: /api/v2/manager/version and "
            "/api/manager/version are not there (Manager 4.x runs only when ComfyUI is started "
            "with --enable-manager)"
        )

    # --- requests -----------------------------------------------------------------------------

    async def _manager_json(
        self, path: str, params: dict[str, str] | None = None, legacy: str = ""
    ) -> Any:
        """The JSON Manager answers at its `path` (under its prefix), or Unavailable. `legacy`:
        only the legacy handlers serve it, and why the new UI does without."""
        manager = await self.detect()
        if isinstance(manager, Unavailable):
            return manager
        if manager.api == "none":
            return Unavailable(manager.reason)
        if legacy and not manager.legacy_ui:
            return Unavailable(
                f"ComfyUI-Manager {manager.version} (its new UI) has no {path}: {legacy}",
                legacy_ui_only=True,
            )
        reply = await self._get(f"{manager.prefix}/{path}", params)
        if isinstance(reply, Unavailable):
            return reply
        status, body = reply
        if status != 200:
            return Unavailable(f"ComfyUI-Manager answered HTTP {status} for {path}")
        try:
            return await asyncio.to_thread(json.loads, body)  # ~1 MB: off the event loop
        except ValueError:
            return Unavailable(f"ComfyUI-Manager's answer for {path} is not JSON")

    async def _get(
        self, path: str, params: dict[str, str] | None = None
    ) -> tuple[int, bytes] | Unavailable:
        url = self.base_url + path
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        verify = not _is_loopback(url)  # (our own ComfyUI's certificate may be self-signed)
        try:
            async with (
                client_session(MANAGER, timeout=timeout) as session,
                session.get(url, params=params, allow_redirects=False, ssl=verify) as resp,
            ):
                body = await read_capped(resp, MAX_BYTES)
                status = resp.status
        except asyncio.TimeoutError:
            return Unavailable(
                f"ComfyUI at {self.base_url} did not answer {path} within {self.timeout:g} s"
            )
        except (aiohttp.ClientError, ValueError) as exc:  # ValueError: a malformed URL
            return Unavailable(f"ComfyUI at {self.base_url} could not be reached: {exc}")
        if body is None:
            return Unavailable(f"ComfyUI's answer for {path} is over {MAX_BYTES:,} bytes")
        return status, body

    async def _cached(
        self, name: str, ttl: float, fresh: bool, load: Callable[[], Awaitable[T]]
    ) -> T:
        key, now = (self.base_url, name), time.monotonic()
        hit = _cache.get(key)
        if hit is not None and not fresh and hit[0] > now:
            return cast(T, hit[1])
        value = await load()
        _cache[key] = (now + (FAILED_TTL if isinstance(value, Unavailable) else ttl), value)
        return value


def _is_version(reply: tuple[int, bytes]) -> bool:
    """A 200 whose text is a version ("V4.3"), not some page a proxy serves for any path."""
    status, body = reply
    return status == 200 and bool(_VERSION.match(body.decode(errors="replace").strip()))


def _json_field(reply: tuple[int, bytes] | Unavailable, name: str) -> Any:
    if isinstance(reply, Unavailable) or reply[0] != 200:
        return None
    try:
        body = json.loads(reply[1])
    except ValueError:
        return None
    return body.get(name) if isinstance(body, dict) else None


def _parsed(body: Any, parse: Callable[[Any], T | None], what: str) -> T | Unavailable:
    if isinstance(body, Unavailable):
        return body
    parsed = parse(body)
    if parsed is None:
        return Unavailable(f"ComfyUI-Manager's {what} is not in the shape it is read in")
    return parsed


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"
