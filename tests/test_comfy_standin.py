"""The ComfyUI stand-in (tests/comfy_standin) over real sockets: what the real frontend needs
from it, ComfyUI's validation answers for `POST /api/prompt`, the run reported over `/ws`, and
bad input answered with a 4xx, never a crash. The browser suite runs the frontend against it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from comfyui_assistant.core.files.image_files import inspect_image
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.tests.comfy_standin import (
    ROOT,
    create_standin,
    frontend_root,
    frontend_versions,
)
from comfyui_assistant.tests.comfy_standin.locales import translations
from comfyui_assistant.tests.comfy_standin.returning import PORTRAIT, seed_returning_user
from comfyui_assistant.tests.comfy_standin.userdata import (
    StandinUsers,
    UserData,
    add_user_routes,
)

from .helpers import serve_app, serve_routes

VERSION = frontend_versions()[-1]


class Standin:
    def __init__(self, base: str, session: aiohttp.ClientSession) -> None:
        self.base, self.session = base, session

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        kwargs: dict[str, Any] = {"json": body} if body is not None else {"data": raw}
        async with self.session.request(
            method, self.base + path, headers=headers, **kwargs
        ) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text)
            except ValueError:
                return resp.status, text


@pytest.fixture
def returning(request: pytest.FixtureRequest) -> bool:
    """Whether the stand-in's data directory is a returning user's (parametrize indirectly)."""
    return bool(getattr(request, "param", False))


@pytest.fixture
async def standin(tmp_path: Path, returning: bool) -> AsyncIterator[Standin]:
    try:
        frontend_root(VERSION)
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)
    environ = {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
    options = ServiceOptions(data_dir=tmp_path, environ=environ)
    if returning:
        await seed_returning_user(options)
    runner, url = await serve_app(create_standin(VERSION, options))
    async with aiohttp.ClientSession() as session:
        yield Standin(url, session)
    await runner.cleanup()


async def test_i18n_serves_our_locales_as_comfyui_does(standin: Standin) -> None:
    """The frontend shows our tab's title and command's label from these (ComfyUI's GET /i18n)."""
    status, body = await standin.call("GET", "/api/i18n")
    assert status == 200
    assert set(body) == {p.name for p in (ROOT / "locales").iterdir()} >= {"en", "zh", "ar"}
    assert body["zh"]["comfyuiAssistant"] == {"tab": "助手"}
    assert body["zh"]["commands"]["ComfyUIAssistant_Open"] == {"label": "助手：显示或隐藏对话"}
    assert body["en"]["comfyuiAssistant"] == {"tab": "Assistant"}


def test_translations_merge_every_nodes_locales(tmp_path: Path) -> None:
    for node, main, commands in [
        ("a", {"g": {"x": "A"}}, {"A_Open": {"label": "a"}}),
        ("b", {"g": {"y": "B"}}, None),
    ]:
        folder = tmp_path / node / "locales" / "fr"
        folder.mkdir(parents=True)
        (folder / "main.json").write_text(json.dumps(main))
        if commands:
            (folder / "commands.json").write_text(json.dumps(commands))
    (tmp_path / "c").mkdir()  # a node without locales
    assert translations([tmp_path / n for n in "abc"]) == {
        "fr": {"g": {"x": "A", "y": "B"}, "commands": {"A_Open": {"label": "a"}}}
    }


def txt2img() -> dict[str, Any]:
    return {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "any.safetensors"}},
        "5": {
            "class_type": "EmptyLatentImage",
            "inputs": {"width": 512, "height": 512, "batch_size": 1},
        },
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["5", 0], "vae": ["4", 2]}},
        "9": {"class_type": "PreviewImage", "inputs": {"images": ["8", 0]}},
    }


async def test_the_frontend_and_our_panel_are_served(standin: Standin) -> None:
    status, page = await standin.call("GET", "/")
    assert status == 200 and '<div id="vue-app"' in page
    status, scripts = await standin.call("GET", "/api/extensions")
    assert status == 200 and "/extensions/comfyui-assistant/comfyui-assistant.js" in scripts
    assert all(s.startswith("/extensions/") for s in scripts)
    status, body = await standin.call("GET", "/extensions/comfyui-assistant/comfyui-assistant.js")
    assert status == 200 and "../../scripts/app.js" in body
    status, table = await standin.call("GET", "/extensions/comfyui-assistant/locales/zh.json")
    assert status == 200 and table["approval.allow"] == "允许"  # fetched when zh is chosen
    assert not any("/locales/" in s for s in scripts)  # served, never loaded as an extension
    status, body = await standin.call("GET", "/scripts/app.js")  # the frontend's shim module
    assert status == 200 and "export" in body
    status, defs = await standin.call("GET", "/api/object_info")
    assert status == 200 and len(defs) == 478 and "KSampler" in defs
    status, provider = await standin.call("GET", "/api/assistant/provider")
    assert status == 200 and provider["model"] == "m"


async def test_templates_are_served_as_comfyui_serves_the_package(standin: Standin) -> None:
    """The template browser's index and each template's JSON (`/templates/...`); two real
    templates that share one workflow id, as many of comfyui-workflow-templates 0.1.95 do."""
    folder = Path(__file__).parent / "fixtures" / "workflows"
    status, index = await standin.call("GET", "/templates/index.json")
    assert status == 200
    listed = {t["name"]: m["title"] for m in index for t in m["templates"]}
    assert listed == {
        "default": "Getting Started",
        "hidream_e1_full": "Image",
        "api_openai_dall_e_2_t2i": "Image API",
        "api_kling_i2v": "Video API",
    }
    served = {}
    for name in listed:
        status, served[name] = await standin.call("GET", f"/templates/{name}.json")
        assert status == 200
        assert served[name] == json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    dalle, kling = served["api_openai_dall_e_2_t2i"], served["api_kling_i2v"]
    assert dalle["id"] == kling["id"] == "3ba6fcae-c49e-40dc-8725-12d4cd833fcb"
    assert await standin.call("GET", "/templates/index_logo.json") == (200, {})
    status, text = await standin.call("GET", "/templates/..%2Fmanager%2Fgetmappings_cache.json")
    assert (status, text) == (404, "no template ../manager/getmappings_cache.json")


async def test_settings_and_userdata_round_trip(standin: Standin) -> None:
    assert await standin.call("POST", "/api/settings", {"Comfy.TutorialCompleted": True}) == (
        200,
        "",
    )
    assert (await standin.call("POST", "/api/settings/Comfy.Locale", "en"))[0] == 200
    assert await standin.call("GET", "/api/settings") == (
        200,
        {"Comfy.TutorialCompleted": True, "Comfy.Locale": "en"},
    )
    assert await standin.call("GET", "/api/settings/Comfy.Locale") == (200, "en")
    assert await standin.call("GET", "/api/settings/Nope") == (200, None)

    name = "workflows%2Fmine.json"
    assert await standin.call("POST", f"/api/userdata/{name}", raw=b'{"a": 1}') == (
        200,
        "workflows/mine.json",
    )
    assert (await standin.call("POST", f"/api/userdata/{name}?overwrite=false", raw=b"{}"))[
        0
    ] == 409
    assert await standin.call("GET", f"/api/userdata/{name}") == (200, {"a": 1})
    status, listed = await standin.call("GET", "/api/userdata?dir=workflows&full_info=true")
    assert status == 200 and [e["path"] for e in listed] == ["mine.json"]
    moved = await standin.call("POST", f"/api/userdata/{name}/move/workflows%2Fb.json")
    assert moved == (200, "workflows/b.json")
    assert await standin.call("GET", "/api/userdata?dir=workflows") == (200, ["b.json"])
    assert (await standin.call("DELETE", "/api/userdata/workflows%2Fb.json"))[0] == 204
    assert (await standin.call("GET", "/api/userdata/workflows%2Fb.json"))[0] == 404
    status, entries = await standin.call("GET", "/api/v2/userdata")
    assert (
        status == 200 and {"name": "workflows", "path": "workflows", "type": "directory"} in entries
    )


@pytest.fixture
async def new_user(tmp_path: Path) -> AsyncIterator[Standin]:
    """The stand-in's user routes over a new user's folder (the stand-in itself serves a
    returning user's, whose workflows folder exists)."""
    routes = web.RouteTableDef()
    add_user_routes(routes, StandinUsers(UserData(tmp_path / "user")))
    runner, url = await serve_routes(routes)
    try:
        async with aiohttp.ClientSession() as session:
            yield Standin(url, session)
    finally:
        await runner.cleanup()


async def test_a_new_users_folder_lists_without_a_404_only_through_v2(new_user: Standin) -> None:
    """As ComfyUI 0.3.64 (app/user_manager.py): no workflows folder yet, so /userdata?dir=
    workflows answers 404 (a console error in the page), while /v2/userdata walks the user's
    whole folder (the panel's saved-workflows listing reads it: comfy.ts savedWorkflowKeys)."""
    standin = new_user
    listing = "/api/userdata?dir=workflows&recurse=true&split=false&full_info=false"
    assert await standin.call("GET", listing) == (404, "Directory not found")
    status, entries = await standin.call("GET", "/api/v2/userdata")
    assert status == 200 and not [e for e in entries if e["path"].startswith("workflows")]
    assert (await standin.call("GET", "/api/v2/userdata?path=workflows")) == (
        404,
        "Requested path not found",
    )
    for name in ("workflows%2Fstudio%2Fflux.json", "workflows%2Fa.json"):
        assert (await standin.call("POST", f"/api/userdata/{name}", raw=b"{}"))[0] == 200
    status, entries = await standin.call("GET", "/api/v2/userdata")
    walked = [(e["type"], e["path"]) for e in entries if e["path"].startswith("workflows")]
    assert walked == [
        ("directory", "workflows/studio"),
        ("directory", "workflows"),
        ("file", "workflows/a.json"),
        ("file", "workflows/studio/flux.json"),
    ]
    assert all(isinstance(e["modified"], float) for e in entries if e["type"] == "file")


@pytest.mark.parametrize("returning", [True], indirect=True)
async def test_a_returning_users_data_directory(standin: Standin) -> None:
    """What the browser suite's returning user finds: a saved workflow, and threads an older
    version bound to tab names (two temporary tabs' names, one saved workflow's path)."""
    assert await standin.call("GET", "/api/userdata?dir=workflows&recurse=true") == (
        200,
        ["portrait.json"],
    )
    assert await standin.call("GET", "/api/userdata/workflows%2Fportrait.json") == (200, PORTRAIT)
    status, body = await standin.call("GET", "/api/assistant/threads")
    assert status == 200
    assert sorted(
        (t["id"], t["title"], t["workflow"], t["messageCount"]) for t in body["threads"]
    ) == [
        ("th_earlier_fox", "Make the fox graph sharper", "Unsaved Workflow.json", 2),
        ("th_earlier_lighthouse", "Why is the lighthouse blurry?", "Unsaved Workflow (2).json", 2),
        ("th_earlier_portrait", "What does the portrait workflow do?", "portrait.json", 2),
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/api/userdata/..%2F..%2Fsecret",
        "/api/userdata/%2Fetc%2Fpasswd",
        "/api/userdata?dir=..",
        "/api/v2/userdata?path=..%2F..",
        "/api/userdata/" + "x" * 5000,
        "/api/history?max_items=lots",
        "/api/jobs?limit=x",
    ],
)
async def test_bad_paths_are_refused_not_crashed(standin: Standin, path: str) -> None:
    status, _ = await standin.call("GET", path)
    assert 400 <= status < 500, status


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", b'"text"', b"{}", b'{"prompt": 7}', b'{"prompt": {"1": 5}}'],
)
async def test_bad_prompts_get_comfyuis_error_shape(standin: Standin, body: bytes) -> None:
    status, answer = await standin.call("POST", "/api/prompt", raw=body)
    assert status == 400
    assert isinstance(answer, str) or {"error", "node_errors"} <= set(answer)


async def test_prompt_validation_answers_like_comfyui(standin: Standin) -> None:
    prompt = txt2img()
    prompt["9"]["class_type"] = "NoSuchNode"
    status, answer = await standin.call("POST", "/api/prompt", {"prompt": prompt})
    assert status == 400 and answer["error"]["type"] == "missing_node_type"
    assert answer["error"]["extra_info"]["class_type"] == "NoSuchNode"

    prompt = txt2img()
    del prompt["5"]["inputs"]["width"]
    prompt["8"]["inputs"]["vae"] = ["4", 0]  # MODEL into a VAE input
    status, answer = await standin.call("POST", "/api/prompt", {"prompt": prompt})
    assert status == 400 and answer["error"]["type"] == "prompt_outputs_failed_validation"
    errors = {k: [e["type"] for e in v["errors"]] for k, v in answer["node_errors"].items()}
    assert errors == {"5": ["required_input_missing"], "8": ["return_type_mismatch"]}
    assert answer["node_errors"]["5"]["dependent_outputs"] == ["9"]

    prompt = txt2img()
    prompt["8"] = {"class_type": "KSampler", "inputs": {}}
    prompt["8"]["inputs"] = {
        "model": ["4", 0], "positive": ["4", 1], "negative": ["4", 1],
        "latent_image": ["5", 0], "seed": 1, "steps": 0, "cfg": "x",
        "sampler_name": "no-such-sampler", "scheduler": "normal", "denoise": 1.0,
    }  # fmt: skip
    prompt["10"] = {"class_type": "VAEDecode", "inputs": {"samples": ["8", 0], "vae": ["4", 2]}}
    prompt["9"]["inputs"]["images"] = ["10", 0]
    status, answer = await standin.call("POST", "/api/prompt", {"prompt": prompt})
    assert status == 400
    by_input = {
        e["extra_info"]["input_name"]: e["type"] for e in answer["node_errors"]["8"]["errors"]
    }
    assert by_input == {
        "positive": "return_type_mismatch",  # CLIP into CONDITIONING
        "negative": "return_type_mismatch",
        "steps": "value_smaller_than_min",
        "cfg": "invalid_input_type",
        "sampler_name": "value_not_in_list",
    }

    prompt = {"5": txt2img()["5"]}
    status, answer = await standin.call("POST", "/api/prompt", {"prompt": prompt})
    assert status == 400 and answer["error"]["type"] == "prompt_no_outputs"


async def test_a_valid_prompt_runs_over_the_websocket(standin: Standin) -> None:
    ws = await standin.session.ws_connect(standin.base + "/ws?clientId=me")
    first = await ws.receive_json(timeout=5)
    assert first == {
        "type": "status",
        "data": {"status": {"exec_info": {"queue_remaining": 0}}, "sid": "me"},
    }
    status, answer = await standin.call(
        "POST", "/api/prompt", {"prompt": txt2img(), "client_id": "me"}
    )
    assert status == 200 and answer["node_errors"] == {} and answer["number"] == 0
    kinds: list[tuple[str, Any]] = []
    while not kinds or kinds[-1][0] != "execution_success":
        message = await ws.receive_json(timeout=5)
        kinds.append((message["type"], message["data"].get("node")))
        assert message["data"].get("prompt_id", answer["prompt_id"]) == answer["prompt_id"]
    assert [k for k, _ in kinds] == [
        "status",
        "execution_start",
        "execution_cached",
        *["executing"] * 4,
        "executed",  # PreviewImage's file: a black image of the latent's size
        "executing",
        "execution_success",
    ]
    assert [n for k, n in kinds if k == "executing"] == ["4", "5", "8", "9", None]
    await asyncio.sleep(0.05)
    status, history = await standin.call("GET", f"/api/history/{answer['prompt_id']}")
    assert history[answer["prompt_id"]]["status"]["completed"] is True
    kept = history[answer["prompt_id"]]["status"]["messages"]  # as ComfyUI's history keeps them
    assert [k for k, _ in kept] == ["execution_start", "execution_cached", "execution_success"]
    assert kept[0][1]["timestamp"] <= kept[-1][1]["timestamp"]
    saved = history[answer["prompt_id"]]["outputs"]["9"]["images"][0]
    assert saved == {"filename": "ComfyUI_00001_.png", "subfolder": "", "type": "temp"}
    async with standin.session.get(standin.base + "/view", params=saved) as resp:
        latent = txt2img()["5"]["inputs"]
        info = inspect_image(await resp.read())
        assert (info.width, info.height) == (latent["width"], latent["height"])
    status, looked = await standin.call(
        "POST", "/api/assistant/outputs/look", {"outputs": ["ComfyUI_00001_.png [temp]"]}
    )
    assert status == 200 and looked["outputs"][0]["findings"][0].startswith("all black")
    status, jobs = await standin.call("GET", "/api/jobs?status=completed&limit=10&offset=0")
    assert [j["id"] for j in jobs["jobs"]] == [answer["prompt_id"]]
    assert jobs["pagination"] == {"offset": 0, "limit": 10, "total": 1, "has_more": False}
    await ws.close()

    assert (await standin.call("POST", "/api/history", {"delete": [7, "nope"]}))[0] == 200
    assert len((await standin.call("GET", "/api/history"))[1]) == 1
    assert (await standin.call("POST", "/api/history", {"clear": True}))[0] == 200
    assert await standin.call("GET", "/api/history") == (200, {})
    assert (await standin.call("POST", "/api/history", [1]))[0] == 400


async def test_an_unchanged_graph_is_cached_as_comfyui_caches_it(standin: Standin) -> None:
    """Seen in a real ComfyUI (0.3.64): queued again unchanged, nothing runs (every node listed in
    `execution_cached`, the output node's kept file sent again); a partial run of another output
    node runs only what changed, and its history also lists the kept output of the first."""
    ws = await standin.session.ws_connect(standin.base + "/ws?clientId=me")
    await ws.receive_json(timeout=5)

    async def run(body: dict[str, Any]) -> tuple[str, list[tuple[str, Any]]]:
        status, answer = await standin.call("POST", "/api/prompt", {**body, "client_id": "me"})
        assert status == 200, answer
        seen: list[tuple[str, Any]] = []
        while not seen or seen[-1][0] != "execution_success":
            message = await ws.receive_json(timeout=5)
            if message["type"] != "status":
                data = message["data"]
                seen.append((message["type"], data.get("nodes", data.get("node"))))
        return answer["prompt_id"], seen

    _, first = await run({"prompt": txt2img()})
    assert first[1] == ("execution_cached", [])
    first_file = (await standin.call("GET", "/api/history"))[1]
    _, again = await run({"prompt": txt2img()})
    assert again == [
        ("execution_start", None),
        ("execution_cached", ["4", "5", "8", "9"]),
        ("executed", "9"),  # its kept file, sent again
        ("executing", None),
        ("execution_success", None),
    ]
    save = {"images": ["8", 0], "filename_prefix": "ComfyUI"}
    prompt = txt2img() | {"11": {"class_type": "SaveImage", "inputs": save}}
    prompt["5"]["inputs"]["width"] = 256
    partial, seen = await run({"prompt": prompt, "partial_execution_targets": ["11"]})
    assert seen[1] == ("execution_cached", ["4"])
    assert [n for kind, n in seen if kind == "executed"] == ["11"]
    outputs = (await standin.call("GET", f"/api/history/{partial}"))[1][partial]["outputs"]
    assert sorted(outputs) == ["11", "9"]  # 9: the kept output of the first run, not asked for
    assert outputs["9"] == next(iter(first_file.values()))["outputs"]["9"]
    assert outputs["11"]["images"][0]["type"] == "output"
    await ws.close()
