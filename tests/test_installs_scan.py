"""Missing nodes and models of a workflow (issue 28, FIND): ComfyUI's real templates and
ComfyUI-Manager's recorded answers against the real object_info the other tests use, and the
route over a real server, attachments included."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.base.errors import RequestError
from comfyui_assistant.core.installs.lookups import NO_COMFYUI_URL
from comfyui_assistant.core.installs.model_refs import parse_model_list
from comfyui_assistant.core.installs.model_scan import widget_values
from comfyui_assistant.core.installs.node_map import MANAGER_MAP, InstalledPacks, NodeMap
from comfyui_assistant.core.installs.scan import Lookups, scan_workflow
from comfyui_assistant.core.installs.scans import ScanStore
from comfyui_assistant.core.installs.workflow_nodes import workflow_nodes
from comfyui_assistant.core.knowledge.environment import from_object_info, load_object_info_file

from .conftest import start_app

FIXTURES = Path(__file__).parent / "fixtures"
ENV = load_object_info_file()
IMPACT = "https://github.com/ltdrdata/ComfyUI-Impact-Pack"
SCAN = "/api/assistant/installs/scan"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text("utf-8"))


def template(name: str) -> dict[str, Any]:
    return fixture(f"workflows/{name}.json")


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


def with_node(workflow: dict[str, Any], node_id: int, node_type: str, **fields: Any) -> None:
    workflow["nodes"].append({"id": node_id, "type": node_type, "mode": 0, **fields})


def installed_env(**files: list[str]) -> Any:
    """The real object_info as ComfyUI sends it once these model files are installed: each
    loader's combo lists its folder's files."""
    nodes = copy.deepcopy(dict(ENV.nodes))
    folders = {"ckpt_name": "checkpoints", "vae_name": "vae", "unet_name": "diffusion_models"}
    for entry in nodes.values():
        for specs in (entry.get("input") or {}).values():
            for name, spec in specs.items():
                if name in folders and folders[name] in files and isinstance(spec[0], list):
                    spec[0] = [*spec[0], *files[folders[name]]]
    return from_object_info(nodes, files)


# --- models of real templates ----------------------------------------------------------------


def test_the_default_templates_checkpoint_is_missing_with_its_download_entry():
    result = scan_workflow(template("default"), ENV).as_json()
    assert result["format"] == "ui"
    assert result["missingNodes"] == [] and result["presentModels"] == []
    [model] = result["missingModels"]
    assert model == {
        "name": "v1-5-pruned-emaonly-fp16.safetensors",
        "directory": "checkpoints",
        "url": "https://huggingface.co/Comfy-Org/stable-diffusion-v1-5-archive/resolve/main/"
        "v1-5-pruned-emaonly-fp16.safetensors?download=true",
        "host": "huggingface.co",
        "hash": None,
        "hashType": None,
        "size": None,
        "sizeFrom": None,
        "pickle": False,
        "source": "node",
        "nodes": [{"id": 4, "type": "CheckpointLoaderSimple", "input": "ckpt_name"}],
        "downloadable": True,
        "problem": None,
    }
    assert result["sources"] == {
        "nodeMap": None,
        "installedPacks": False,
        "modelList": False,
        "modelListLegacyUiOnly": False,
        "registry": False,
        "notes": [],
    }


def test_an_installed_model_is_listed_as_present():
    env = installed_env(checkpoints=["v1-5-pruned-emaonly-fp16.safetensors"])
    result = scan_workflow(template("default"), env).as_json()
    assert result["missingModels"] == []
    assert result["presentModels"] == [
        {
            "name": "v1-5-pruned-emaonly-fp16.safetensors",
            "directory": "checkpoints",
            "nodes": [{"id": 4, "type": "CheckpointLoaderSimple", "input": "ckpt_name"}],
        }
    ]


def test_hashes_are_kept_and_the_frontends_own_nodes_are_not_missing():
    workflow = template("hidream_e1_full")
    assert {"Reroute", "Note", "MarkdownNote"} <= {n["type"] for n in workflow["nodes"]}
    result = scan_workflow(workflow, ENV).as_json()
    assert result["missingNodes"] == []
    models = by_name(result["missingModels"])
    assert len(models) == 6
    unet = models["hidream_e1_full_bf16.safetensors"]
    assert (unet["directory"], unet["hashType"]) == ("diffusion_models", "SHA256")
    assert unet["hash"] == "b645503c5d5d583a135d7e77c655237ebc6dc132d49d763759c1dd51683bd1dd"
    llama = models["llama_3.1_8b_instruct_fp8_scaled.safetensors"]
    assert llama["nodes"] == [{"id": 42, "type": "QuadrupleCLIPLoader", "input": "clip_name4"}]
    assert all(m["downloadable"] for m in models.values())


def test_models_inside_a_subgraph_are_found_and_the_subgraph_node_is_not_missing():
    result = scan_workflow(template("flux_dev_checkpoint_example"), ENV).as_json()
    assert result["missingNodes"] == []  # node 56's type is the subgraph's id
    inside = {
        "kind": "subgraph",
        "id": "e2a55522-bf16-4d9f-a222-5b8788ef2982",
        "name": "Text to Image (Flux.1 Dev)",
    }
    models = by_name(result["missingModels"])
    assert sorted(models) == [
        "ae.safetensors",
        "clip_l.safetensors",
        "flux1-dev.safetensors",
        "t5xxl_fp16.safetensors",
    ]
    assert models["t5xxl_fp16.safetensors"]["nodes"] == [
        {"id": 49, "type": "DualCLIPLoader", "input": "clip_name2", "in": inside}
    ]
    assert models["flux1-dev.safetensors"]["directory"] == "diffusion_models"


def test_a_bypassed_subgraph_or_one_no_node_uses_needs_nothing():
    workflow = template("flux_dev_checkpoint_example")
    [instance] = [n for n in workflow["nodes"] if n["id"] == 56]
    instance["mode"] = 4
    assert scan_workflow(workflow, ENV).as_json()["missingModels"] == []
    workflow["nodes"].remove(instance)
    assert scan_workflow(workflow, ENV).as_json()["missingModels"] == []


def test_a_subgraph_inside_a_running_subgraph_runs():
    workflow = copy.deepcopy(template("flux_dev_checkpoint_example"))
    [outer] = workflow["definitions"]["subgraphs"]
    inner = {**copy.deepcopy(outer), "id": "inner-id", "name": "Inner"}
    outer["nodes"] = [{"id": 90, "type": "inner-id", "mode": 0}]
    workflow["definitions"]["subgraphs"].append(inner)
    models = by_name(scan_workflow(workflow, ENV).as_json()["missingModels"])
    assert models["ae.safetensors"]["nodes"][0]["in"]["name"] == "Inner"
    outer["nodes"][0]["mode"] = 2  # muted inside the outer one: the inner one does not run
    assert scan_workflow(workflow, ENV).as_json()["missingModels"] == []


def test_a_bypassed_loader_needs_nothing():
    workflow = template("default")
    workflow["nodes"][-1]["mode"] = 4  # node 4, the checkpoint loader
    assert scan_workflow(workflow, ENV).as_json()["missingModels"] == []


def old_group_node_workflow(mode: int = 0) -> dict[str, Any]:
    """A workflow of an older frontend (v1.3): a group node "txt2img" holding a checkpoint
    loader and a sampler, whose checkpoint the user changed on the group node."""
    members = [
        {"id": -1, "index": 0, "type": "CheckpointLoaderSimple", "mode": 0,
         "widgets_values": ["v1-5-pruned-emaonly.ckpt"]},
        {"id": -1, "index": 1, "type": "KSampler", "mode": 0,
         "widgets_values": [156680208700286, "randomize", 20, 8, "euler", "normal", 1]},
        {"id": -1, "index": 2, "type": "VAEDecode", "mode": 0},
    ]  # fmt: skip
    values = ["dreamshaper_8.safetensors", 1, "fixed", 30, 7, "euler", "karras", 1]
    return {
        "last_node_id": 10,
        "nodes": [{"id": 10, "type": "workflow>txt2img", "mode": mode, "widgets_values": values}],
        "links": [],
        "extra": {"groupNodes": {"txt2img": {"nodes": members, "links": [], "external": []}}},
        "version": 0.4,
    }


def test_an_old_group_node_is_not_missing_and_its_values_are_the_groups():
    result = scan_workflow(old_group_node_workflow(), ENV).as_json()
    assert result["missingNodes"] == []
    [model] = result["missingModels"]
    assert model["name"] == "dreamshaper_8.safetensors"  # the group's value, not the member's
    assert model["nodes"] == [
        {
            "id": 0,
            "type": "CheckpointLoaderSimple",
            "input": "ckpt_name",
            "in": {"kind": "group", "id": "10", "name": "txt2img"},
        }
    ]
    assert scan_workflow(old_group_node_workflow(mode=4), ENV).as_json()["missingModels"] == []


# --- widget values ---------------------------------------------------------------------------


def test_widget_values_skip_the_control_widget_after_a_seed():
    [ksampler] = [n for n in workflow_nodes(template("default"))[1] if n.type == "KSampler"]
    assert widget_values(ENV, ksampler) == {
        "seed": 156680208700286,
        "steps": 20,
        "cfg": 8,
        "sampler_name": "euler",
        "scheduler": "normal",
        "denoise": 1,
    }


def test_a_model_combo_after_a_seed_is_read_from_the_right_value():
    # A loader that samples too (as custom "efficient" loaders do): its combo follows a seed,
    # so the saved list has the seed's control value between them.
    nodes = dict(ENV.nodes)
    nodes["SeededLoader"] = {
        "input": {
            "required": {
                "seed": ["INT", {"default": 0, "min": 0, "max": 2**64 - 1}],
                "ckpt_name": [["sd_xl_base_1.0.safetensors"]],
            }
        },
        "input_order": {"required": ["seed", "ckpt_name"]},
        "output": ["MODEL"],
        "python_module": "custom_nodes.seeded",
    }
    env = from_object_info(nodes)
    workflow = template("default")
    with_node(workflow, 20, "SeededLoader", widgets_values=[7, "fixed", "flux1-dev.safetensors"])
    [model] = [
        m
        for m in scan_workflow(workflow, env).as_json()["missingModels"]
        if m["nodes"][0]["id"] == 20
    ]
    assert model["name"] == "flux1-dev.safetensors"
    assert (model["directory"], model["downloadable"]) == ("checkpoints", False)
    assert model["problem"] == (
        "no download address: the workflow and ComfyUI-Manager's model list give none"
    )


# --- packs -----------------------------------------------------------------------------------


def manager_lookups(installed: dict[str, Any] | None = None) -> Lookups:
    mappings = fixture("manager/getmappings_cache.json")
    # A pack found by its nodename_pattern, as Manager's map has it for rgthree's nodes.
    mappings["https://github.com/rgthree/rgthree-comfy"] = [
        [],
        {"title_aux": "rgthree's ComfyUI Nodes", "nodename_pattern": " \\(rgthree\\)$"},
    ]
    return Lookups(
        node_map=NodeMap(mappings),
        installed=InstalledPacks(installed or fixture("manager/installed_with_packs.json")),
        models=parse_model_list(fixture("manager/externalmodel_getlist.json")),
    )


def test_custom_nodes_are_resolved_to_the_packs_that_provide_them():
    workflow = template("default")
    with_node(workflow, 30, "BasicPipeToDetailerPipe", title="to detailer")
    with_node(workflow, 31, "BasicPipeToDetailerPipe")
    with_node(workflow, 32, "SAMLoader")  # claimed by Impact Pack's preemptions
    with_node(workflow, 33, "Seed (rgthree)")
    with_node(workflow, 34, "NoPackHasThis")
    result = scan_workflow(workflow, ENV, manager_lookups()).as_json()
    missing = {m["type"]: m for m in result["missingNodes"]}
    assert missing["BasicPipeToDetailerPipe"] == {
        "type": "BasicPipeToDetailerPipe",
        "nodes": [
            {"id": 30, "type": "BasicPipeToDetailerPipe", "title": "to detailer"},
            {"id": 31, "type": "BasicPipeToDetailerPipe"},
        ],
        "packs": [IMPACT],
    }
    assert missing["SAMLoader"]["packs"] == [IMPACT]
    assert missing["Seed (rgthree)"]["packs"] == ["https://github.com/rgthree/rgthree-comfy"]
    assert missing["NoPackHasThis"]["provider"] == "unknown"
    assert missing["NoPackHasThis"]["note"] == f"no pack in {MANAGER_MAP} provides it"
    impact = {p["id"]: p for p in result["packs"]}[IMPACT]
    assert impact == {
        "id": IMPACT,
        "title": "ComfyUI Impact Pack",
        "author": "Dr.Lt.Data",
        "description": impact["description"],
        "repository": IMPACT,
        "registryId": None,
        "state": "not-installed",
        "note": None,
        "version": None,
        "nodeTypes": ["BasicPipeToDetailerPipe", "SAMLoader"],
        "license": None,
        "size": None,
    }
    assert impact["description"].startswith("This extension offers various detector nodes")
    assert result["sources"]["nodeMap"] == "ComfyUI-Manager's node map"


def test_a_disabled_pack_says_installed_but_disabled():
    installed = fixture("manager/installed_with_packs.json")
    # As Manager lists a disabled Registry pack (the recorded comfyui-fakedisabled@1_2_0).
    installed["comfyui-impact-pack@8_22_2"] = {
        "ver": "8.22.2",
        "cnr_id": "comfyui-impact-pack",
        "aux_id": None,
        "enabled": False,
    }
    workflow = template("default")
    with_node(workflow, 30, "AddMask")
    [pack] = scan_workflow(workflow, ENV, manager_lookups(installed)).as_json()["packs"]
    assert (pack["state"], pack["note"], pack["version"]) == (
        "disabled",
        "installed but disabled",
        "8.22.2",
    )
    assert pack["registryId"] == "comfyui-impact-pack"


def test_without_a_node_map_the_provider_is_unknown_or_the_one_the_workflow_recorded():
    workflow = template("default")
    with_node(workflow, 30, "AddMask")
    with_node(workflow, 31, "BlockifyMask", properties={"cnr_id": "comfyui-kjnodes", "ver": "1"})
    result = scan_workflow(workflow, ENV).as_json()
    missing = {m["type"]: m for m in result["missingNodes"]}
    assert missing["AddMask"]["note"] == (
        "unknown: neither ComfyUI-Manager nor the Comfy Registry is reachable"
    )
    assert missing["BlockifyMask"]["packs"] == ["comfyui-kjnodes"]
    assert [p["registryId"] for p in result["packs"]] == ["comfyui-kjnodes"]


def test_a_node_of_a_missing_type_still_needs_its_models():
    workflow = template("default")
    sam = {"name": "sam_vit_b_01ec64.pth", "directory": "sams"}
    with_node(workflow, 30, "SAMLoader", properties={"models": [sam]})
    models = by_name(scan_workflow(workflow, ENV).as_json()["missingModels"])
    assert models["sam_vit_b_01ec64.pth"]["nodes"] == [{"id": 30, "type": "SAMLoader"}]
    assert models["sam_vit_b_01ec64.pth"]["pickle"] is True


# --- entries that cannot be downloaded -------------------------------------------------------


def test_unsafe_entries_are_kept_but_not_downloadable():
    workflow = template("default")
    hf = "https://huggingface.co/x/y/resolve/main/"
    workflow["models"] = [
        {
            "name": "plain.safetensors",
            "url": "http://example.com/a.safetensors",
            "directory": "vae",
        },
        {"name": "../../evil.safetensors", "url": hf + "e.safetensors", "directory": "vae"},
        {"name": "/etc/abs.safetensors", "url": hf + "a.safetensors", "directory": "vae"},
        {"name": "odd.safetensors", "url": hf + "o.safetensors", "directory": "../custom_nodes"},
        {"name": "script.py", "url": hf + "script.py", "directory": "vae"},
        {"name": "fine.safetensors", "url": hf + "fine.safetensors", "directory": "clip"},
        {"name": "v6.safetensors", "url": "https://[::1/v6.safetensors", "directory": "vae"},
        {"url": hf + "nameless.safetensors"},  # no name: not an entry
    ]
    models = by_name(scan_workflow(workflow, ENV).as_json()["missingModels"])
    problems = {name: m["problem"] for name, m in models.items() if not m["downloadable"]}
    assert problems == {
        "plain.safetensors": "the download address is not an https URL "
        "(http://example.com/a.safetensors)",
        "../../evil.safetensors": "'../../evil.safetensors' is not a plain file name "
        "(no '..', no absolute path)",
        "/etc/abs.safetensors": "'/etc/abs.safetensors' is not a plain file name "
        "(no '..', no absolute path)",
        "odd.safetensors": "'../custom_nodes' is not one of ComfyUI's models folders",
        "script.py": "'script.py' is not a model file "
        "(.safetensors, .ckpt, .pt, .pth, .bin, .sft, .onnx, .gguf)",
        "v6.safetensors": "the download address is not an https URL (https://[::1/v6.safetensors)",
    }
    assert models["v6.safetensors"]["host"] is None
    fine = models["fine.safetensors"]
    assert (fine["directory"], fine["downloadable"], fine["source"]) == (
        "text_encoders",
        True,
        "workflow",
    )


def test_a_hash_is_only_given_with_the_address_it_belongs_to():
    workflow = template("default")  # its loader's entry names a URL and no hash
    mirror = "https://huggingface.co/mirror/resolve/main/v1-5-pruned-emaonly-fp16.safetensors"
    workflow["models"] = [
        {
            "name": "v1-5-pruned-emaonly-fp16.safetensors",
            "url": mirror,
            "directory": "checkpoints",
            "hash": "a" * 64,
            "hash_type": "SHA256",
        }
    ]
    [model] = scan_workflow(workflow, ENV).as_json()["missingModels"]
    assert model["url"].startswith("https://huggingface.co/Comfy-Org/")  # the node's own entry
    assert (model["hash"], model["source"]) == (None, "node")
    workflow["nodes"][-1]["properties"] = {}
    [model] = scan_workflow(workflow, ENV).as_json()["missingModels"]
    assert (model["url"], model["hash"], model["source"]) == (mirror, "a" * 64, "workflow")


def test_managers_model_list_gives_a_missing_file_its_address_and_size():
    workflow = template("default")
    workflow["nodes"][-1]["widgets_values"] = ["taef1_decoder.pth"]
    workflow["nodes"][-1]["properties"] = {}
    models = by_name(scan_workflow(workflow, ENV, manager_lookups()).as_json()["missingModels"])
    taef1 = models["taef1_decoder.pth"]
    assert taef1["url"] == "https://github.com/madebyollin/taesd/raw/main/taef1_decoder.pth"
    assert (taef1["size"], taef1["sizeFrom"], taef1["source"], taef1["directory"]) == (
        4_710_000,  # Manager's "4.71MB", in bytes
        "manager",
        "manager",
        "vae_approx",
    )


# --- the API format and what is not a workflow -----------------------------------------------


def test_an_api_format_prompt_is_scanned_by_input_name():
    prompt = {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "x.safetensors"}},
        "3": {
            "class_type": "KSampler",
            "inputs": {"seed": 1, "model": ["4", 0], "sampler_name": "euler"},
        },
        "9": {"class_type": "AddMask", "inputs": {}, "_meta": {"title": "mask sum"}},
    }
    result = scan_workflow(prompt, ENV, manager_lookups()).as_json()
    assert result["format"] == "api"
    [model] = result["missingModels"]
    assert (model["name"], model["directory"]) == ("x.safetensors", "checkpoints")
    assert model["nodes"] == [{"id": "4", "type": "CheckpointLoaderSimple", "input": "ckpt_name"}]
    assert result["missingNodes"] == [
        {
            "type": "AddMask",
            "nodes": [{"id": "9", "type": "AddMask", "title": "mask sum"}],
            "packs": [IMPACT],
        }
    ]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ([], "it is not a JSON object with nodes"),
        ({}, "it is not a JSON object with nodes"),
        ({"nodes": 5}, '"nodes" is not a list of nodes'),
        ({"nodes": [{"id": 1}]}, 'nodes[0] is not a node with a "type"'),
        (
            {"nodes": [], "definitions": {"subgraphs": [{"nodes": []}]}},
            '"definitions.subgraphs" is not a list of subgraphs with an "id"',
        ),
        ({"1": {"inputs": {}}}, "its entry '1' is not an API-format node"),
        (
            {"1": {"class_type": "KSampler", "inputs": [1]}},
            "\"inputs\" of node '1' is not an object",
        ),
    ],
)
def test_what_is_not_a_workflow_is_refused_with_what_is_wrong(value, why):
    with pytest.raises(RequestError) as caught:
        scan_workflow(value, ENV)
    assert caught.value.coded is not None and caught.value.coded.code == "installs.not_a_workflow"
    assert why in str(caught.value)


def test_the_scan_store_keeps_the_latest_scans():
    store = ScanStore(limit=2)
    result = scan_workflow(template("default"), ENV)
    ids = [store.add(result) for _ in range(3)]
    assert store.get(ids[0]) is None
    assert store.get(ids[2]) is result and len(set(ids)) == 3


# --- the route -------------------------------------------------------------------------------


async def post(app, body: Any) -> tuple[int, Any]:
    async with app.session.post(app.base + SCAN, json=body) as resp:
        return resp.status, await resp.json()


async def test_the_route_scans_a_workflow_and_keeps_it_by_id(assistant):
    status, answer = await post(assistant, {"workflow": template("default")})
    assert status == 200
    assert answer["scan"].startswith("scan_")
    expected = scan_workflow(template("default"), ENV).as_json()
    expected["sources"]["notes"] = [NO_COMFYUI_URL]  # standalone, no COMFYUI_URL
    assert {k: v for k, v in answer.items() if k != "scan"} == expected


async def test_the_route_scans_an_attached_workflow_file(assistant):
    data = (FIXTURES / "workflows" / "hidream_e1_full.json").read_bytes()
    body = {"thread": "t1", "name": "hidream.json", "data": base64.b64encode(data).decode()}
    async with assistant.session.post(
        assistant.base + "/api/assistant/attachments", json=body
    ) as resp:
        assert resp.status == 201
        aid = (await resp.json())["id"]
    status, answer = await post(assistant, {"attachment": aid})
    assert status == 200
    assert len(answer["missingModels"]) == 6
    text = {**body, "name": "notes.txt", "data": base64.b64encode(b"just words").decode()}
    async with assistant.session.post(
        assistant.base + "/api/assistant/attachments", json=text
    ) as resp:
        text_id = (await resp.json())["id"]
    status, answer = await post(assistant, {"attachment": text_id})
    assert (status, answer["code"]) == (422, "attachment.no_workflow")
    status, answer = await post(assistant, {"attachment": "att_nope"})
    assert (status, answer["code"]) == (404, "not_found.attachment")


async def test_the_route_refuses_bad_bodies_with_a_coded_message(assistant):
    for body in ({}, {"workflow": {}, "attachment": "a"}, [1]):
        status, answer = await post(assistant, body)
        assert (status, answer["code"]) == (400, "installs.body"), body
    status, answer = await post(assistant, {"workflow": {"nodes": [{"id": 1}]}})
    assert (status, answer["code"]) == (400, "installs.not_a_workflow")
    assert answer["params"] == {"why": 'nodes[0] is not a node with a "type"'}
    status, answer = await post(assistant, {"attachment": 5})
    assert status == 400 and "attachment" in answer["error"]


async def test_the_route_uses_the_lookups_it_is_given(provider, tmp_path):
    async def lookups() -> Lookups:
        return manager_lookups()

    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path / "data", env, install_lookups=lookups)
    try:
        workflow = template("default")
        with_node(workflow, 30, "AddMask")
        status, answer = await post(app, {"workflow": workflow})
    finally:
        await app.close()
    assert status == 200
    assert answer["missingNodes"][0]["packs"] == [IMPACT]
    assert answer["sources"]["installedPacks"] is True
