"""Each missing model's size, asked of its host with a HEAD (core/installs/model_sizes.py): over a
real server, from a model host on 127.0.0.1 (tests/model_server.py) that
COMFY_ASSISTANT_MODEL_ORIGINS allows; only where the downloader would go, never offline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.installs.download_checks import Origins
from comfyui_assistant.core.installs.model_sizes import LIMIT, ModelSizes
from comfyui_assistant.core.installs.scan import ScanResult
from comfyui_assistant.core.installs.scan_downloads import download_specs

from .conftest import App, start_app
from .model_server import ModelServer, model_bytes
from .test_scan_downloads import NAME, ROUTE, post, scanned, workflow_from

SIZE = 1 << 20
ONLINE = {"COMFY_ASSISTANT_OFFLINE": ""}  # (the tests' default is offline)


@pytest.fixture
async def host() -> AsyncIterator[ModelServer]:
    server = await ModelServer(model_bytes(SIZE)).start()
    yield server
    await server.stop()


async def app_for(tmp_path: Path, host: ModelServer, **environ: str) -> App:
    env = {"COMFY_ASSISTANT_MODEL_ORIGINS": host.origin, **ONLINE, **environ}
    return await start_app(tmp_path / "data", env)


def with_models(workflow: dict[str, Any], *models: dict[str, Any]) -> dict[str, Any]:
    workflow["models"] = [*workflow["models"], *models]
    return workflow


async def test_the_size_is_the_hosts_content_length_asked_once_and_given_to_the_download(
    host, tmp_path
):
    not_a_model = {"name": "notes.txt", "url": host.url("/file/notes.txt"), "directory": "vae"}
    app = await app_for(tmp_path, host)
    try:
        scan = await scanned(app, with_models(workflow_from(host), not_a_model))
        model = scan["missingModels"][0]
        assert (model["name"], model["size"], model["sizeFrom"]) == (NAME, SIZE, "host")
        assert host.heads() == [f"/file/{NAME}"]  # not the file that cannot be downloaded
        again = await scanned(app, workflow_from(host))
        assert again["missingModels"][0]["size"] == SIZE and len(host.requests) == 1  # kept
        async with app.session.get(f"{app.base}/api/assistant/installs/scan/{scan['scan']}") as r:
            assert (await r.json())["missingModels"][0]["size"] == SIZE
        status, answer = await post(app, ROUTE, {"scan": scan["scan"], "models": [NAME]})
    finally:
        await app.close()
    assert status == 200 and answer["jobs"][0]["size"] == SIZE  # the downloader's expected size


async def test_a_redirect_gives_hugging_faces_x_linked_size_when_the_end_has_no_length(
    host, tmp_path
):
    host.knobs.redirect_to, host.knobs.linked_size = host.url(f"/file/{NAME}"), 12_345
    host.knobs.chunked = True  # the CDN's answer says no Content-Length
    app = await app_for(tmp_path, host)
    try:
        scan = await scanned(app, workflow_from(host, url=host.url("/moved")))
    finally:
        await app.close()
    assert scan["missingModels"][0]["size"] == 12_345
    assert host.heads() == ["/moved", f"/file/{NAME}"]


async def test_a_redirect_to_plain_http_is_not_followed_and_the_size_stays_unknown(host, tmp_path):
    other = await ModelServer(model_bytes(SIZE)).start()  # not an allowed origin
    host.knobs.redirect_to, host.knobs.linked_size = other.url(f"/file/{NAME}"), SIZE
    app = await app_for(tmp_path, host)
    try:
        scan = await scanned(app, workflow_from(host, url=host.url("/moved")))
    finally:
        await app.close()
        await other.stop()
    assert (scan["missingModels"][0]["size"], scan["missingModels"][0]["sizeFrom"]) == (None, None)
    assert host.heads() == ["/moved"] and other.requests == []


def models_at(*urls: str) -> list[dict[str, Any]]:
    return [
        {"name": f"m{i}.safetensors", "url": u, "downloadable": True} for i, u in enumerate(urls)
    ]


async def test_a_slow_host_or_an_error_leaves_the_size_unknown(host):
    origins = Origins.from_environ({"COMFY_ASSISTANT_MODEL_ORIGINS": host.origin})
    host.knobs.head_delay = 1.0
    slow = ModelSizes(origins, offline=False, timeout=0.2)
    assert await slow.find(models_at(host.url())) == {}
    host.knobs.head_delay, host.knobs.status = 0.0, 500
    assert await ModelSizes(origins, offline=False).find(models_at(host.url())) == {}
    host.knobs.status = None
    sizes = ModelSizes(origins, offline=False)
    assert await sizes.find(models_at(host.url())) == {host.url(): SIZE}  # (the same host, fine)
    assert len(host.heads()) == 3


async def test_an_address_the_downloader_refuses_gets_no_request(host):
    connections = []
    listener = await asyncio.start_server(
        lambda r, w: (connections.append(1), w.close()), "127.0.0.1", 0
    )
    port = listener.sockets[0].getsockname()[1]
    try:
        sizes = ModelSizes(Origins(), offline=False)  # huggingface.co and civitai.com only
        found = await sizes.find(
            models_at(f"https://127.0.0.1:{port}/m.safetensors", f"http://127.0.0.1:{port}/m.sft")
        )
    finally:
        listener.close()
        await listener.wait_closed()
    assert found == {} and connections == []


async def test_offline_no_size_is_asked(host, tmp_path):
    app = await app_for(tmp_path, host, COMFY_ASSISTANT_OFFLINE="1")
    try:
        scan = await scanned(app, workflow_from(host))
    finally:
        await app.close()
    assert scan["missingModels"][0]["size"] is None and host.requests == []


async def test_at_most_sixteen_sizes_are_asked_per_scan(host, tmp_path):
    many = [
        {"name": f"m{i:02}.safetensors", "url": host.url(f"/file/m{i:02}"), "directory": "loras"}
        for i in range(LIMIT + 4)
    ]
    app = await app_for(tmp_path, host)
    try:
        scan = await scanned(app, with_models(workflow_from(host), *many))
    finally:
        await app.close()
    assert LIMIT == 16 and len(host.heads()) == 16
    sizes = [m["size"] for m in scan["missingModels"] if m["name"].startswith(("m", NAME))]
    assert sizes.count(SIZE) == 16 and sizes.count(None) == 5


def test_only_a_size_the_host_gave_is_the_downloads_expected_size():
    def model(name: str, size: int, source: str) -> dict[str, Any]:
        url = f"https://huggingface.co/x/{name}"
        return {"name": name, "url": url, "directory": "vae", "hash": None, "size": size,
                "sizeFrom": source, "downloadable": True}  # fmt: skip

    result = ScanResult(
        "ui", [], [], [model("a.sft", 4_710_000, "manager"), model("b.sft", 123, "host")], [], {}
    )
    specs = download_specs("scan_1", result, ["a.sft", "b.sft"])
    assert [s.size for s in specs] == [None, 123]  # Manager's "4.71MB" is rounded
