"""A stand-in for ComfyUI-Manager on 127.0.0.1, RECORDED from the real one: comfyui-manager 4.3
(the PyPI package, `--enable-manager`, the "glob" handlers the ComfyUI frontend 1.58.1 calls) and
the ComfyUI-Manager 3.41 custom node, both beside ComfyUI 0.3.64, offline, on 2026-11-26
(/work/notes/manager_api.md; the exchanges it answers alike are in tests/fixtures/manager/recorded,
and the handlers' source is comfyui_manager/glob/manager_server.py of the 4.3 wheel).

What it serves (`flavour`):
- "v4": the new API under `/v2/...` and `/api/v2/...`: manager/version (`V4.3`),
  is_legacy_manager_ui, customnode/getmappings?mode= (no mode: aiohttp's bare 500, as the real
  one), customnode/installed[?mode=imported], manager/queue/{task, install_model, start, status,
  reset, history, history_list}, manager/reboot; `/ws?clientId=` sends `cm-task-started` and
  `cm-task-completed` only to the task's client_id and broadcasts `cm-queue-status all-done` once
  the worker has idled `idle_seconds` (4 s in Manager; short in tests);
- "v4legacy": 4.3 with `--enable-manager-legacy-ui`: the read-only part above plus
  customnode/getlist and externalmodel/getlist under /v2, `is_legacy_manager_ui: true`;
- "v3": the 3.41 custom node's read-only routes without `/v2` (manager/version `V3.41`,
  getmappings, installed, getlist, externalmodel/getlist);
- "none": ComfyUI without Manager (only `/ws`).

Security as Manager's `is_allowed_security_level`: `security_level` strong | normal | normal- |
weak, `listen` (Manager's `--listen`: "middle+" needs a loopback one or `network_mode`
personal_cloud). At strong: reboot 403, an install of a known pack, an uninstall and a model
install complete with result "failed" (status_str "error"); enable/disable are never checked.
POSTs to queue/start, queue/reset and reboot with a form Content-Type get the recorded 400.

`reboot` drops the TCP connection without an answer (Manager calls os.execv), every open
connection and ws closes abnormally (1006), the port refuses connections for `down_seconds`,
then the same port answers again as a new process would: empty queue and history, and the packs
installed and enabled before the reboot have their node types registered (`registered`).

Simplified: the node map is a few real packs (tests/fixtures/manager/extension-node-map.json,
from the 4.3 wheel's bundled extension-node-map.json) and `key_style="cnr"` renames only the
packs in cnr_ids.json, as `map_to_unified_keys` renames the packs the Registry knows; an install
succeeds (instantly, after `task_seconds`) for a pack of that map by its cnr id (`latest`), or,
as `nightly`, by the name its channel list keys it by (a cnr id, else the repository URL's last
part; `repository` is not read, as in Manager's `install_by_id`). Others fail as Manager's: a
`latest` id the Registry list lacks with "Cannot resolve install target: 'id@latest'" (its log
says "is not a CNR node"), a `nightly` one the channel list lacks with "Node 'id@nightly' not
found in [ManagerChannel.default, ManagerDatabaseSource.cache]" (the enums as Python 3.12
formats them). With the legacy UI ("v4legacy") `/v2/customnode/install/git_url` (the URL as
the body) clones a repository of the map (others: 400, as a failed clone) only when
`allow_git_url_install` is set and ComfyUI listens on loopback or `network_mode` is
personal_cloud, else 403 `{"reason": "allow_git_url_install"}` (Manager 4.3's dedicated flag,
independent of security_level); a model install succeeds without downloading anything (it is
listed in `models`); kinds other than install, enable, disable, uninstall and install-model
complete with an error; `crash=True` makes the worker fail on its next task as Manager's does on
an exception: the task is recorded as an error and no all-done follows (the invalid-params
pitfall does the same); 400 texts for invalid tasks are shorter than pydantic's; no batch history
files (history?id=), no legacy queue (queue/batch, 3.x queue/install), no multiple-client-IP ban.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from aiohttp import web

FIXTURES = Path(__file__).with_name("fixtures") / "manager"
FORM_TYPES = {"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"}
FORM_REJECTED = "Invalid Content-Type for this endpoint. Use application/json or omit body."
VERSIONS = {"v4": "V4.3", "v4legacy": "V4.3", "v3": "V3.41"}
KINDS = {"install", "enable", "disable", "uninstall", "install-model", "update", "fix"}
KINDS |= {"update-comfyui", "update-all"}
INSTALL_FIELDS = ("id", "version", "selected_version", "mode", "channel")
LOOPBACK = ("127.", "localhost", "::1")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def now() -> str:
    return datetime.now().isoformat()


class WorkerCrash(Exception):
    """A task the real worker raises on: it records the task as an error and exits."""


@dataclass
class Task:
    ui_id: str
    client_id: str
    kind: str
    params: dict[str, Any]

    def item(self) -> dict[str, Any]:
        return {"ui_id": self.ui_id, "client_id": self.client_id, "kind": self.kind,
                "params": self.params}  # fmt: skip


@dataclass
class Pack:
    """A pack on disk as /customnode/installed lists it."""

    dir: str
    ver: str
    cnr_id: str = ""
    aux_id: str | None = None
    enabled: bool = True

    def key(self) -> str:
        if self.enabled:
            return self.dir
        return f"{self.cnr_id or self.dir}@{self.ver.replace('.', '_')}"

    def entry(self) -> dict[str, Any]:
        return {"ver": self.ver, "cnr_id": self.cnr_id, "aux_id": self.aux_id,
                "enabled": self.enabled}  # fmt: skip


def recorded_packs() -> list[Pack]:
    """The packs of the recording (v4_installed_with_packs): one git, one enabled CNR, one
    disabled CNR pack."""
    packs = []
    for key, entry in fixture("installed.json").items():
        name = entry["cnr_id"] or key.split("@")[0]
        packs.append(Pack(name, entry["ver"], entry["cnr_id"], entry["aux_id"], entry["enabled"]))
    return packs


@dataclass
class ManagerStandin:
    flavour: str = "v4"
    security_level: str = "normal"
    listen: str = "127.0.0.1"
    network_mode: str = "public"
    key_style: str = "url"  # "cnr": the Registry was reachable (keys are cnr ids where known)
    idle_seconds: float = 0.2  # Manager: 4 s
    task_seconds: float = 0.0
    down_seconds: float = 0.3  # Manager: 10-16 s here
    crash: bool = False
    allow_git_url_install: bool = False  # config.ini [default]; read by the legacy UI only
    packs: list[Pack] = field(default_factory=recorded_packs)
    core_nodes: set[str] = field(default_factory=set)  # registered without any pack
    sockets: dict[str, web.WebSocketResponse] = field(default_factory=dict)
    url: str = ""  # http://127.0.0.1:PORT once started

    def __post_init__(self) -> None:
        self.catalog: dict[str, Any] = fixture("extension-node-map.json")
        self.cnr_ids: dict[str, str] = fixture("cnr_ids.json")
        self.pending: list[Task] = []
        self.running: Task | None = None
        self.history: dict[str, dict[str, Any]] = {}
        self.batch_id: str | None = None
        self.worker: asyncio.Task[None] | None = None
        self.models: list[dict[str, Any]] = []  # install-model tasks that "downloaded"
        self.reboots = 0
        self.up = asyncio.Event()
        self._boot()
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._port = 0
        self._background: set[asyncio.Task[None]] = set()

    # --- its state ----------------------------------------------------------------------------

    def _boot(self) -> None:
        """What a (re)started process knows: the packs enabled now are imported."""
        self.imported = {p.key(): p.entry() for p in self.packs}
        self.registered = set(self.core_nodes)
        for pack in self.packs:
            url = self._pack_url(pack)
            if pack.enabled and url in self.catalog:
                self.registered.update(self.catalog[url][0])

    def _pack_url(self, pack: Pack) -> str | None:
        by_id = {cnr: url for url, cnr in self.cnr_ids.items()}
        if pack.cnr_id in by_id:
            return by_id[pack.cnr_id]
        return f"https://github.com/{pack.aux_id}" if pack.aux_id else None

    def installed(self) -> dict[str, Any]:
        return {p.key(): p.entry() for p in self.packs}

    def mappings(self) -> dict[str, Any]:
        """getmappings: the map with cnr-id keys where known (key_style cnr), and each
        registered node type no pack lists added to the packs whose pattern it matches."""
        out: dict[str, Any] = {}
        for url, (names, meta) in self.catalog.items():
            key = self.cnr_ids.get(url, url) if self.key_style == "cnr" else url
            out[key] = [list(names), dict(meta)]
        listed = {name for names, _ in out.values() for name in names}
        for name in sorted(self.registered - listed):
            for names, meta in out.values():
                if "nodename_pattern" in meta and re.match(meta["nodename_pattern"], name):
                    names.append(name)
        return out

    def allowed(self, risk: str) -> bool:
        level, local = self.security_level, self.listen.startswith(LOOPBACK)
        if risk == "middle":
            return level != "strong"
        if risk == "middle+":
            return level != "strong" and (local or self.network_mode == "personal_cloud")
        return level in ("weak", "normal-") if local else level == "weak"  # high

    def state(self) -> dict[str, Any]:
        return {
            "history": dict(self.history),
            "running_queue": [self.running.item()] if self.running else [],
            "pending_queue": [t.item() for t in self.pending],
            "installed_packs": self.installed(),
        }

    # --- the worker ---------------------------------------------------------------------------

    async def send(self, kind: str, data: dict[str, Any], sid: str | None = None) -> None:
        """As ComfyUI's send_sync: to that client if it is connected, to all without one."""
        targets = list(self.sockets.values()) if sid is None else [self.sockets.get(sid)]
        for ws in targets:
            if ws is not None:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await ws.send_json({"type": kind, "data": data})

    async def _work(self) -> None:
        while True:
            if not self.pending:
                await asyncio.sleep(self.idle_seconds)
                if self.pending:
                    continue
                break
            task = self.running = self.pending.pop(0)
            started = {"ui_id": task.ui_id, "kind": task.kind, "timestamp": now()}
            await self.send("cm-task-started", {**started, "state": self.state()}, task.client_id)
            await asyncio.sleep(self.task_seconds)
            try:
                result = self._execute(task)
            except WorkerCrash:
                await self._done(task, f"Exception: {(task.kind, task.item())}")
                return  # as Manager's worker: no all-done
            await self._done(task, result)
        self.batch_id, self.worker = None, None
        await self.send("cm-queue-status", {"status": "all-done"})

    async def _done(self, task: Task, result: str) -> None:
        self.running = None
        status_str = result if result in ("success", "skip") else "error"
        messages = [] if status_str != "error" else [result]
        status = {"status_str": status_str, "completed": True, "messages": messages}
        stamp = now()
        self.history[task.ui_id] = {
            "ui_id": task.ui_id, "client_id": task.client_id, "kind": task.kind,
            "timestamp": stamp, "result": result, "status": status, "batch_id": self.batch_id,
            "end_time": stamp, "params": task.params,
        }  # fmt: skip
        done = {"ui_id": task.ui_id, "result": result, "kind": task.kind, "status": status}
        done |= {"timestamp": stamp, "state": self.state()}
        await self.send("cm-task-completed", done, task.client_id)

    def _execute(self, task: Task) -> str:
        if self.crash:
            raise WorkerCrash
        run = {
            "install": self._install, "enable": self._enable, "disable": self._disable,
            "uninstall": self._uninstall, "install-model": self._install_model,
        }.get(task.kind)  # fmt: skip
        return run(task.params) if run else f"the stand-in does not model {task.kind!r} tasks"

    def _find(self, name: str) -> Pack | None:
        return next((p for p in self.packs if name in (p.dir, p.cnr_id)), None)

    def _install(self, params: dict[str, Any]) -> str:
        if any(name not in params for name in INSTALL_FIELDS):
            raise WorkerCrash  # matched UpdateAllPacksParams: `params.id` raises
        pack_id, selected = params["id"], params["selected_version"]
        if selected == "latest" and pack_id not in self.cnr_ids.values():
            return f"Cannot resolve install target: '{pack_id}@{selected}'"
        listed = pack_id.strip().lower() in self.channel_ids()  # (a NormalizedKeyDict)
        if selected in ("nightly", "unknown") and not listed:
            where = f"ManagerChannel.{params['channel']}, ManagerDatabaseSource.{params['mode']}"
            return f"Node '{pack_id}@{selected}' not found in [{where}]"
        if not self.allowed("middle+" if selected in ("nightly", "unknown") else "middle"):
            return "failed"
        pack = self._find(pack_id)
        if pack is not None and pack.enabled:
            return "skip"
        if pack is not None:
            pack.enabled = True
            return "success"
        if selected == "nightly" and params.get("repository"):
            # as Manager 4.3 lists a git clone: its commit, the id as cnr_id, owner/name as aux_id
            repo = str(params["repository"]).rstrip("/").removesuffix(".git").split("/")[-2:]
            commit = hashlib.sha1(pack_id.encode()).hexdigest()
            self.packs.append(Pack(pack_id, commit, pack_id, "/".join(repo)))
            return "success"
        version = params["version"] if re.match(r"\d", params["version"]) else "1.0.0"
        cnr_id = pack_id if pack_id in self.cnr_ids.values() else ""
        self.packs.append(Pack(pack_id, version, cnr_id))
        return "success"

    def channel_ids(self) -> set[str]:
        """The names the channel's node list keys its packs by (Manager's `get_custom_nodes`):
        the cnr id where the Registry knows the repository, else the URL's last part; looked up
        without case (its NormalizedKeyDict)."""
        names = {self.cnr_ids.get(url, url.rstrip("/").split("/")[-1]) for url in self.catalog}
        return {name.lower() for name in names}

    def git_url_allowed(self) -> bool:
        """Manager 4.3's `is_dedicated_install_allowed('allow_git_url_install')`."""
        local = self.listen.startswith(LOOPBACK)
        return self.allow_git_url_install and (local or self.network_mode == "personal_cloud")

    def clone(self, url: str) -> bool:
        """`gitclone_install(url)`: True when installed or already there; a repository the map
        does not know fails as a clone without network would."""
        url = url.strip().removesuffix(".git").rstrip("/")
        name = url.split("/")[-1]
        if self._find(name) is not None:
            return True
        if url not in self.catalog:
            return False
        self.packs.append(Pack(name, "nightly", "", "/".join(url.split("/")[-2:])))
        return True

    def _enable(self, params: dict[str, Any]) -> str:
        pack = self._find(str(params.get("cnr_id")))
        if pack is not None:
            pack.enabled = True
        return "success"  # Manager reports success whatever happened

    def _disable(self, params: dict[str, Any]) -> str:
        pack = self._find(str(params.get("node_name")))
        if pack is None:
            return f"Failed to disable: '{params.get('node_name')}'"
        pack.enabled = False
        return "success"

    def _uninstall(self, params: dict[str, Any]) -> str:
        if not self.allowed("middle"):
            return "failed"
        pack = self._find(str(params.get("node_name")))
        if pack is not None:
            self.packs.remove(pack)
        return "success"  # also for a pack that is not there, as recorded

    def _install_model(self, params: dict[str, Any]) -> str:
        if not self.allowed("middle+"):
            return "failed"
        self.models.append(params)
        return "success"

    def processing(self) -> bool:
        return self.worker is not None and not self.worker.done()

    def start_worker(self) -> bool:
        """As Manager's: False when it is already running."""
        if self.processing():
            return False
        self.worker = asyncio.ensure_future(self._work())
        return True

    def enqueue(self, task: Task) -> None:
        if self.batch_id is None and not self.pending and self.running is None:
            self.batch_id = f"batch_{datetime.now():%Y%m%d_%H%M%S}_{uuid.uuid4().hex[:8]}"
        self.pending.append(task)

    # --- the server ---------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        from .manager_standin_routes import add_manager_routes

        add_manager_routes(app, self)
        return app

    def mount(self, app: web.Application, sockets: dict[str, web.WebSocketResponse]) -> None:
        """Serve the routes from another stand-in's app (the ComfyUI one), whose `/ws`
        clients (`sockets`, by clientId) get the events; `adopt` its runner for `reboot`."""
        from .manager_standin_routes import add_manager_routes

        self.sockets = sockets
        add_manager_routes(app, self, ws=False)

    def adopt(self, runner: web.AppRunner) -> None:
        """The host's running server, whose site a reboot stops and starts again."""
        site = next(iter(runner.sites))
        assert isinstance(site, web.TCPSite)
        self._runner, self._site = runner, site
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{self._port}"
        self.up.set()

    def argv(self) -> list[str]:
        """What ComfyUI's /system_stats shows in `argv` with this Manager."""
        flags = {"v4": ["--enable-manager"], "v4legacy": ["--enable-manager-legacy-ui"]}
        return flags.get(self.flavour, [])

    def features(self) -> dict[str, Any]:
        """What a newer ComfyUI's /features adds with Manager 4.2.1+ (recorded)."""
        if self.flavour not in ("v4", "v4legacy"):
            return {}
        return {"extension": {"manager": {"supports_v4": True, "supports_csrf_post": True}}}

    async def start(self) -> ManagerStandin:
        self._runner = web.AppRunner(self.app(), handler_cancellation=True)
        await self._runner.setup()
        await self._listen()
        return self

    async def _listen(self) -> None:
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, "127.0.0.1", self._port)
        await self._site.start()
        self._port = self._site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{self._port}"
        self.up.set()

    async def stop(self) -> None:
        for task in [*self._background, *([self.worker] if self.worker else [])]:
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> ManagerStandin:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def reboot(self) -> None:
        """Drop every connection now, as os.execv does; come back after down_seconds."""
        self.up.clear()
        if self.worker is not None:
            self.worker.cancel()
        if self._runner is not None and self._runner.server is not None:
            for connection in self._runner.server.connections:
                if connection.transport is not None:
                    connection.transport.abort()
        task = asyncio.ensure_future(self._restart())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _restart(self) -> None:
        if self._site is not None:
            await self._site.stop()
        self.sockets.clear()
        self.pending, self.running, self.history, self.batch_id = [], None, {}, None
        self.worker = None
        self.reboots += 1
        self._boot()
        await asyncio.sleep(self.down_seconds)
        await self._listen()
