"""The browser end-to-end tests' servers: the scripted provider and our standalone app.

    python -m comfyui_assistant.tests.e2e_harness      (or: python tests/e2e_harness.py)

starts the scripted OpenAI-compatible provider and the standalone app (a fresh data directory,
the provider configured through the environment) on free ports of 127.0.0.1, prints one JSON line
`{"app": "http://127.0.0.1:PORT", "provider": "http://127.0.0.1:PORT"}` and serves until stdin
closes or SIGTERM. With `--provider-only` it starts only the provider (for a real ComfyUI, see
ui/e2e/README.md) and `app` is null. With `--comfy-frontend VERSION` the app is the ComfyUI
stand-in (tests/comfy_standin) serving that real ComfyUI frontend with our panel and routes; with
`--returning-user` too, its data directory holds what earlier sessions left: saved workflows and
threads bound as an older version bound them (tests/comfy_standin/returning.py); with `--manager
FLAVOUR` (v4, v4legacy, v3) ComfyUI-Manager's stand-in is mounted on it (tests/manager_standin.py:
its map keyed by cnr ids as when the Registry is reachable, `--manager-security` its level), and
its reboot drops and restarts the whole stand-in, our routes included, as Manager's os.execv does;
the scan (core/installs) asks that Manager, as inside ComfyUI. With `--model-host` a model host
(tests/model_server.py, a 6 MB file at /file/<name>, slowly) runs beside it, allowed by
COMFY_ASSISTANT_MODEL_ORIGINS; the JSON line adds `modelHost` (origin, sha256, size) and `dataDir`
(`--model-host-port`: a fixed port, for a real ComfyUI started with that origin allowed). With
`--listen-network` the stand-in also listens on this machine's network address, on the same
port (as ComfyUI's `--listen 127.0.0.1,ADDRESS`): a request there is not loopback (an MCP client
then needs a token); the JSON line adds `network`, that URL.

The provider gets control routes, so a test in another process scripts it with data:

- `POST /_script` with a JSON list of replies replaces the queued replies; each request to
  `/v1/chat/completions` takes the next one:
  - `{"type": "stream", "chunks": [...], "done": true}`; a chunk is a delta
    (`{"content": "..."}`, `{"reasoning_content": "..."}`, `{"tool_calls": [...]}`, optionally
    with `"finish_reason"`), `{"finish_reason": "stop"}`, `{"usage": [prompt, completion]}`,
    `{"pause": seconds}`, `{"raw": "bytes as text"}` or `{"cut": true}`;
  - `{"type": "text", "text": "..."}`: a streamed answer (finish `stop`);
  - `{"type": "tool_calls", "calls": [{"id", "name", "arguments": {...}}], "content": "..."}`;
    an argument `{"$result": "<an earlier call's id>", "field": "scan"}` is that field of the
    call's result, read from the request it answers (as a model copies an id it was given);
  - `{"type": "status", "status": 500, "body": {...}}`: an HTTP error;
  - `{"type": "completion", "text": "..."}`: a non-streamed answer; `{"type": "hang"}`.
- `GET /_requests`: `{"requests": [bodies], "disconnects": n, "finished": n, "pending": n}`.
- `POST /_reset`: forget replies, requests and counters.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiohttp import web

if __package__ in (None, ""):  # run as a file: import the installed package instead
    try:
        import comfyui_assistant  # noqa: F401
    except ImportError:  # not installed (a ComfyUI's Python, PYTHON=): this checkout, as the
        # package, without its ComfyUI adapter (__init__.py)
        import types

        _package = types.ModuleType("comfyui_assistant")
        _package.__path__ = [str(Path(__file__).resolve().parents[1])]
        sys.modules["comfyui_assistant"] = _package
    from comfyui_assistant.core.installs.lookups import manager_lookups
    from comfyui_assistant.core.service import ServiceOptions
    from comfyui_assistant.standalone import create_app
    from comfyui_assistant.tests.comfy_standin import create_standin, multi_user_standin
    from comfyui_assistant.tests.comfy_standin.returning import seed_returning_user
    from comfyui_assistant.tests.manager_standin import ManagerStandin
    from comfyui_assistant.tests.model_server import Knobs, ModelServer, model_bytes
    from comfyui_assistant.tests.scripted_provider import (
        Completion,
        Cut,
        Hang,
        Pause,
        Raw,
        ScriptedProvider,
        Status,
        Stream,
        call_piece,
        chunk,
        usage_chunk,
    )
else:
    from ..core.installs.lookups import manager_lookups
    from ..core.service import ServiceOptions
    from ..standalone import create_app
    from .comfy_standin import create_standin, multi_user_standin
    from .comfy_standin.returning import seed_returning_user
    from .manager_standin import ManagerStandin
    from .model_server import Knobs, ModelServer, model_bytes
    from .scripted_provider import (
        Completion,
        Cut,
        Hang,
        Pause,
        Raw,
        ScriptedProvider,
        Status,
        Stream,
        call_piece,
        chunk,
        usage_chunk,
    )

DELTA_KEYS = ("content", "reasoning_content", "reasoning", "tool_calls", "finish_reason")


MODEL_SIZE = 6 << 20


class ScriptError(ValueError):
    pass


class FromResult:
    """A tool_calls reply with arguments taken from earlier tool results, built when the
    request it answers comes (that request carries the results)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def build(self, body: Any) -> Any:
        results = {
            m.get("tool_call_id"): m.get("content")
            for m in body.get("messages", [])
            if isinstance(m, dict) and m.get("role") == "tool"
        }

        def fill(value: Any) -> Any:
            if isinstance(value, dict) and "$result" in value:
                return json.loads(results[value["$result"]])[value["field"]]
            return value

        calls = [
            {**call, "arguments": {k: fill(v) for k, v in call.get("arguments", {}).items()}}
            for call in self.spec.get("calls", [])
        ]
        return reply_from({**self.spec, "calls": calls})


def refers_to_results(spec: dict[str, Any]) -> bool:
    return any(
        isinstance(value, dict) and "$result" in value
        for call in spec.get("calls", [])
        if isinstance(call.get("arguments"), dict)
        for value in call["arguments"].values()
    )


def stream_item(item: Any) -> Any:
    """One element of a scripted stream, from its JSON description."""
    if not isinstance(item, dict):
        raise ScriptError(f"a stream chunk must be an object, not {item!r}")
    if "pause" in item:
        return Pause(float(item["pause"]))
    if "raw" in item:
        return Raw(str(item["raw"]).encode())
    if item.get("cut"):
        return Cut()
    if "usage" in item:
        prompt, completion = item["usage"]
        return usage_chunk(int(prompt), int(completion))
    unknown = set(item) - set(DELTA_KEYS)
    if unknown:
        raise ScriptError(f"unknown chunk fields {sorted(unknown)}; use {list(DELTA_KEYS)}")
    return chunk(**{k: item[k] for k in DELTA_KEYS if k in item})


def tool_call_chunks(calls: list[dict[str, Any]]) -> list[Any]:
    chunks: list[Any] = []
    for i, call in enumerate(calls):
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        chunks.append(
            chunk(tool_calls=[call_piece(i, id=call.get("id", f"call_{i}"), name=call["name"])])
        )
        chunks.append(chunk(tool_calls=[call_piece(i, arguments=text)]))
    return chunks


def reply_from(spec: Any) -> Any:
    """A scripted reply (the scripted provider's types) from its JSON description."""
    if not isinstance(spec, dict) or "type" not in spec:
        raise ScriptError(f"a reply must be an object with a 'type', not {spec!r}")
    kind = spec["type"]
    if kind == "stream":
        chunks = [stream_item(c) for c in spec.get("chunks", [])]
        return Stream(
            chunks, done=bool(spec.get("done", True)), status=int(spec.get("status", 200))
        )
    if kind == "text":
        pieces = spec.get("pieces") or [spec.get("text", "")]
        return Stream(
            [*(chunk(p) for p in pieces), chunk(finish_reason=spec.get("finish", "stop"))]
        )
    if kind == "tool_calls" and refers_to_results(spec):
        return FromResult(spec)
    if kind == "tool_calls":
        lead = [chunk(spec["content"])] if spec.get("content") else []
        calls = tool_call_chunks(spec.get("calls", []))
        return Stream([*lead, *calls, chunk(finish_reason="tool_calls")])
    if kind == "status":
        return Status(int(spec["status"]), spec.get("body"), dict(spec.get("headers", {})))
    if kind == "completion":
        return Completion(str(spec.get("text", "")))
    if kind == "hang":
        return Hang()
    raise ScriptError(f"unknown reply type {kind!r}")


class ControlledProvider(ScriptedProvider):
    """The scripted provider, plus routes a test in another process scripts it with."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__()
        self.host, self.port = host, port

    async def start(self) -> ControlledProvider:
        # (a long thread's request is megabytes: a real provider takes it, as ScriptedProvider does)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/_script", self._script)
        app.router.add_get("/_requests", self._requests)
        app.router.add_post("/_reset", self._reset)
        self._runner = web.AppRunner(app, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.origin = f"http://{self.host}:{port}"
        self.base_url = f"{self.origin}/v1"
        return self

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        if self.replies and isinstance(self.replies[0], FromResult):
            try:
                self.replies[0] = self.replies[0].build(await request.json())
            except (KeyError, ValueError, TypeError) as exc:
                return web.json_response({"error": f"a $result argument: {exc!r}"}, status=500)
        return await super()._chat(request)

    async def _script(self, request: web.Request) -> web.Response:
        try:
            specs = await request.json()
            if not isinstance(specs, list):
                raise ScriptError("send a JSON list of replies")
            replies = [reply_from(s) for s in specs]
        except (ValueError, KeyError, TypeError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        self.replies.clear()
        self.enqueue(*replies)
        return web.json_response({"queued": len(replies)})

    async def _requests(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "requests": self.requests,
                "disconnects": len(self.disconnects),
                "finished": self.finished_streams,
                "pending": len(self.replies),
            }
        )

    async def _reset(self, request: web.Request) -> web.Response:
        self.replies.clear()
        self.requests.clear()
        self.headers.clear()
        self.disconnects.clear()
        self.finished_streams = 0
        return web.json_response({"reset": True})


async def start_app(
    provider: ControlledProvider,
    data_dir: Path,
    host: str,
    port: int,
    frontend: str | None = None,
    returning_user: bool = False,
    manager: ManagerStandin | None = None,
    model_origin: str | None = None,
    multi_user: bool = False,
    network: str | None = None,
) -> Any:
    """The standalone app, or with `frontend` the ComfyUI stand-in serving that frontend (with
    `returning_user`, on a data directory that earlier sessions used; with `multi_user`, as
    ComfyUI's --multi-user: users made with `POST /api/users`, named by the `comfy-user`
    header; with `network`, an address of this machine's, the stand-in also listens there on
    the same port, as ComfyUI's `--listen 127.0.0.1,ADDRESS`)."""
    environ = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "32768",
        "COMFY_ASSISTANT_OFFLINE": "1",  # never api.comfy.org from a test
    }
    if model_origin:
        environ["COMFY_ASSISTANT_MODEL_ORIGINS"] = model_origin
    address: dict[str, str] = {}  # the stand-in's own, once it listens (Manager is on it)
    lookups = manager_lookups(lambda: address.get("url")) if manager else None
    options = ServiceOptions(data_dir=data_dir, environ=environ, install_lookups=lookups)
    if multi_user:
        options = replace(options, users=multi_user_standin(data_dir))
    if returning_user:
        await seed_returning_user(options)
    listen = (network,) if network else ()
    app = create_standin(frontend, options, manager, listen) if frontend else create_app(options)
    runner = web.AppRunner(app)  # like ComfyUI: no handler cancellation on disconnect
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    if manager is not None:
        manager.adopt(runner)
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    address["url"] = f"http://{host}:{bound}"
    if network:
        await web.TCPSite(runner, network, bound).start()
    return runner, address["url"]


def network_address() -> str:
    """This machine's address on its network (the one a packet out would leave from)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("203.0.113.1", 9))  # (UDP: nothing is sent)
        address: str = probe.getsockname()[0]
    return address


def stop_on_stdin_eof(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    def watch() -> None:
        with contextlib.suppress(Exception):
            while sys.stdin.buffer.read(4096):
                pass
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch, daemon=True).start()


async def main(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    if not args.ignore_stdin:
        stop_on_stdin_eof(loop, stop)

    provider = await ControlledProvider(args.provider_host, args.provider_port).start()
    runner = None
    models = None
    if args.model_host:  # about 5 s for the file: its progress can be seen
        host = ModelServer(model_bytes(MODEL_SIZE), Knobs(delay=0.05))
        models = await host.start(args.model_host_port)
    network = network_address() if args.listen_network else None
    with tempfile.TemporaryDirectory(prefix="cua-e2e-") as tmp:
        try:
            app_url = None
            if not args.provider_only:
                data_dir = args.data_dir or Path(tmp) / "data"
                manager = None
                if args.manager and args.comfy_frontend:
                    manager = ManagerStandin(
                        flavour=args.manager,
                        security_level=args.manager_security,
                        allow_git_url_install=args.manager_git_url,
                        key_style="cnr",
                        idle_seconds=0.5,
                        task_seconds=0.3,
                        down_seconds=2.0,
                    )
                runner, app_url = await start_app(
                    provider,
                    data_dir,
                    args.host,
                    args.port,
                    args.comfy_frontend,
                    args.returning_user,
                    manager,
                    models.origin if models else None,
                    args.multi_user,
                    network,
                )
            printed: dict[str, Any] = {"app": app_url, "provider": provider.origin}
            if network and app_url:  # (the same port: a request there comes from that address)
                printed["network"] = f"http://{network}:{app_url.rsplit(':', 1)[1]}"
            if models is not None:
                host = {"origin": models.origin, "sha256": models.sha256, "size": MODEL_SIZE}
                printed["modelHost"] = host
                if not args.provider_only:
                    printed["dataDir"] = str(data_dir)
            print(json.dumps(printed), flush=True)
            await stop.wait()
        finally:
            if runner is not None:
                await runner.cleanup()
            if models is not None:
                await models.stop()
            await provider.stop()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="the app's port (default: free)")
    parser.add_argument("--provider-host", default=os.environ.get("E2E_PROVIDER_HOST", "127.0.0.1"))
    parser.add_argument("--provider-port", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, help="default: a fresh temporary directory")
    parser.add_argument("--provider-only", action="store_true", help="no app (real ComfyUI)")
    parser.add_argument(
        "--comfy-frontend",
        metavar="VERSION",
        help="serve the ComfyUI stand-in with this frontend (tests/comfy_standin) as the app",
    )
    parser.add_argument(
        "--returning-user",
        action="store_true",
        help="a data directory that earlier sessions used (tests/comfy_standin/returning.py)",
    )
    parser.add_argument(
        "--multi-user",
        action="store_true",
        help="as ComfyUI's --multi-user: users from POST /api/users, the comfy-user header",
    )
    parser.add_argument(
        "--manager",
        choices=["v4", "v4legacy", "v3"],
        help="with --comfy-frontend: mount ComfyUI-Manager's stand-in (tests/manager_standin.py)",
    )
    parser.add_argument(
        "--manager-security",
        default="normal",
        choices=["strong", "normal", "normal-", "weak"],
        help="the Manager stand-in's security_level",
    )
    parser.add_argument(
        "--manager-git-url",
        action="store_true",
        help="the Manager stand-in's allow_git_url_install = true (its legacy UI's git-URL route)",
    )
    parser.add_argument(
        "--model-host",
        action="store_true",
        help="a model host on 127.0.0.1 that downloads may use (tests/model_server.py)",
    )
    parser.add_argument(
        "--model-host-port",
        type=int,
        default=0,
        help="the model host's port (default: free; a real ComfyUI allows a fixed one)",
    )
    parser.add_argument(
        "--listen-network",
        action="store_true",
        help="the stand-in also listens on this machine's network address (as ComfyUI's "
        "--listen): a request there is not loopback; the JSON line adds `network`, its URL",
    )
    parser.add_argument("--ignore-stdin", action="store_true", help="stop on SIGTERM/Ctrl+C only")
    return parser.parse_args(argv)


if __name__ == "__main__":
    os.environ.setdefault("COMFY_ASSISTANT_STRICT", "1")  # an invalid request is a failure
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(parse_args(sys.argv[1:])))
