"""/api/assistant/environment: the summary, node search, model lists and a rescan — standalone (the
shipped object_info) and with a scanner that sees model files come and go."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.knowledge.environment import EnvironmentService, from_object_info
from yarl import URL

from .conftest import ROOT, start_app

BASE = "/api/assistant/environment"
SHIPPED_SOURCE = f"object_info:{ROOT / 'data' / 'object_info.json.gz'}"


async def call(app, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
    url = URL(app.base + path, encoded=True)
    async with app.session.request(method, url, **kwargs) as resp:
        return resp.status, await resp.json()


def without_time(summary: dict[str, Any], since: float) -> dict[str, Any]:
    scanned = summary["scannedAt"]
    assert isinstance(scanned, float) and since <= scanned <= time.time()
    return {k: v for k, v in summary.items() if k != "scannedAt"}


async def test_the_standalone_summary(assistant):
    started = time.time()
    status, summary = await call(assistant, "GET", f"{BASE}/summary")
    assert status == 200
    assert without_time(summary, started) == {
        "summary": "478 node types in 2 packages, 0 models",
        "source": SHIPPED_SOURCE,
        "nodeTypes": 478,
        "packages": {"core": 477, "websocket_image_save": 1},
        "models": {},
    }
    # cached: the same scan answers again
    assert await call(assistant, "GET", f"{BASE}/summary") == (200, summary)


UPSCALE_HITS = [
    {
        "type": "ImageUpscaleWithModel",
        "displayName": "Upscale Image (using Model)",
        "category": "image/upscaling",
        "description": "",
        "inputs": {"upscale_model": "UPSCALE_MODEL", "image": "IMAGE"},
        "outputs": [{"name": "IMAGE", "type": "IMAGE"}],
        "package": "core",
    },
    {
        "type": "UpscaleModelLoader",
        "displayName": "Load Upscale Model",
        "category": "loaders",
        "description": "",
        "inputs": {},
        "outputs": [{"name": "UPSCALE_MODEL", "type": "UPSCALE_MODEL"}],
        "package": "core",
    },
    {
        "type": "SD_4XUpscale_Conditioning",
        "displayName": "SD_4XUpscale_Conditioning",
        "category": "conditioning/upscale_diffusion",
        "description": "",
        "inputs": {"images": "IMAGE", "positive": "CONDITIONING", "negative": "CONDITIONING"},
        "outputs": [
            {"name": "positive", "type": "CONDITIONING"},
            {"name": "negative", "type": "CONDITIONING"},
            {"name": "latent", "type": "LATENT"},
        ],
        "package": "core",
    },
]


async def test_node_search_ranks_the_upscale_nodes_first(assistant):
    assert await call(assistant, "GET", f"{BASE}/nodes?q=upscale&limit=3") == (
        200,
        {"query": "upscale", "nodes": UPSCALE_HITS},
    )
    status, default = await call(assistant, "GET", f"{BASE}/nodes?q=%20%20upscale%20")
    assert status == 200
    assert default["query"] == "upscale"
    assert default["nodes"][:3] == UPSCALE_HITS
    assert len(default["nodes"]) == len({n["type"] for n in default["nodes"]}) == 13
    assert all("upscal" in json.dumps(n).lower() for n in default["nodes"])

    status, one = await call(assistant, "GET", f"{BASE}/nodes?q=KSampler&limit=1")
    assert (status, [n["type"] for n in one["nodes"]]) == (200, ["KSampler"])
    status, many = await call(assistant, "GET", f"{BASE}/nodes?q=image")
    assert (status, len(many["nodes"])) == (200, 20)  # the default limit
    status, more = await call(assistant, "GET", f"{BASE}/nodes?q=image&limit=200")
    assert status == 200 and 20 < len(more["nodes"]) <= 200
    assert more["nodes"][:20] == many["nodes"]
    assert await call(assistant, "GET", f"{BASE}/nodes?q=zzqqxxnothing") == (
        200,
        {"query": "zzqqxxnothing", "nodes": []},
    )


@pytest.mark.parametrize("query", ["", "?limit=5", "?q=", "?q=%20%20", "?q=%09"])
async def test_a_search_without_words_is_400(assistant, query):
    assert await call(assistant, "GET", f"{BASE}/nodes{query}") == (
        400,
        {"error": "give a search with ?q=, e.g. ?q=upscale"},
    )


@pytest.mark.parametrize(
    "limit",
    [
        "0",
        "201",
        "-1",
        "1.5",
        "abc",
        "",
        "%201",
        "1e2",
        "99999999999999999999999",
        "%C2%B2",  # '²': str.isdigit() says yes, int() says no
    ],
)
async def test_a_bad_limit_is_400(assistant, limit):
    assert await call(assistant, "GET", f"{BASE}/nodes?q=upscale&limit={limit}") == (
        400,
        {"error": "'limit' must be a number from 1 to 200"},
    )


async def test_standalone_has_no_models(assistant):
    assert await call(assistant, "GET", f"{BASE}/models") == (200, {})
    assert await call(assistant, "GET", f"{BASE}/models?category=") == (200, {})
    assert await call(assistant, "GET", f"{BASE}/models?category=checkpoints") == (
        400,
        {"error": "Unknown model category 'checkpoints'; use one of: none"},
    )


async def test_scan_returns_a_fresh_summary(assistant):
    status, first = await call(assistant, "GET", f"{BASE}/summary")
    assert status == 200
    started = time.time()
    status, scanned = await call(assistant, "POST", f"{BASE}/scan", json={})
    assert status == 200
    assert without_time(scanned, started) == {k: v for k, v in first.items() if k != "scannedAt"}
    assert scanned["scannedAt"] > first["scannedAt"]
    assert await call(assistant, "GET", f"{BASE}/summary") == (200, scanned)


OBJECT_INFO = {
    "CheckpointLoaderSimple": {
        "input": {"required": {"ckpt_name": [["a.safetensors"]]}},
        "output": ["MODEL", "CLIP", "VAE"],
        "display_name": "Load Checkpoint",
        "category": "loaders",
        "python_module": "nodes",
    },
    "FaceDetailer": {
        "input": {"required": {"image": ["IMAGE"]}},
        "output": ["IMAGE"],
        "display_name": "FaceDetailer",
        "category": "ImpactPack",
        "python_module": "custom_nodes.ComfyUI-Impact-Pack@8.8.1",
    },
}


class FolderScanner:
    """A scanner that lists model folders on disk, like ComfyUI's folder_paths."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls = 0

    def __call__(self):
        self.calls += 1
        models = {
            folder.name: sorted(f.name for f in folder.iterdir())
            for folder in sorted(self.root.iterdir())
        }
        return from_object_info(OBJECT_INFO, models, source="test-scanner")


@pytest.fixture
async def with_models(provider, tmp_path):
    root = tmp_path / "models"
    for folder, files in {
        "checkpoints": ["sdxl_base.safetensors", "dreamshaper_8.safetensors"],
        "loras": ["detail.safetensors"],
        "text_encoders": ["t5xxl_fp16.safetensors"],
    }.items():
        (root / folder).mkdir(parents=True)
        for name in files:
            (root / folder / name).write_bytes(b"")
    scanner = FolderScanner(root)
    data_dir = tmp_path / "data"
    service = EnvironmentService(data_dir, scanner, "test-scanner")
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(data_dir, env, environment=service)
    yield app, root, scanner
    await app.close()


async def test_models_with_and_without_a_category(with_models):
    app, _, _ = with_models
    started = time.time() - 5
    status, summary = await call(app, "GET", f"{BASE}/summary")
    assert status == 200
    assert without_time(summary, started) == {
        "summary": "2 node types in 2 packages, 4 models",
        "source": "test-scanner",
        "nodeTypes": 2,
        "packages": {"ComfyUI-Impact-Pack": 1, "core": 1},
        "models": {"checkpoints": 2, "loras": 1, "text_encoders": 1},
    }
    assert await call(app, "GET", f"{BASE}/models") == (
        200,
        {"checkpoints": 2, "loras": 1, "text_encoders": 1},
    )
    assert await call(app, "GET", f"{BASE}/models?category=checkpoints") == (
        200,
        {
            "category": "checkpoints",
            "models": ["dreamshaper_8.safetensors", "sdxl_base.safetensors"],
        },
    )
    # ComfyUI's old folder name still answers
    assert await call(app, "GET", f"{BASE}/models?category=clip") == (
        200,
        {"category": "text_encoders", "models": ["t5xxl_fp16.safetensors"]},
    )
    for unknown in ("vae", "Checkpoints", "..", "checkpoints%2F.."):
        status, answer = await call(app, "GET", f"{BASE}/models?category={unknown}")
        name = URL("/?c=" + unknown, encoded=True).query["c"]
        assert (status, answer) == (
            400,
            {
                "error": f"Unknown model category {name!r}; use one of: checkpoints, loras, "
                "text_encoders"
            },
        )
    status, hits = await call(app, "GET", f"{BASE}/nodes?q=face")
    assert (status, [(n["type"], n["package"]) for n in hits["nodes"]]) == (
        200,
        [("FaceDetailer", "ComfyUI-Impact-Pack")],
    )


async def test_a_scan_sees_new_model_files(with_models, tmp_path):
    app, root, scanner = with_models
    status, before = await call(app, "GET", f"{BASE}/summary")
    assert (status, scanner.calls) == (200, 1)
    (root / "checkpoints" / "flux1-dev.safetensors").write_bytes(b"")
    (root / "vae").mkdir()
    (root / "vae" / "ae.safetensors").write_bytes(b"")

    # not rescanned on its own
    assert await call(app, "GET", f"{BASE}/summary") == (200, before)
    assert (tmp_path / "data" / "environment.json").is_file()  # the scan is cached on disk

    status, after = await call(app, "POST", f"{BASE}/scan", json={})
    assert (status, scanner.calls) == (200, 2)
    assert without_time(after, before["scannedAt"]) == {
        "summary": "2 node types in 2 packages, 6 models",
        "source": "test-scanner",
        "nodeTypes": 2,
        "packages": {"ComfyUI-Impact-Pack": 1, "core": 1},
        "models": {"checkpoints": 3, "loras": 1, "text_encoders": 1, "vae": 1},
    }
    assert await call(app, "GET", f"{BASE}/summary") == (200, after)
    assert await call(app, "GET", f"{BASE}/models?category=checkpoints") == (
        200,
        {
            "category": "checkpoints",
            "models": [
                "dreamshaper_8.safetensors",
                "flux1-dev.safetensors",
                "sdxl_base.safetensors",
            ],
        },
    )
    assert await call(app, "GET", f"{BASE}/models?category=vae") == (
        200,
        {"category": "vae", "models": ["ae.safetensors"]},
    )


@pytest.mark.parametrize(
    "content_type", ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]
)
async def test_a_cross_site_form_cannot_start_a_scan(with_models, content_type):
    """A scan walks every model folder; like every POST it accepts only JSON: neither a form
    nor a bodiless POST (what a `no-cors` fetch from another site sends) starts one."""
    app, _, scanner = with_models
    assert (await call(app, "GET", f"{BASE}/summary"))[0] == 200
    status, answer = await call(
        app, "POST", f"{BASE}/scan", data=b"x=1", headers={"Content-Type": content_type}
    )
    assert (status, answer) == (
        415,
        {"error": "send the body as JSON with 'Content-Type: application/json'"},
    )
    assert scanner.calls == 1
    assert (await call(app, "POST", f"{BASE}/scan"))[0] == 415  # no body, no content type
    assert scanner.calls == 1
    assert (await call(app, "POST", f"{BASE}/scan", json={}))[0] == 200  # the panel's button
    assert scanner.calls == 2
