from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.core.stream.sse import PumpOptions
from comfyui_assistant.standalone import create_app

from .helpers import assemble
from .scripted_provider import ScriptedProvider

# An invalid assembled request raises in tests (production repairs and logs it).
os.environ["COMFY_ASSISTANT_STRICT"] = "1"

ROOT = Path(__file__).resolve().parent.parent
CHECKER = ROOT / "ui" / "scripts" / "ui-stream-check.mjs"
SAFE_FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}


class SDKChecker:
    """The real AI SDK client parser (`ai` from npm) in a long-lived node process."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None or not (ROOT / "ui" / "node_modules" / "ai").is_dir():
            raise RuntimeError("run `npm ci` in ui/ first: the AI SDK checker needs node and `ai`")
        self.proc = subprocess.Popen(
            [node, str(CHECKER)],
            cwd=ROOT / "ui",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def check(self, sse: str, message: dict[str, Any] | None = None) -> dict[str, Any]:
        """Parse a response body as the browser would; fail on anything the client rejects."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"sse": sse, "message": message}) + "\n")
        self.proc.stdin.flush()
        result: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert result["violation"] is None, f"the AI SDK client rejects the stream: {result}"
        for c in result["chunks"]:
            if c["type"] == "finish" and "finishReason" in c:
                assert c["finishReason"] in SAFE_FINISH_REASONS, c
        if result["message"] is not None:  # what the server stores is what the client shows
            ours = assemble(result["chunks"], message)
            # The client publishes its message on content chunks only: a step that started
            # right before an error is not in its last snapshot.
            if ours["parts"] and ours["parts"][-1] == {"type": "step-start"}:
                ours["parts"].pop()
            assert ours == result["message"]
        return result

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="session")
def sdk() -> Iterator[SDKChecker]:
    checker = SDKChecker()
    yield checker
    checker.close()


@pytest.fixture
async def provider() -> AsyncIterator[ScriptedProvider]:
    server = await ScriptedProvider().start()
    yield server
    await server.stop()


class App:
    """Our standalone app on a real socket, with a client session."""

    def __init__(self, app: web.Application, runner: web.AppRunner, base: str) -> None:
        self.app, self.runner, self.base = app, runner, base
        self.session = aiohttp.ClientSession()

    async def post(self, path: str, body: Any, **kw: Any) -> aiohttp.ClientResponse:
        return await self.session.post(self.base + path, json=body, **kw)

    async def chat(self, body: Any) -> tuple[int, str]:
        async with await self.post("/api/assistant/chat", body) as resp:
            return resp.status, await resp.text()

    async def close(self) -> None:
        await self.session.close()
        await self.runner.cleanup()


async def start_app(data_dir: Path, environ: dict[str, str], **options: Any) -> App:
    options.setdefault("pump", PumpOptions(keepalive_seconds=0.2, poll_seconds=0.02))
    environ = {"COMFY_ASSISTANT_OFFLINE": "1", **environ}  # tests never ask api.comfy.org
    app = create_app(ServiceOptions(data_dir=data_dir, environ=environ, **options))
    runner = web.AppRunner(app)  # like ComfyUI: no handler cancellation on disconnect
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return App(app, runner, f"http://127.0.0.1:{port}")


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    """The standalone server with no provider (a test module may define its own `app`)."""
    started = await start_app(tmp_path / "data", {})
    yield started
    await started.close()


@pytest.fixture
async def assistant(provider: ScriptedProvider, tmp_path: Path) -> AsyncIterator[App]:
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "32768",
    }
    app = await start_app(tmp_path / "data", env)
    yield app
    await app.close()


@pytest.fixture
def fresh_probes() -> Iterator[None]:
    """No provider probe or server count cached from another test, before or after."""
    from comfyui_assistant.core.provider import provider_probes, server_counts

    provider_probes.clear_caches()
    server_counts.clear_calibrations()
    yield
    provider_probes.clear_caches()
    server_counts.clear_calibrations()
