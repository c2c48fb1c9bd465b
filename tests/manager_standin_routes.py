"""The HTTP and WebSocket routes of the ComfyUI-Manager stand-in (tests/manager_standin.py), as
Manager's handlers answer them; `add_manager_routes` also mounts them on another stand-in's app
(the ComfyUI one, with `ws=False` and its `/ws` sockets shared through `ManagerStandin.sockets`).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

if TYPE_CHECKING:
    from .manager_standin import ManagerStandin

from .manager_standin import FORM_REJECTED, FORM_TYPES, KINDS, VERSIONS, Handler, Task, fixture

MODEL_FIELDS = ("name", "type", "url", "filename")  # ModelMetadata's required fields


def add_manager_routes(app: web.Application, m: ManagerStandin, ws: bool = True) -> None:
    def add(method: str, path: str, handler: Handler) -> None:
        for prefix in ("", "/api"):  # ComfyUI mounts every route both ways
            app.router.add_route(method, prefix + path, handler)

    if ws:
        app.router.add_get("/ws", _websocket(m))
    if m.flavour not in VERSIONS:
        return
    v2 = "" if m.flavour == "v3" else "/v2"
    routes = _Routes(m)
    add("GET", f"{v2}/manager/version", routes.version)
    add("GET", f"{v2}/customnode/getmappings", routes.getmappings)
    add("GET", f"{v2}/customnode/installed", routes.installed)
    if m.flavour != "v3":
        add("GET", "/v2/manager/is_legacy_manager_ui", routes.is_legacy)
    if m.flavour != "v4":
        add("GET", f"{v2}/customnode/getlist", routes.getlist)
        add("GET", f"{v2}/externalmodel/getlist", routes.model_list)
        if m.flavour == "v4legacy":
            add("POST", "/v2/customnode/install/git_url", routes.install_git_url)
        return
    add("POST", "/v2/manager/queue/task", routes.queue_task)
    add("POST", "/v2/manager/queue/install_model", routes.install_model)
    add("POST", "/v2/manager/queue/start", routes.start)
    add("POST", "/v2/manager/queue/reset", routes.reset)
    add("GET", "/v2/manager/queue/status", routes.status)
    add("GET", "/v2/manager/queue/history", routes.history)
    add("GET", "/v2/manager/queue/history_list", routes.history_list)
    add("POST", "/v2/manager/reboot", routes.reboot)


def _websocket(m: ManagerStandin) -> Handler:
    async def websocket(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        sid = request.query.get("clientId") or uuid.uuid4().hex  # ComfyUI: sid = clientId
        m.sockets[sid] = ws
        try:
            status = {"status": {"exec_info": {"queue_remaining": 0}}, "sid": sid}
            await ws.send_json({"type": "status", "data": status})
            async for message in ws:
                if message.type == WSMsgType.ERROR:
                    break
        finally:
            if m.sockets.get(sid) is ws:
                del m.sockets[sid]
        return ws

    return websocket


def _form_rejected(request: web.Request) -> web.Response | None:
    if request.content_type in FORM_TYPES:
        return web.Response(status=400, text=FORM_REJECTED)
    return None


def _task_error(body: Any) -> str | None:
    """Why QueueTaskItem would not validate (shorter than pydantic's text)."""
    if not isinstance(body, dict):
        return "1 validation error for QueueTaskItem: Input should be a valid dictionary"
    for name in ("ui_id", "client_id"):
        if not isinstance(body.get(name), str):
            return f"1 validation error for QueueTaskItem\n{name}\n  Field required"
    if body.get("kind") not in KINDS:
        return "1 validation error for QueueTaskItem\nkind\n  Input should be a valid kind"
    if not isinstance(body.get("params"), dict):
        return "validation errors for QueueTaskItem\nparams\n  Input should be a valid dictionary"
    return None


class _Routes:
    def __init__(self, m: ManagerStandin) -> None:
        self.m = m

    async def version(self, request: web.Request) -> web.Response:
        return web.Response(text=VERSIONS[self.m.flavour])

    async def is_legacy(self, request: web.Request) -> web.Response:
        return web.json_response({"is_legacy_manager_ui": self.m.flavour == "v4legacy"})

    async def getmappings(self, request: web.Request) -> web.Response:
        _ = request.rel_url.query["mode"]  # no mode: a KeyError, aiohttp's bare 500, as Manager
        return web.json_response(self.m.mappings())

    async def installed(self, request: web.Request) -> web.Response:
        if request.query.get("mode") == "imported":
            return web.json_response(self.m.imported)
        return web.json_response(self.m.installed())

    async def getlist(self, request: web.Request) -> web.Response:
        return web.json_response(fixture("getlist.json"))

    async def model_list(self, request: web.Request) -> web.Response:
        return web.json_response(fixture("externalmodel_getlist.json"))

    async def queue_task(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return web.Response(status=500, text="Internal server error")
        error = _task_error(body)
        if error is not None:
            return web.Response(status=400, text=f"Invalid task data: {error}")
        self.m.enqueue(Task(body["ui_id"], body["client_id"], body["kind"], body["params"]))
        return web.Response(status=200)

    async def install_model(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return web.Response(status=500, text="Internal server error")
        for name in ("client_id", "ui_id"):
            if name not in body:
                return web.Response(status=400, text=f"Missing required field: {name}")
        missing = [name for name in MODEL_FIELDS if not isinstance(body.get(name), str)]
        if missing:
            return web.Response(status=400, text=f"Invalid model data: {missing[0]} required")
        params = {k: v for k, v in body.items() if k != "client_id"}
        self.m.enqueue(Task(body["ui_id"], body["client_id"], "install-model", params))
        return web.Response(status=200)

    async def install_git_url(self, request: web.Request) -> web.Response:
        """The legacy UI's git-URL install: the dedicated flag first, then a synchronous clone
        (200 installed or already there, 400 failed: Manager logs why)."""
        if not self.m.git_url_allowed():
            return web.json_response({"reason": "allow_git_url_install"}, status=403)
        return web.Response(status=200 if self.m.clone(await request.text()) else 400)

    async def start(self, request: web.Request) -> web.Response:
        if rejected := _form_rejected(request):
            return rejected
        return web.Response(status=200 if self.m.start_worker() else 201)  # 201: was running

    async def reset(self, request: web.Request) -> web.Response:
        if rejected := _form_rejected(request):
            return rejected
        self.m.pending = []
        return web.Response(status=200)

    async def status(self, request: web.Request) -> web.Response:
        m, client = self.m, request.query.get("client_id")
        running = [m.running] if m.running else []
        pending = m.pending
        history = list(m.history.values())
        if client:
            running = [t for t in running if t.client_id == client]
            pending = [t for t in pending if t.client_id == client]
            history = [h for h in history if h["client_id"] == client]
        counts = {
            "total_count": len(pending) + len(running),
            "done_count": len(history),
            "in_progress_count": len(running),
            "pending_count": len(pending),
            "is_processing": bool(running) if client else m.processing(),
        }
        return web.json_response({"client_id": client, **counts} if client else counts)

    async def history(self, request: web.Request) -> web.Response:
        ui_id, client = request.query.get("ui_id"), request.query.get("client_id")
        if ui_id:
            return web.json_response({"history": self.m.history.get(ui_id, {})})
        history = self.m.history
        if client:
            history = {k: v for k, v in history.items() if v["client_id"] == client}
        return web.json_response({"history": history})

    async def history_list(self, request: web.Request) -> web.Response:
        return web.json_response({"ids": []})  # no batch files in the stand-in

    async def reboot(self, request: web.Request) -> web.StreamResponse:
        if rejected := _form_rejected(request):
            return rejected
        if not self.m.allowed("middle"):
            return web.Response(status=403)
        self.m.reboot()  # drops this connection too: the client never gets an answer
        raise asyncio.CancelledError
