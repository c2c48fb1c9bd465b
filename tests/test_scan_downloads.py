"""Downloads started from the panel (`POST /api/assistant/installs/downloads`): by model name in
a stored scan, over a real server, from a model host on 127.0.0.1 (tests/model_server.py) that
COMFY_ASSISTANT_MODEL_ORIGINS allows; the address, folder and hash are always the scan's."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from comfyui_assistant.standalone import SERVICE

from .conftest import App, start_app
from .model_server import ModelServer, host_and_app
from .test_installs_scan import SCAN, template

SIZE = 1 << 20
ROUTE = "/api/assistant/installs/downloads"
NAME = "v1-5-pruned-emaonly-fp16.safetensors"

host, app = host_and_app(SIZE)


def workflow_from(host: ModelServer, **entry: Any) -> dict[str, Any]:
    """The default template, its checkpoint's download entry pointing at the local host."""
    workflow = template("default")
    loader = next(n for n in workflow["nodes"] if n["type"] == "CheckpointLoaderSimple")
    loader["properties"]["models"] = [
        {
            "name": NAME,
            "url": host.url(f"/file/{NAME}"),
            "directory": "checkpoints",
            "hash": host.sha256,
            "hash_type": "SHA256",
            **entry,
        }
    ]
    workflow["models"] = [  # a second model, with an address the downloader does not allow
        {"name": "other.safetensors", "url": "http://example.com/o.safetensors", "directory": "vae"}
    ]
    return workflow


async def post(app: App, path: str, body: Any) -> tuple[int, Any]:
    async with app.session.post(app.base + path, json=body) as resp:
        return resp.status, await resp.json()


async def scanned(app: App, workflow: dict[str, Any]) -> dict[str, Any]:
    status, answer = await post(app, SCAN, {"workflow": workflow})
    assert status == 200, answer
    return answer


async def finished(app: App, job_id: str) -> dict[str, Any]:
    for _ in range(1000):
        async with app.session.get(f"{app.base}{ROUTE}/{job_id}") as resp:
            job: dict[str, Any] = await resp.json()
        if job["state"] not in ("queued", "downloading", "verifying"):
            return job
        await asyncio.sleep(0.02)
    raise AssertionError(f"job {job_id} never finished")


async def test_a_scanned_model_downloads_into_its_folder_and_its_hash_is_checked(app, host):
    scan = await scanned(app, workflow_from(host))
    [model, other] = scan["missingModels"]
    assert (model["name"], model["downloadable"], model["host"]) == (NAME, True, "127.0.0.1")
    assert other["downloadable"] is False
    status, answer = await post(app, ROUTE, {"scan": scan["scan"], "models": [NAME]})
    assert status == 200, answer
    [job] = answer["jobs"]
    assert (job["name"], job["folder"], job["sha256"]) == (NAME, "checkpoints", host.sha256)
    done = await finished(app, job["id"])
    assert done["state"] == "done" and done["bytesDone"] == SIZE
    target = app.app[SERVICE].options.data_dir / "models" / "checkpoints" / NAME
    assert hashlib.sha256(target.read_bytes()).hexdigest() == host.sha256
    status, again = await post(app, ROUTE, {"scan": scan["scan"], "models": [NAME]})
    assert status == 200 and again["jobs"][0]["alreadyPresent"] is True
    assert len(host.requests) == 1


async def test_a_wrong_hash_in_the_scan_fails_the_job_and_leaves_no_file(app, host):
    scan = await scanned(app, workflow_from(host, hash="0" * 64))
    status, answer = await post(app, ROUTE, {"scan": scan["scan"], "models": [NAME]})
    assert status == 200
    failed = await finished(app, answer["jobs"][0]["id"])
    assert (failed["state"], failed["error"]["code"]) == ("failed", "download.hash_mismatch")
    assert not (app.app[SERVICE].options.data_dir / "models" / "checkpoints" / NAME).exists()


async def test_names_outside_the_scan_or_not_downloadable_are_refused_before_any_start(app, host):
    scan = await scanned(app, workflow_from(host))
    status, answer = await post(app, ROUTE, {"scan": scan["scan"], "models": [NAME, "evil.pt"]})
    assert (status, answer["code"]) == (400, "installs.model_not_in_scan")
    assert answer["params"]["name"] == "evil.pt" and NAME in answer["params"]["names"]
    status, answer = await post(
        app, ROUTE, {"scan": scan["scan"], "models": [NAME, "other.safetensors"]}
    )
    assert (status, answer["code"]) == (400, "installs.model_not_downloadable")
    assert "not an https URL" in answer["params"]["reason"]
    assert app.app[SERVICE].downloads.jobs() == [] and host.requests == []  # none started


async def test_an_address_from_the_client_is_refused_and_never_fetched(app, host):
    scan = await scanned(app, workflow_from(host))
    elsewhere = host.url("/file/elsewhere.safetensors")
    for body in (
        {"scan": scan["scan"], "models": [NAME], "url": elsewhere},
        {"scan": scan["scan"], "models": [{"name": NAME, "url": elsewhere}]},
        {"scan": scan["scan"], "models": []},
        {"models": [NAME]},
        ["scan"],
    ):
        status, answer = await post(app, ROUTE, body)
        assert (status, answer["code"]) == (400, "installs.downloads_body"), body
    assert host.requests == []


async def test_an_unknown_scan_is_404_and_a_stored_one_is_read_back(app, host):
    status, answer = await post(app, ROUTE, {"scan": "scan_nope", "models": [NAME]})
    assert (status, answer["code"]) == (404, "not_found.scan")
    scan = await scanned(app, workflow_from(host))
    async with app.session.get(f"{app.base}{SCAN}/{scan['scan']}") as resp:
        assert resp.status == 200 and await resp.json() == scan
    async with app.session.get(f"{app.base}{SCAN}/scan_nope") as resp:
        assert resp.status == 404 and (await resp.json())["code"] == "not_found.scan"


async def test_without_the_extra_origin_a_plain_http_address_is_not_downloadable(host, tmp_path):
    app = await start_app(tmp_path / "data", {})
    try:
        scan = await scanned(app, workflow_from(host))
        assert scan["missingModels"][0]["downloadable"] is False
        status, answer = await post(app, ROUTE, {"scan": scan["scan"], "models": [NAME]})
    finally:
        await app.close()
    assert (status, answer["code"]) == (400, "installs.model_not_downloadable")
