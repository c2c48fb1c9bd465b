"""Without the `mcp` package (a ComfyUI updated with `git pull` and no `pip install`), the
assistant still loads and chats; the MCP endpoint and the stdio command say what to install."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import aiohttp

from .test_standalone_process import Server

INSTALL = "pip install -r requirements.txt"


def _without_mcp(tmp_path: Path) -> dict[str, str]:
    """An environment whose `mcp` and `mcp_types` fail to import, as when they are not installed."""
    blocker = tmp_path / "blocker"
    for name in ("mcp", "mcp_types"):
        (blocker / name).mkdir(parents=True)
        (blocker / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}'\", name={name!r})\n"
        )
    return {"PYTHONPATH": os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])}


async def test_the_server_loads_and_the_mcp_endpoint_says_what_to_install(tmp_path: Path) -> None:
    server = await Server.start(tmp_path / "data", env=_without_mcp(tmp_path))
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.base + "/api/assistant/threads") as resp:
                assert resp.status == 200, await resp.text()
            for method, path in (
                ("POST", "/api/assistant/mcp"),
                ("GET", "/api/assistant/mcp/tokens"),
            ):
                async with http.request(method, server.base + path, json={}) as resp:
                    assert resp.status == 503
                    error = (await resp.json())["error"]
                    assert "'mcp'" in error and INSTALL in error, error
    finally:
        await server.stop()


async def test_the_stdio_command_says_what_to_install(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "comfyui_assistant", "mcp",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **_without_mcp(tmp_path)},
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1
    assert out == b""  # (stdout is the protocol's)
    assert INSTALL in err.decode() and "'mcp'" in err.decode(), err
