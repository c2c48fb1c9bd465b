"""scan_comfyui against small stand-ins for ComfyUI's `nodes`, `folder_paths` and `server`.

They are shaped like ComfyUI's: node classes with INPUT_TYPES/RETURN_TYPES, and a PromptServer
whose `node_info` is a local function of `__init__` that only the `/object_info` handler sees.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest
from aiohttp import web
from comfyui_assistant.comfy_environment import comfyui_node_info, scan_comfyui
from comfyui_assistant.core.knowledge.environment import COMFYUI_SOURCE, EnvironmentService

FILES = {
    "checkpoints": ["sd_xl_base_1.0.safetensors", "sub/v1-5-pruned-emaonly.safetensors"],
    "configs": ["v1-inference.yaml"],
    "loras": ["detail.safetensors"],
    "upscale_models": [],
    "custom_nodes": [],
    "broken": [],
}


def fake_folder_paths() -> types.ModuleType:
    module = types.ModuleType("folder_paths")

    class CacheHelper:
        active = False

        def __enter__(self) -> CacheHelper:
            self.active = True
            return self

        def __exit__(self, *exc: object) -> None:
            self.active = False

    module.cache_helper = CacheHelper()  # type: ignore[attr-defined]
    module.folder_names_and_paths = {  # type: ignore[attr-defined]
        name: ([f"/comfy/models/{name}"], {".safetensors"}) for name in FILES
    }
    module.listed = []  # type: ignore[attr-defined]

    def get_filename_list(folder: str) -> list[str]:
        if folder == "broken":
            raise PermissionError(f"/comfy/models/{folder}")
        module.listed.append((folder, module.cache_helper.active))  # type: ignore[attr-defined]
        return list(FILES[folder])

    module.get_filename_list = get_filename_list  # type: ignore[attr-defined]
    return module


def fake_nodes(folder_paths: Any) -> types.ModuleType:
    module = types.ModuleType("nodes")

    class CheckpointLoaderSimple:
        @classmethod
        def INPUT_TYPES(cls) -> dict[str, Any]:
            files = folder_paths.get_filename_list("checkpoints")
            return {"required": {"ckpt_name": (files, {"tooltip": "The checkpoint to load."})}}

        RETURN_TYPES = ("MODEL", "CLIP", "VAE")
        CATEGORY = "loaders"
        DESCRIPTION = "Loads a diffusion model checkpoint."

    class KSampler:
        @classmethod
        def INPUT_TYPES(cls) -> dict[str, Any]:
            return {
                "required": {
                    "model": ("MODEL",),
                    "steps": ("INT", {"default": 20, "min": 1, "max": 10000}),
                    "sampler_name": ("COMBO", {"options": ["euler", "dpmpp_2m"]}),
                }
            }

        RETURN_TYPES = ("LATENT",)
        CATEGORY = "sampling"

    class ImpactWildcardEncode:
        RELATIVE_PYTHON_MODULE = "custom_nodes.ComfyUI-Impact-Pack"

        @classmethod
        def INPUT_TYPES(cls) -> dict[str, Any]:
            return {"required": {"clip": ("CLIP",), "text": ("STRING", {"multiline": True})}}

        RETURN_TYPES = ("CONDITIONING",)
        RETURN_NAMES = ("conditioning",)
        CATEGORY = "ImpactPack/Prompt"

    class Broken:
        @classmethod
        def INPUT_TYPES(cls) -> dict[str, Any]:
            raise ValueError("a custom node bug")

    module.NODE_CLASS_MAPPINGS = {  # type: ignore[attr-defined]
        "CheckpointLoaderSimple": CheckpointLoaderSimple,
        "KSampler": KSampler,
        "ImpactWildcardEncode": ImpactWildcardEncode,
        "Broken": Broken,
    }
    module.NODE_DISPLAY_NAME_MAPPINGS = {  # type: ignore[attr-defined]
        "CheckpointLoaderSimple": "Load Checkpoint",
        "ImpactWildcardEncode": "ImpactWildcardEncode",
    }
    return module


def fake_server(nodes: Any) -> types.ModuleType:
    module = types.ModuleType("server")

    class PromptServer:
        instance: ClassVar[PromptServer]

        def __init__(self) -> None:
            PromptServer.instance = self
            self.routes = routes = web.RouteTableDef()

            def node_info(node_class: str) -> dict[str, Any]:  # as in ComfyUI's server.py
                obj_class = nodes.NODE_CLASS_MAPPINGS[node_class]
                return {
                    "input": obj_class.INPUT_TYPES(),
                    "input_order": {k: list(v) for k, v in obj_class.INPUT_TYPES().items()},
                    "output": obj_class.RETURN_TYPES,
                    "output_is_list": [False] * len(obj_class.RETURN_TYPES),
                    "output_name": getattr(obj_class, "RETURN_NAMES", obj_class.RETURN_TYPES),
                    "name": node_class,
                    "display_name": nodes.NODE_DISPLAY_NAME_MAPPINGS.get(node_class, node_class),
                    "description": getattr(obj_class, "DESCRIPTION", ""),
                    "python_module": getattr(obj_class, "RELATIVE_PYTHON_MODULE", "nodes"),
                    "category": getattr(obj_class, "CATEGORY", "sd"),
                    "output_node": False,
                }

            @routes.get("/object_info")
            async def get_object_info(request: web.Request) -> web.Response:
                return web.json_response({x: node_info(x) for x in nodes.NODE_CLASS_MAPPINGS})

    module.PromptServer = PromptServer  # type: ignore[attr-defined]
    PromptServer()
    return module


@pytest.fixture
def comfyui(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    folder_paths = fake_folder_paths()
    nodes = fake_nodes(folder_paths)
    server = fake_server(nodes)
    for module in (folder_paths, nodes, server):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return types.SimpleNamespace(folder_paths=folder_paths, nodes=nodes, server=server)


def test_scan_reads_nodes_packages_and_models(
    comfyui: types.SimpleNamespace, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="comfyui_assistant"):
        env = scan_comfyui()
    assert env.source == COMFYUI_SOURCE == "comfyui"
    assert list(env.nodes) == ["CheckpointLoaderSimple", "KSampler", "ImpactWildcardEncode"]
    assert env.packages == {
        "ComfyUI-Impact-Pack": ("ImpactWildcardEncode",),
        "core": ("CheckpointLoaderSimple", "KSampler"),
    }
    assert env.models == {
        "checkpoints": tuple(FILES["checkpoints"]),
        "loras": ("detail.safetensors",),
        "upscale_models": (),
    }
    assert env.summary_line() == "3 node types in 2 packages, 3 models"
    assert "skipping node type 'Broken'" in caplog.text
    assert "skipping model folder 'broken'" in caplog.text
    # Every listing ran inside ComfyUI's file-list cache, as its /object_info does.
    assert all(active for _, active in comfyui.folder_paths.listed)
    assert env.node_definition("CheckpointLoaderSimple") == {
        "type": "CheckpointLoaderSimple",
        "displayName": "Load Checkpoint",
        "category": "loaders",
        "description": "Loads a diffusion model checkpoint.",
        "package": "core",
        "inputs": [
            {
                "name": "ckpt_name",
                "type": "COMBO",
                "required": True,
                "kind": "combo",
                "default": "sd_xl_base_1.0.safetensors",
                "choices": FILES["checkpoints"],
                "tooltip": "The checkpoint to load.",
            }
        ],
        "outputs": [
            {"name": "MODEL", "type": "MODEL", "isList": False},
            {"name": "CLIP", "type": "CLIP", "isList": False},
            {"name": "VAE", "type": "VAE", "isList": False},
        ],
        "outputNode": False,
    }
    assert env.search_nodes("wildcard") == [
        {
            "type": "ImpactWildcardEncode",
            "displayName": "ImpactWildcardEncode",
            "category": "ImpactPack/Prompt",
            "description": "",
            "inputs": {"clip": "CLIP"},
            "outputs": [{"name": "conditioning", "type": "CONDITIONING"}],
            "package": "ComfyUI-Impact-Pack",
        }
    ]


def test_node_info_offered_as_an_attribute_is_used(comfyui: types.SimpleNamespace) -> None:
    instance = comfyui.server.PromptServer.instance
    instance.routes = web.RouteTableDef()  # nothing to find there
    instance.node_info = lambda name: {"output": ["IMAGE"], "python_module": "nodes"}
    env = scan_comfyui()
    assert {t: e["output"] for t, e in env.nodes.items()} == {
        "CheckpointLoaderSimple": ["IMAGE"],
        "KSampler": ["IMAGE"],
        "ImpactWildcardEncode": ["IMAGE"],
        "Broken": ["IMAGE"],
    }


def test_a_server_without_node_info_says_what_to_do() -> None:
    with pytest.raises(RuntimeError, match="run the assistant standalone with an object_info"):
        comfyui_node_info(types.SimpleNamespace(routes=web.RouteTableDef()))


async def test_the_service_scans_comfyui_off_the_event_loop(
    comfyui: types.SimpleNamespace, tmp_path: Path
) -> None:
    service = EnvironmentService(tmp_path, scan_comfyui, COMFYUI_SOURCE)
    env = await service.get()
    assert env.models_in(None) == {"checkpoints": 2, "loras": 1, "upscale_models": 0}
    again = await EnvironmentService(tmp_path, scan_comfyui, COMFYUI_SOURCE).get()
    assert again == env


def test_importing_the_package_imports_nothing_of_comfyui() -> None:
    code = (
        "import sys, comfyui_assistant, comfyui_assistant.core.knowledge.environment; "
        "print(sorted(m for m in ('nodes', 'folder_paths', 'server', "
        "'comfyui_assistant.comfy_environment') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
