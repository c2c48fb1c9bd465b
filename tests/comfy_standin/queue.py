"""ComfyUI's queue as its frontend sees it: `/ws`, `POST /api/prompt`, `/api/queue`,
`/api/history`, `/api/jobs` (newer frontends' queue and history), `/api/interrupt`.

`POST /api/prompt` validates like ComfyUI (`validation.py`; only the output nodes of
`partial_execution_targets` when it is given): an invalid prompt gets HTTP 400
`{error, node_errors}`; a valid one `{prompt_id, number, node_errors: {}}`, then its "run" goes
over the WebSocket the way ComfyUI reports a run (`status`, `execution_start`,
`execution_cached`, `executing` per node, `executing` null, `execution_success`) and lands in
the history (with the events ComfyUI keeps there, timestamped: execution_start, execution_cached
and how it ended).
Nothing is computed; an image output node (SaveImage, PreviewImage) "saves" a black image of the
size its EmptyImage or EmptyLatentImage asks for into the stand-in's output or temp folder and
reports it (`executed`), as ComfyUI reports its files: a black image is what a failed VAE decode
gives. Only the outputs that run (all, or `partial_execution_targets`) save. A sampler reports
its steps (`progress`, STEP_SECONDS each), and stops between two when `POST /api/interrupt` asks
(`execution_interrupted`; that prompt, or any running one).
As ComfyUI's cache: a node whose class and inputs (and those of every node upstream) are those of
its last run is not run again but listed in `execution_cached` (an output node's kept output is
sent again as `executed`), and the history's outputs are the kept output of every node of the
prompt that has one, also of output nodes a partial run did not ask for (seen in ComfyUI 0.3.64).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import time
import uuid
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from .userdata import json_body
from .validation import validate_prompt

Definitions = Callable[[], Awaitable[dict[str, Any]]]
STEP_SECONDS = 0.05  # between two `executing` messages, so a client sees a run progress


IMAGE_OUTPUTS = {"SaveImage": "output", "PreviewImage": "temp"}


def black_png(width: int, height: int) -> bytes:
    """A black RGB PNG, written by hand (the stand-in needs no imaging library)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = b"".join(b"\0" + b"\0" * (3 * width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"".join(
        [b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", header), chunk(b"IDAT", zlib.compress(rows)),
         chunk(b"IEND", b"")]
    )  # fmt: skip


def _size(prompt: dict[str, Any], output: str) -> tuple[int, int]:
    """The size the output node's image would have: that of the EmptyImage or EmptyLatentImage
    it comes from (the nearest upstream), else 64×64."""
    queue, seen = [output], {output}
    while queue:
        node = prompt.get(queue.pop(0)) or {}
        inputs = node.get("inputs", {})
        if node.get("class_type") in ("EmptyImage", "EmptyLatentImage"):
            width, height = inputs.get("width"), inputs.get("height")
            if isinstance(width, int) and isinstance(height, int):
                return max(1, min(width, 2048)), max(1, min(height, 2048))
        for value in inputs.values():
            if isinstance(value, list) and value and str(value[0]) not in seen:
                seen.add(str(value[0]))
                queue.append(str(value[0]))
    return 64, 64


def _signatures(prompt: dict[str, Any]) -> dict[str, str]:
    """Each node's cache key as ComfyUI keys it: its class and inputs, a link standing for the
    key of the node it comes from."""
    keys: dict[str, str] = {}

    def key(node_id: str, path: tuple[str, ...]) -> str:
        if node_id not in keys:
            node = prompt.get(node_id) or {}
            linked = lambda v: isinstance(v, list) and len(v) == 2 and str(v[0]) in prompt  # noqa: E731
            inputs = {
                name: [key(str(v[0]), (*path, node_id)), v[1]]
                if linked(v) and str(v[0]) not in path
                else v
                for name, v in sorted((node.get("inputs") or {}).items())
            }
            keys[node_id] = json.dumps([node.get("class_type"), inputs], default=str)
        return keys[node_id]

    for node_id in prompt:
        key(node_id, ())
    return keys


def _steps(node: dict[str, Any]) -> int:
    """The steps a sampler node reports progress for (0 for any other node)."""
    steps = node.get("inputs", {}).get("steps")
    sampler = "Sampler" in str(node.get("class_type", ""))
    return min(steps, 50) if sampler and isinstance(steps, int) and steps > 0 else 0


class Queue:
    def __init__(self, definitions: Definitions, folders: dict[str, Path] | None = None) -> None:
        self.definitions = definitions
        self.folders = folders or {}
        self.saved = 0  # images "saved" so far (their file names count up as ComfyUI's do)
        self.sockets: dict[str, web.WebSocketResponse] = {}
        self.history: dict[str, dict[str, Any]] = {}
        self.running: list[Any] = []
        self.jobs: dict[str, dict[str, Any]] = {}  # prompt id -> the Jobs API's entry
        self.number = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.interrupted: set[str] = set()  # prompts asked to stop (POST /api/interrupt)
        self.ran: dict[str, str] = {}  # node id -> its cache key when it last ran (ComfyUI's cache)
        self.kept: dict[str, dict[str, Any]] = {}  # node id -> the output it reported then

    def queue_info(self) -> dict[str, Any]:
        return {"exec_info": {"queue_remaining": len(self.running)}}

    async def send(self, kind: str, data: dict[str, Any], sid: str | None = None) -> None:
        targets = [self.sockets[sid]] if sid in self.sockets else list(self.sockets.values())
        for ws in targets:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_json({"type": kind, "data": data})

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        sid = request.query.get("clientId") or uuid.uuid4().hex
        self.sockets[sid] = ws
        try:
            await self.send("status", {"status": self.queue_info(), "sid": sid}, sid)
            async for message in ws:  # the client's feature flags and the like: not needed
                if message.type == WSMsgType.ERROR:
                    break
        finally:
            if self.sockets.get(sid) is ws:
                del self.sockets[sid]
        return ws

    async def post_prompt(self, request: web.Request) -> web.Response:
        body = await json_body(request)
        if not isinstance(body, dict) or "prompt" not in body:
            return web.json_response({"error": "no prompt", "node_errors": []}, status=400)
        partial = body.get("partial_execution_targets")
        definitions = await self.definitions()
        ok, error, outputs, node_errors = validate_prompt(body["prompt"], definitions, partial)
        if not ok:
            return web.json_response({"error": error, "node_errors": node_errors}, status=400)
        prompt_id, number = str(uuid.uuid4()), self.number
        self.number += 1
        extra = body.get("extra_data") if isinstance(body.get("extra_data"), dict) else {}
        client_id = body.get("client_id") if isinstance(body.get("client_id"), str) else None
        item = [number, prompt_id, body["prompt"], {**extra, "client_id": client_id}, outputs]
        self.running.append(item)
        self.jobs[prompt_id] = {
            "id": prompt_id,
            "status": "in_progress",
            "create_time": int(time.time() * 1000),
            "outputs_count": 0,
            "previewable_outputs_count": 0,
        }
        task = asyncio.ensure_future(self.run(item, client_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return web.json_response({"prompt_id": prompt_id, "number": number, "node_errors": {}})

    async def run(self, item: list[Any], sid: str | None) -> None:
        prompt_id, prompt = item[1], item[2]
        now = lambda: int(time.time() * 1000)  # noqa: E731
        keys = _signatures(prompt)
        self.ran = {n: k for n, k in self.ran.items() if n in prompt}  # ComfyUI: clean_unused
        self.kept = {n: out for n, out in self.kept.items() if n in prompt}
        cached_ids = [n for n in prompt if self.ran.get(n) == keys[n]]
        status = "success"
        kept: list[list[Any]] = []  # the run's events its history keeps, as ComfyUI's executor

        async def keep(kind: str, data: dict[str, Any]) -> None:
            kept.append([kind, data])
            await self.send(kind, data, sid)

        try:
            await self.send("status", {"status": self.queue_info()})
            await keep("execution_start", {"prompt_id": prompt_id, "timestamp": now()})
            cached = {"nodes": cached_ids, "prompt_id": prompt_id, "timestamp": now()}
            await keep("execution_cached", cached)
            for node_id in prompt:
                data = {"node": node_id, "display_node": node_id, "prompt_id": prompt_id}
                if node_id in cached_ids:  # not run again; its kept output is sent again
                    if node_id in item[4] and node_id in self.kept:
                        await self.send("executed", {**data, "output": self.kept[node_id]}, sid)
                    continue
                await asyncio.sleep(STEP_SECONDS)
                await self.send("executing", data, sid)
                steps = _steps(prompt[node_id])
                for step in range(1, steps + 1):  # a sampler reports its steps
                    await asyncio.sleep(STEP_SECONDS)
                    if prompt_id in self.interrupted:  # as ComfyUI: between steps
                        status = "interrupted"
                        stopped = {"prompt_id": prompt_id, "node_id": node_id, "executed": []}
                        node_type = prompt[node_id].get("class_type")
                        stopped |= {"node_type": node_type, "timestamp": now()}
                        await keep("execution_interrupted", stopped)
                        return
                    progress = {"value": step, "max": steps, **data}
                    await self.send("progress", progress, sid)
                output = self._image_output(prompt, node_id) if node_id in item[4] else None
                if node_id in item[4] or prompt[node_id].get("class_type") not in IMAGE_OUTPUTS:
                    self.ran[node_id] = keys[node_id]  # (an output a partial run left out: not run)
                if output is not None:
                    self.kept[node_id] = output
                    await self.send("executed", {**data, "output": output}, sid)
            await self.send("executing", {"node": None, "prompt_id": prompt_id}, sid)
            await keep("execution_success", {"prompt_id": prompt_id, "timestamp": now()})
        finally:
            self.running.remove(item)
            self.jobs[prompt_id]["status"] = "completed"
            self.history[prompt_id] = {
                "prompt": item,
                "outputs": {n: self.kept[n] for n in prompt if n in self.kept},
                "status": {
                    "status_str": status,
                    "completed": status == "success",
                    "messages": kept,
                },
                "meta": {},
            }
            await self.send("status", {"status": self.queue_info()})

    def _image_output(self, prompt: dict[str, Any], node_id: str) -> dict[str, Any] | None:
        """What an image output node reports: the file it "saved" (a black image)."""
        kind = IMAGE_OUTPUTS.get(prompt[node_id].get("class_type", ""))
        if kind is None or kind not in self.folders:
            return None
        self.saved += 1
        name = f"ComfyUI_{self.saved:05d}_.png"
        (self.folders[kind] / name).write_bytes(black_png(*_size(prompt, node_id)))
        return {"images": [{"filename": name, "subfolder": "", "type": kind}]}

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for ws in list(self.sockets.values()):
            await ws.close()


def add_queue_routes(routes: web.RouteTableDef, queue: Queue) -> None:
    routes.get("/ws")(queue.websocket)
    routes.post("/api/prompt")(queue.post_prompt)

    @routes.get("/api/prompt")
    async def prompt_info(request: web.Request) -> web.Response:
        return web.json_response(queue.queue_info())

    @routes.get("/api/queue")
    async def get_queue(request: web.Request) -> web.Response:
        return web.json_response({"queue_running": queue.running, "queue_pending": []})

    @routes.get("/api/history")
    async def get_history(request: web.Request) -> web.Response:
        try:
            limit = int(request.query.get("max_items", len(queue.history)))
        except ValueError:
            raise web.HTTPBadRequest(text="max_items must be a number") from None
        items = list(queue.history.items())[-limit:] if limit > 0 else []
        return web.json_response(dict(items))

    @routes.get("/api/history/{prompt_id}")
    async def one_history(request: web.Request) -> web.Response:
        prompt_id = request.match_info["prompt_id"]
        found = queue.history.get(prompt_id)
        return web.json_response({prompt_id: found} if found else {})

    @routes.get("/api/jobs")
    async def jobs(request: web.Request) -> web.Response:
        wanted = set(request.query.get("status", "").split(","))
        try:
            limit = int(request.query.get("limit", 200))
            offset = int(request.query.get("offset", 0))
        except ValueError:
            raise web.HTTPBadRequest(text="limit and offset must be numbers") from None
        found = [j for j in reversed(queue.jobs.values()) if j["status"] in wanted]
        page = found[max(offset, 0) : max(offset, 0) + max(limit, 0)]
        more = offset + len(page) < len(found)
        pagination = {"offset": offset, "limit": limit, "total": len(found), "has_more": more}
        return web.json_response({"jobs": page, "pagination": pagination})

    @routes.get("/api/jobs/{prompt_id}")
    async def job(request: web.Request) -> web.Response:
        found = queue.jobs.get(request.match_info["prompt_id"])
        if found is None:
            raise web.HTTPNotFound()
        return web.json_response({**found, "outputs": {}})

    @routes.post("/api/history")
    async def post_history(request: web.Request) -> web.Response:  # as ComfyUI: clear, delete
        body = await json_body(request)
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="send a JSON object")
        doomed = list(queue.history) if body.get("clear") else body.get("delete") or []
        for prompt_id in doomed if isinstance(doomed, list) else []:
            if isinstance(prompt_id, str) and prompt_id in queue.history:
                del queue.history[prompt_id]
                queue.jobs.pop(prompt_id, None)
        return web.Response(status=200)

    async def accept(request: web.Request) -> web.Response:  # nothing pending, nothing running
        return web.Response(status=200)

    @routes.post("/api/interrupt")
    async def interrupt(request: web.Request) -> web.Response:  # as ComfyUI: this prompt, or any
        body = await json_body(request) if request.can_read_body else {}
        wanted = body.get("prompt_id") if isinstance(body, dict) else None
        queue.interrupted.update(
            item[1] for item in queue.running if wanted is None or item[1] == wanted
        )
        return web.Response(status=200)

    for path in ("/api/queue", "/api/free"):
        routes.post(path)(accept)
