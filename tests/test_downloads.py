"""The model downloader (core/installs): real downloads from a model host on 127.0.0.1
(tests/model_server.py) into the standalone models folder, through our app's service, and its
routes over a real socket."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.comfy_environment import comfyui_model_folders
from comfyui_assistant.core.installs.download_checks import (
    DownloadError,
    DownloadSpec,
    Origins,
    plan,
)
from comfyui_assistant.core.installs.downloads import Downloads, Job
from comfyui_assistant.core.installs.model_folders import ModelFolders
from comfyui_assistant.standalone import SERVICE

from .conftest import App
from .helpers import small_file_system
from .model_server import Knobs, ModelServer, host_and_app, model_bytes

SIZE = 4 << 20
ROUTE = "/api/assistant/installs/downloads"

host, app = host_and_app(SIZE)


def downloads(app: App) -> Downloads:
    return app.app[SERVICE].downloads


def models(app: App) -> Path:
    return app.app[SERVICE].options.data_dir / "models"


def spec(host: ModelServer, name: str = "SD1.5/model.safetensors", **kw: Any) -> DownloadSpec:
    kw.setdefault("sha256", host.sha256)
    kw.setdefault("url", host.url())
    return DownloadSpec(folder="checkpoints", name=name, **kw)


async def settled(job: Job, seconds: float = 30) -> dict[str, Any]:
    if job.task is not None:
        await asyncio.wait_for(asyncio.shield(job.task), seconds)
    return job.as_json()


async def until(check: Any, seconds: float = 10) -> None:
    for _ in range(int(seconds / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_a_download_lands_in_the_models_folder_with_its_progress(app, host):
    host.knobs.delay = 0.004  # about 1.5 s for the file
    job = downloads(app).start(spec(host))
    target = models(app) / "checkpoints" / "SD1.5" / "model.safetensors"
    seen: list[dict[str, Any]] = []
    while not job.task.done():  # type: ignore[union-attr]
        seen.append(job.as_json())
        await asyncio.sleep(0.02)
    final = await settled(job)
    assert final["state"] == "done", final
    assert sha(target) == host.sha256 and not target.with_name("model.safetensors.part").exists()
    moving = [s for s in seen if s["state"] == "downloading" and 0 < s["bytesDone"] < SIZE]
    done = [s["bytesDone"] for s in moving]
    assert len(set(done)) >= 3 and done == sorted(done)  # increasing, observed mid-way
    assert all(s["bytesTotal"] == SIZE for s in moving)
    assert any(s["bytesPerSecond"] > 0 and s["etaSeconds"] is not None for s in moving)
    assert (final["bytesDone"], final["folder"], final["pickle"]) == (SIZE, "checkpoints", False)
    assert host.ranges() == [None]


async def test_a_cancel_keeps_the_part_and_the_next_start_resumes_it_exactly(app, host):
    host.knobs.delay = 0.01
    job = downloads(app).start(spec(host))
    await until(lambda: job.progress.done >= 1 << 20)
    async with app.session.delete(f"{app.base}{ROUTE}/{job.id}") as resp:
        cancelled = await resp.json()
    assert resp.status == 200 and cancelled["state"] == "cancelled" and cancelled["partKept"]
    part = models(app) / "checkpoints" / "SD1.5" / "model.safetensors.part"
    kept = part.stat().st_size
    assert 0 < kept < SIZE
    host.knobs.delay = 0
    again = downloads(app).start(spec(host))
    assert again.id != job.id and (await settled(again))["state"] == "done"
    assert host.ranges() == [None, f"bytes={kept}-"]  # resumed, not downloaded again
    assert sha(part.with_name("model.safetensors")) == host.sha256  # (the part hashed first)


CUT = 3 << 19  # 1.5 MB: half a write buffer past the first


async def test_a_file_that_changed_since_the_part_is_downloaded_whole_again(app, host):
    host.knobs.delay = 0.01
    job = downloads(app).start(spec(host, sha256=None))  # (no hash would catch a mix)
    await until(lambda: job.progress.done >= 1 << 20)
    await downloads(app).cancel(job)
    first_version = host.etag
    host.data, host.knobs.delay = model_bytes(SIZE, seed=29), 0  # a new version upstream
    again = await settled(downloads(app).start(spec(host, sha256=None)))
    assert again["state"] == "done"
    assert sha(models(app) / "checkpoints" / "SD1.5" / "model.safetensors") == host.sha256
    resumed = host.requests[1]["headers"]
    assert resumed["Range"].startswith("bytes=") and resumed["If-Range"] == first_version


async def test_a_dropped_connection_resumes_on_its_own_from_the_last_byte(app, host):
    host.knobs = Knobs(drop_at=CUT, drops=1)
    job = downloads(app).start(spec(host))
    assert (await settled(job))["state"] == "done"
    assert host.ranges() == [None, f"bytes={CUT}-"]  # (what came before the cut was written)
    assert sha(models(app) / "checkpoints" / "SD1.5" / "model.safetensors") == host.sha256


async def test_a_connection_that_keeps_dropping_fails_and_keeps_the_part(app, host):
    host.knobs = Knobs(drop_at=CUT, drops=100)
    job = downloads(app).start(spec(host))
    failed = await settled(job)
    assert failed["state"] == "failed" and failed["error"]["code"] == "download.interrupted"
    assert failed["error"]["params"]["done"] == "1.5 MB" and failed["partKept"]
    assert host.ranges() == [None] + [f"bytes={CUT}-"] * 3  # 3 resumes that got no further
    host.knobs = Knobs()
    assert (await settled(downloads(app).start(spec(host))))["state"] == "done"
    assert host.ranges()[-1] == f"bytes={CUT}-"
    assert sha(models(app) / "checkpoints" / "SD1.5" / "model.safetensors") == host.sha256


async def test_a_server_that_ignores_range_is_downloaded_again_from_0(app, host):
    part = models(app) / "checkpoints" / "SD1.5" / "model.safetensors.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\0" * (1 << 20))  # not the file's first bytes: appending would be wrong
    host.knobs.ignore_range = True
    job = downloads(app).start(spec(host))
    assert (await settled(job))["state"] == "done"
    assert host.ranges() == ["bytes=1048576-"]
    assert sha(part.with_name("model.safetensors")) == host.sha256


async def test_a_whole_part_is_verified_on_416_and_a_bad_one_is_dropped(app, host):
    part = models(app) / "checkpoints" / "SD1.5" / "model.safetensors.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(host.data)
    job = downloads(app).start(spec(host))
    assert (await settled(job))["state"] == "done"
    assert host.ranges() == [f"bytes={SIZE}-"] and not part.exists()
    bad = part.with_name("other.safetensors.part")
    bad.write_bytes(b"x" * SIZE)  # as long as the file, but other bytes
    job = downloads(app).start(spec(host, name="SD1.5/other.safetensors"))
    failed = await settled(job)
    assert failed["error"]["code"] == "download.hash_mismatch", failed
    assert not bad.exists() and not bad.with_name("other.safetensors").exists()


async def test_wrong_bytes_fail_the_hash_and_leave_neither_target_nor_part(app, host):
    host.knobs.corrupt = True
    job = downloads(app).start(spec(host))
    failed = await settled(job)
    assert failed["state"] == "failed" and failed["error"]["code"] == "download.hash_mismatch"
    assert failed["error"]["params"]["expected"] == host.sha256
    folder = models(app) / "checkpoints" / "SD1.5"
    assert list(folder.iterdir()) == [] and not failed["partKept"]


async def test_a_file_already_there_is_not_downloaded_again(app, host):
    target = models(app) / "checkpoints" / "SD1.5" / "model.safetensors"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"already here")
    job = downloads(app).start(spec(host))
    state = await settled(job)
    assert (state["state"], state["alreadyPresent"]) == ("done", True)
    assert host.requests == [] and target.read_bytes() == b"already here"


async def test_one_job_per_target_and_two_downloads_at_a_time(app, host):
    host.knobs.delay = 0.01
    first = downloads(app).start(spec(host))
    assert downloads(app).start(spec(host)) is first
    others = [downloads(app).start(spec(host, name=f"m{i}.safetensors")) for i in range(2)]
    await until(lambda: first.progress.done > 0)
    states = sorted(job.as_json()["state"] for job in [first, *others])
    assert states == ["downloading", "downloading", "queued"]
    for job in [first, *others]:
        await downloads(app).cancel(job)
    assert {job.state for job in [first, *others]} == {"cancelled"}


@pytest.mark.parametrize(
    "name",
    [
        "../model.safetensors",
        "SD1.5/../../model.safetensors",
        "/etc/model.safetensors",
        "..\\model.safetensors",
        "C:model.safetensors",
        "a//model.safetensors",
        "./model.safetensors",
        ".model.safetensors",
        "model.safetensors.",
        "model\x00.safetensors",
        "",
    ],
)
async def test_path_tricks_are_refused_before_any_request(app, host, name):
    with pytest.raises(DownloadError) as refused:
        downloads(app).start(spec(host, name=name))
    assert refused.value.coded.code == "download.name_invalid"
    assert host.requests == [] and downloads(app).jobs() == []


async def test_names_outside_the_model_files_and_folders_are_refused(app, host):
    cases = [
        (spec(host, name="notes.txt"), "download.extension"),
        (spec(host, name="model.py"), "download.extension"),
        (DownloadSpec(host.url(), "custom_nodes", "x.safetensors"), "download.unknown_folder"),
        (DownloadSpec(host.url(), "../models", "x.safetensors"), "download.unknown_folder"),
        (spec(host, sha256="abc"), "download.hash_invalid"),
    ]
    for bad, code in cases:
        with pytest.raises(DownloadError) as refused:
            downloads(app).start(bad)
        assert refused.value.coded.code == code, bad
    assert host.requests == []
    legacy = downloads(app).start(DownloadSpec(host.url(), "unet", "u.pth", sha256=host.sha256))
    state = await settled(legacy)  # (a pickle format: allowed, flagged)
    assert (state["folder"], state["pickle"], state["state"]) == ("diffusion_models", True, "done")


def test_only_https_to_the_model_hosts_without_credentials_is_planned(tmp_path):
    folders = ModelFolders.standalone(tmp_path)
    hf = "https://huggingface.co/org/repo/resolve/main/model.safetensors?download=true"
    ok = plan(DownloadSpec(hf, "clip", "model.safetensors"), Origins(), folders)
    assert ok.target == tmp_path / "models" / "text_encoders" / "model.safetensors"
    assert str(ok.url) == hf
    cases = {
        "http://huggingface.co/x/model.safetensors": "download.not_https",
        "https://huggingface.co.evil.example/model.safetensors": "download.host_not_allowed",
        "https://evil.example/model.safetensors": "download.host_not_allowed",
        "https://huggingface.co:8443/model.safetensors": "download.host_not_allowed",
        "https://user:secret@huggingface.co/model.safetensors": "download.url_credentials",
        "https://civitai.com/api/download/models/1?token=abc": "download.url_credentials",
        "http://127.0.0.1:8188/model.safetensors": "download.not_https",
        "file:///etc/passwd": "download.url_invalid",
        "https://huggingface.co/a b/model.safetensors": "download.url_invalid",
        "//huggingface.co/model.safetensors": "download.not_https",
        "https://user:secret@huggingface.co/a b/model.safetensors": "download.url_invalid",
        "https://huggingface.co/a b/model.safetensors?token=secret": "download.url_invalid",
    }
    for url, code in cases.items():
        with pytest.raises(DownloadError) as refused:
            plan(DownloadSpec(url, "checkpoints", "model.safetensors"), Origins(), folders)
        assert refused.value.coded.code == code, url
        assert "secret" not in str(refused.value)


async def test_a_host_not_in_the_extra_origins_is_refused(host, tmp_path):
    other = Downloads(ModelFolders.standalone(tmp_path), Origins())
    with pytest.raises(DownloadError) as refused:
        other.start(spec(host))
    assert refused.value.coded.code == "download.not_https" and host.requests == []


async def test_redirects_are_followed_only_to_an_allowed_scheme(app, host):
    job = downloads(app).start(spec(host, url=host.url("/moved")))
    assert (await settled(job))["state"] == "done"
    assert [r["path"] for r in host.requests] == ["/moved", "/file/model.safetensors"]
    plain = host.origin.replace("127.0.0.1", "localhost")  # another origin, over http
    host.knobs.redirect_to = plain + "/file/model.safetensors"
    job = downloads(app).start(spec(host, name="b.safetensors", url=host.url("/moved")))
    failed = await settled(job)
    assert failed["error"]["code"] == "download.redirect_insecure", failed
    assert [r["path"] for r in host.requests][2:] == ["/moved"]  # not followed
    sent = {name.lower() for r in host.requests for name in r["headers"]}
    assert not sent & {"authorization", "cookie", "proxy-authorization"}


async def test_an_error_status_or_a_web_page_fails_with_what_it_was(app, host):
    host.knobs.status = 404
    failed = await settled(downloads(app).start(spec(host)))
    assert failed["error"]["code"] == "download.http_status"
    assert failed["error"]["params"]["status"] == 404 and len(host.requests) == 1
    host.knobs = Knobs(content_type="text/html")
    failed = await settled(downloads(app).start(spec(host)))
    assert failed["error"]["code"] == "download.web_page"
    assert not (models(app) / "checkpoints" / "SD1.5" / "model.safetensors").exists()


async def test_a_file_larger_than_the_free_space_is_refused_before_writing(app, host):
    host.knobs.content_length = 1 << 60  # an exabyte
    failed = await settled(downloads(app).start(spec(host)))
    assert failed["state"] == "failed" and failed["error"]["code"] == "download.no_space"
    assert not (models(app) / "checkpoints" / "SD1.5").exists()  # not a byte written


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB file system of its own."""
    with small_file_system(tmp_path, "2m") as disk:
        yield disk


async def test_a_full_disk_fails_the_job_and_keeps_the_part_for_a_resume(host, small_disk):
    host.knobs.chunked = True  # no Content-Length: nothing to refuse before writing
    origins = Origins.from_environ({"COMFY_ASSISTANT_MODEL_ORIGINS": host.origin})
    there = Downloads(ModelFolders.standalone(small_disk), origins)
    failed = await settled(there.start(spec(host)))
    assert failed["state"] == "failed" and failed["error"]["code"] == "download.disk_full"
    assert failed["error"]["params"] == {"name": "SD1.5/model.safetensors", "folder": "checkpoints"}
    part = small_disk / "models" / "checkpoints" / "SD1.5" / "model.safetensors.part"
    kept = part.stat().st_size
    assert failed["partKept"] and kept > 0
    remount = ["mount", "-o", "remount,size=16m", str(small_disk)]  # room again
    await asyncio.to_thread(subprocess.run, remount, check=True)
    assert (await settled(there.start(spec(host))))["state"] == "done"
    assert host.ranges() == [None, f"bytes={kept}-"]
    assert sha(part.with_name("model.safetensors")) == host.sha256
    await there.close()


async def test_the_routes_list_show_and_cancel_jobs(app, host):
    host.knobs.delay = 0.01
    job = downloads(app).start(spec(host))
    async with app.session.get(app.base + ROUTE) as resp:
        listed = await resp.json()
    assert resp.status == 200 and [j["id"] for j in listed["jobs"]] == [job.id]
    assert listed["jobs"][0]["url"] == host.url()
    async with app.session.get(f"{app.base}{ROUTE}/{job.id}") as resp:
        assert (await resp.json())["state"] in ("queued", "downloading")
    await until(lambda: job.progress.done > 0)
    async with app.session.delete(f"{app.base}{ROUTE}/{job.id}?discard=2") as resp:
        assert resp.status == 400 and job.state == "downloading"
    async with app.session.delete(f"{app.base}{ROUTE}/{job.id}?discard=1") as resp:
        gone = await resp.json()
    assert (gone["state"], gone["partKept"]) == ("cancelled", False)
    assert not (models(app) / "checkpoints" / "SD1.5" / "model.safetensors.part").exists()
    async with app.session.get(f"{app.base}{ROUTE}/nope") as resp:
        assert resp.status == 404 and (await resp.json())["code"] == "not_found.download"
    async with app.session.post(app.base + ROUTE, json={"url": host.url()}) as resp:
        assert resp.status == 400  # a start names a scan's models, never an address
        assert (await resp.json())["code"] == "installs.downloads_body"


async def test_inside_comfyui_the_folders_are_folder_paths_at_each_use(monkeypatch, host, tmp_path):
    folder_paths = types.ModuleType("folder_paths")  # ComfyUI's module, as ComfyUI sets it up
    paths = {
        "checkpoints": [tmp_path / "extra" / "checkpoints", tmp_path / "models" / "checkpoints"],
        "diffusion_models": [
            tmp_path / "models" / "unet",
            tmp_path / "models" / "diffusion_models",
        ],
        "custom_nodes": [tmp_path / "custom_nodes"],
        "configs": [tmp_path / "models" / "configs"],
    }
    folder_paths.folder_names_and_paths = {  # type: ignore[attr-defined]
        name: ([str(p) for p in dirs], {".safetensors"}) for name, dirs in paths.items()
    }
    monkeypatch.setitem(sys.modules, "folder_paths", folder_paths)
    there = Downloads(
        comfyui_model_folders(),
        Origins.from_environ({"COMFY_ASSISTANT_MODEL_ORIGINS": host.origin}),
    )
    job = there.start(spec(host))  # into get_folder_paths("checkpoints")[0]
    assert (await settled(job))["state"] == "done"
    assert sha(paths["checkpoints"][0] / "SD1.5" / "model.safetensors") == host.sha256
    elsewhere = paths["diffusion_models"][1] / "flux.safetensors"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_bytes(b"in the second folder")
    found = there.start(DownloadSpec(host.url(), "unet", "flux.safetensors"))
    assert (found.state, found.present, len(host.requests)) == ("done", True, 1)
    for folder in ("custom_nodes", "configs", "ipadapter"):
        with pytest.raises(DownloadError, match="not a ComfyUI models folder"):
            there.start(DownloadSpec(host.url(), folder, "x.safetensors"))
    folder_paths.folder_names_and_paths["ipadapter"] = ([str(tmp_path / "ip")], set())  # type: ignore[attr-defined]
    job = there.start(DownloadSpec(host.url(), "ipadapter", "ip.safetensors"))  # (a custom node's)
    assert (await settled(job))["state"] == "done" and (
        tmp_path / "ip" / "ip.safetensors"
    ).is_file()
    await there.close()
