from __future__ import annotations

import asyncio
import gzip
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.knowledge import environment
from comfyui_assistant.core.knowledge.environment import (
    DEFAULT_OBJECT_INFO,
    Environment,
    EnvironmentService,
    UnknownModelCategory,
    from_cache,
    from_object_info,
    load_object_info_file,
    package_of,
    to_cache,
)

ENV = load_object_info_file()
KSAMPLER_INFO = ENV.nodes["KSampler"]
SAMPLERS = ["euler", "euler_cfg_pp", "euler_ancestral", "euler_ancestral_cfg_pp", "heun"]
SAMPLERS += ["heunpp2", "dpm_2", "dpm_2_ancestral", "lms", "dpm_fast", "dpm_adaptive"]
SAMPLERS += ["dpmpp_2s_ancestral", "dpmpp_2s_ancestral_cfg_pp", "dpmpp_sde", "dpmpp_sde_gpu"]
SAMPLERS += ["dpmpp_2m", "dpmpp_2m_cfg_pp", "dpmpp_2m_sde", "dpmpp_2m_sde_gpu"]
SAMPLERS += ["dpmpp_2m_sde_heun", "dpmpp_2m_sde_heun_gpu", "dpmpp_3m_sde", "dpmpp_3m_sde_gpu"]
SAMPLERS += ["ddpm", "lcm", "ipndm", "ipndm_v", "deis", "res_multistep", "res_multistep_cfg_pp"]
SAMPLERS += ["res_multistep_ancestral", "res_multistep_ancestral_cfg_pp", "gradient_estimation"]
SAMPLERS += ["gradient_estimation_cfg_pp", "er_sde", "seeds_2", "seeds_3", "sa_solver"]
SAMPLERS += ["sa_solver_pece", "ddim", "uni_pc", "uni_pc_bh2"]
SCHEDULERS = ["simple", "sgm_uniform", "karras", "exponential", "ddim_uniform", "beta"]
SCHEDULERS += ["normal", "linear_quadratic", "kl_optimal"]
MODELS = {
    "checkpoints": ["sd_xl_base_1.0.safetensors", "v1-5-pruned-emaonly.safetensors"],
    "loras": ["detail.safetensors"],
    "text_encoders": ["clip_l.safetensors", "t5xxl_fp16.safetensors"],
    "upscale_models": [],
}


def node(python_module: str = "nodes", **fields: Any) -> dict[str, Any]:
    """A small object_info entry."""
    return {"input": {}, "output": [], "python_module": python_module, "category": "", **fields}


# --- the index -------------------------------------------------------------------------------


def test_the_bundled_object_info_is_the_fixture_in_compact_reproducible_gzip() -> None:
    raw = DEFAULT_OBJECT_INFO.read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip mtime 0: rebuilding it gives the same bytes
    text = gzip.decompress(raw)
    assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False).encode()
    assert ENV.source == f"object_info:{DEFAULT_OBJECT_INFO}"


def test_summary_line_and_packages() -> None:
    assert ENV.summary_line() == "478 node types in 2 packages, 0 models"
    assert {k: len(v) for k, v in ENV.packages.items()} == {"core": 477, "websocket_image_save": 1}
    small = from_object_info({"A": node("custom_nodes.Pack")}, {"loras": ["x.safetensors"]})
    assert small.summary_line() == "1 node type in 1 package, 1 model"
    assert small.summary() == {
        "summary": "1 node type in 1 package, 1 model",
        "source": "object_info",
        "scannedAt": small.scanned_at,
        "nodeTypes": 1,
        "packages": {"Pack": 1},
        "models": {"loras": 1},
    }


@pytest.mark.parametrize(
    ("module", "package"),
    [
        ("nodes", "core"),
        ("comfy_extras.nodes_upscale_model", "core"),
        ("comfy_api_nodes.nodes_openai", "core"),
        ("custom_nodes.ComfyUI-Impact-Pack", "ComfyUI-Impact-Pack"),
        ("custom_nodes.ComfyUI-Impact-Pack.modules.impact", "ComfyUI-Impact-Pack"),
        ("custom_nodes.comfyui-kjnodes@1.1.2", "comfyui-kjnodes"),
        ("somewhere_else", "unknown"),
    ],
)
def test_package_of(module: str, package: str) -> None:
    assert package_of(module) == package


def test_node_definition_ksampler() -> None:
    assert ENV.node_definition("KSampler") == {
        "type": "KSampler",
        "displayName": "KSampler",
        "category": "sampling",
        "description": "Uses the provided model, positive and negative conditioning to denoise "
        "the latent image.",
        "package": "core",
        "inputs": [
            {
                "name": "model",
                "type": "MODEL",
                "required": True,
                "tooltip": "The model used for denoising the input latent.",
            },
            {
                "name": "seed",
                "type": "INT",
                "required": True,
                "kind": "int",
                "default": 0,
                "min": 0,
                "max": 18446744073709551615,
                "controlAfterGenerate": True,
                "tooltip": "The random seed used for creating the noise.",
            },
            {
                "name": "steps",
                "type": "INT",
                "required": True,
                "kind": "int",
                "default": 20,
                "min": 1,
                "max": 10000,
                "tooltip": "The number of steps used in the denoising process.",
            },
            {
                "name": "cfg",
                "type": "FLOAT",
                "required": True,
                "kind": "float",
                "default": 8.0,
                "min": 0.0,
                "max": 100.0,
                "step": 0.1,
                "tooltip": KSAMPLER_INFO["input"]["required"]["cfg"][1]["tooltip"],
            },
            {
                "name": "sampler_name",
                "type": "COMBO",
                "required": True,
                "kind": "combo",
                "default": "euler",
                "choices": SAMPLERS,
                "tooltip": "The algorithm used when "
                "sampling, this can affect the quality, speed, and style of the generated output.",
            },
            {
                "name": "scheduler",
                "type": "COMBO",
                "required": True,
                "kind": "combo",
                "default": "simple",
                "choices": SCHEDULERS,
                "tooltip": "The scheduler controls how "
                "noise is gradually removed to form the image.",
            },
            {
                "name": "positive",
                "type": "CONDITIONING",
                "required": True,
                "tooltip": "The "
                "conditioning describing the attributes you want to include in the image.",
            },
            {
                "name": "negative",
                "type": "CONDITIONING",
                "required": True,
                "tooltip": "The "
                "conditioning describing the attributes you want to exclude from the image.",
            },
            {
                "name": "latent_image",
                "type": "LATENT",
                "required": True,
                "tooltip": "The latent image to denoise.",
            },
            {
                "name": "denoise",
                "type": "FLOAT",
                "required": True,
                "kind": "float",
                "default": 1.0,
                "min": 0.0,
                "max": 1.0,
                "step": 0.01,
                "tooltip": KSAMPLER_INFO["input"]["required"]["denoise"][1]["tooltip"],
            },
        ],
        "outputs": [
            {"name": "LATENT", "type": "LATENT", "isList": False, "tooltip": "The denoised latent."}
        ],
        "outputNode": False,
    }


def test_node_definition_input_shapes() -> None:
    """New-style combos, forced sockets, multiline strings, optional inputs, flags."""
    seed_behavior = ENV.node_definition("LatentBatchSeedBehavior")
    assert seed_behavior is not None
    assert seed_behavior["inputs"] == [
        {"name": "samples", "type": "LATENT", "required": True},
        {
            "name": "seed_behavior",
            "type": "COMBO",
            "required": True,
            "kind": "combo",
            "default": "fixed",
            "choices": ["random", "fixed"],
        },
    ]
    save_lora = ENV.node_definition("SaveLoRANode")
    assert save_lora is not None
    assert [(i["name"], i["type"], i["required"], i.get("kind")) for i in save_lora["inputs"]] == [
        ("lora", "LORA_MODEL", True, None),
        ("prefix", "STRING", True, "string"),
        ("steps", "INT", False, None),  # forceInput: a socket, not a widget
    ]
    assert (save_lora["outputNode"], save_lora["experimental"]) == (True, True)
    text = ENV.node_definition("CLIPTextEncode")
    assert text is not None and text["inputs"][0] == {
        "name": "text",
        "type": "STRING",
        "required": True,
        "kind": "string",
        "multiline": True,
        "tooltip": "The text to be encoded.",
    }
    assert ENV.node_definition("CheckpointLoader")["deprecated"] is True  # type: ignore[index]


def test_long_combos_are_cut_and_hidden_inputs_left_out() -> None:
    files = [f"model_{i:03}.safetensors" for i in range(75)]
    env = from_object_info(
        {
            "Loader": node(
                input={
                    "required": {"name": [files, {}], "mode": ["COMBO", {"options": ["a", "b"]}]},
                    "hidden": {"unique_id": "UNIQUE_ID"},
                },
                output=["MODEL"],
            )
        }
    )
    definition = env.node_definition("Loader")
    assert definition is not None
    assert definition["inputs"] == [
        {
            "name": "name",
            "type": "COMBO",
            "required": True,
            "kind": "combo",
            "default": files[0],
            "choices": files[:60],
            "choicesTotal": 75,
        },
        {
            "name": "mode",
            "type": "COMBO",
            "required": True,
            "kind": "combo",
            "default": "a",
            "choices": ["a", "b"],
        },
    ]
    assert definition["outputs"] == [{"name": "MODEL", "type": "MODEL", "isList": False}]


def test_unknown_node_types_and_did_you_mean() -> None:
    assert ENV.node_definition("NoSuchNode") is None
    assert ENV.node_definition("ksampler")["type"] == "KSampler"  # type: ignore[index]
    assert ENV.closest_node_types("KSamplr")[0] == "KSampler"
    assert ENV.closest_node_types("Load Checkpoints", n=1) == ["CheckpointLoaderSimple"]
    assert ENV.closest_node_types("zzzzzzzz") == []


# --- search ----------------------------------------------------------------------------------


def first(query: str, n: int) -> list[str]:
    return [hit["type"] for hit in ENV.search_nodes(query, limit=n)]


def test_search_exact_name_first_with_a_compact_hit() -> None:
    assert ENV.search_nodes("KSampler", limit=1) == [
        {
            "type": "KSampler",
            "displayName": "KSampler",
            "category": "sampling",
            "description": "Uses the provided model, positive and negative conditioning to "
            "denoise the latent image.",
            "inputs": {
                "model": "MODEL",
                "positive": "CONDITIONING",
                "negative": "CONDITIONING",
                "latent_image": "LATENT",
            },
            "outputs": [{"name": "LATENT", "type": "LATENT"}],
            "package": "core",
        }
    ]
    assert (
        first("ksampler", 3)
        == first("KSampler", 3)
        == [
            "KSampler",
            "KSamplerAdvanced",
            "KSamplerSelect",
        ]
    )


def test_search_ranks_relevant_nodes_first() -> None:
    upscalers = {"ImageScale", "ImageScaleBy", "ImageUpscaleWithModel", "UpscaleModelLoader"}
    upscalers |= {"LatentUpscale", "LatentUpscaleBy", "SD_4XUpscale_Conditioning"}
    assert set(first("upscale", 6)) <= upscalers
    assert first("upscale image", 2) == ["ImageScale", "ImageUpscaleWithModel"]
    assert first("load checkpoint", 3) == [
        "CheckpointLoaderSimple",
        "ImageOnlyCheckpointLoader",
        "unCLIPCheckpointLoader",
    ]
    assert first("save image", 1) == ["SaveImage"]
    for hit in ENV.search_nodes("LATENT", limit=10):
        types = set(hit["inputs"].values()) | {o["type"] for o in hit["outputs"]}
        assert "LATENT" in types, hit


def test_search_multi_word_scores_by_words_matched() -> None:
    hits = ENV.search_nodes("mask to image", limit=40)
    assert hits[0]["type"] == "MaskToImage"
    # The nodes matching both words come before those matching one.
    both = [h for h in hits if "mask" in str(h).lower() and "image" in str(h).lower()]
    assert hits[: len(both)] == both


def test_search_long_descriptions_are_trimmed_and_limits_kept() -> None:
    hits = ENV.search_nodes("image", limit=150)
    assert len(hits) == 150
    assert all(len(h["description"]) <= 161 for h in hits)
    assert any(h["description"].endswith("…") for h in hits)
    assert ENV.search_nodes("  ") == []
    assert ENV.search_nodes("qqqqzzzz") == []


def test_search_deprecated_nodes_rank_lower() -> None:
    hits = first("load checkpoint", 10)
    assert hits.index("CheckpointLoader") > hits.index("unCLIPCheckpointLoader")
    assert ENV.search_nodes("Load Checkpoint With Config")[0]["deprecated"] is True


# --- models ----------------------------------------------------------------------------------


def test_models_by_category() -> None:
    env = from_object_info({}, MODELS)
    assert env.models_in(None) == {
        "checkpoints": 2,
        "loras": 1,
        "text_encoders": 2,
        "upscale_models": 0,
    }
    assert env.models_in("checkpoints") == {
        "category": "checkpoints",
        "models": MODELS["checkpoints"],
    }
    assert env.models_in("clip") == {"category": "text_encoders", "models": MODELS["text_encoders"]}
    assert env.summary_line() == "0 node types in 0 packages, 5 models"


def test_unknown_model_category_lists_the_known_ones() -> None:
    env = from_object_info({}, MODELS)
    with pytest.raises(UnknownModelCategory) as caught:
        env.models_in("lora")
    assert isinstance(caught.value, KeyError)
    assert caught.value.categories == ["checkpoints", "loras", "text_encoders", "upscale_models"]
    assert "use one of: checkpoints, loras, text_encoders, upscale_models" in str(caught.value)
    assert env.model_categories() == caught.value.categories


# --- documentation ---------------------------------------------------------------------------


@pytest.fixture
def embedded_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the comfyui-embedded-docs package: docs/<NodeType>/<locale>.md."""
    docs = tmp_path / "site" / "comfyui_embedded_docs" / "docs"
    (docs / "KSampler").mkdir(parents=True)
    (docs.parent / "__init__.py").write_text("")
    (docs / "KSampler" / "en.md").write_text("# KSampler\n\nDenoises a latent.\n")
    (docs / "KSampler" / "zh.md").write_text("# KSampler\n\n采样器\n")
    (docs / "VAEDecode").mkdir()
    (docs / "VAEDecode" / "zh.md").write_text("# VAE 解码\n")
    (docs / "CLIPTextEncode").mkdir()
    (docs / "CLIPTextEncode" / "en.md").write_text("A line of text.\n" * 500)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return docs


def test_documentation_from_embedded_docs(embedded_docs: Path) -> None:
    assert environment.embedded_docs_dir() == embedded_docs
    assert ENV.documentation("KSampler") == {
        "type": "KSampler",
        "source": "embedded-docs",
        "text": "# KSampler\n\nDenoises a latent.\n",
    }
    assert ENV.documentation("VAEDecode")["text"] == "# VAE 解码\n"  # type: ignore[index]
    long = ENV.documentation("CLIPTextEncode")
    assert long is not None and len(long["text"]) < 6100
    assert long["text"].endswith("[Cut: the first 5999 of 8000 characters.]")
    # No page: the description.
    assert ENV.documentation("OpenAIDalle2") == {
        "type": "OpenAIDalle2",
        "source": "description",
        "text": "Generates images synchronously via OpenAI's DALL·E 2 endpoint.",
    }
    assert ENV.documentation("../KSampler") is None


def test_documentation_falls_back_to_the_description(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "embedded_docs_dir", lambda: None)
    assert ENV.documentation("KSampler") == {
        "type": "KSampler",
        "source": "description",
        "text": KSAMPLER_INFO["description"],
    }
    assert ENV.documentation("UpscaleModelLoader") == {
        "type": "UpscaleModelLoader",
        "source": "description",
        "text": "Load Upscale Model has no documentation and no description.",
    }
    assert ENV.documentation("NoSuchNode") is None


# --- loading and the cache -------------------------------------------------------------------


def test_load_plain_json_and_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "object_info.json"
    path.write_text(json.dumps({"KSampler": KSAMPLER_INFO}))
    env = load_object_info_file(path)
    assert (list(env.nodes), env.source) == (["KSampler"], f"object_info:{path}")
    path.write_text("<html>")
    with pytest.raises(ValueError, match=r"is not JSON .*save ComfyUI's /api/object_info"):
        load_object_info_file(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="must be a JSON object of node types"):
        load_object_info_file(path)
    with pytest.raises(ValueError, match=r"object_info\['X'\] is not a node definition"):
        from_object_info({"X": [1]})


def test_cache_round_trip() -> None:
    env = from_object_info(dict(ENV.nodes), MODELS, source="comfyui", scanned_at=1234.5)
    again = from_cache(to_cache(env))
    assert again == env
    assert again.node_definition("KSampler") == ENV.node_definition("KSampler")
    with pytest.raises(ValueError, match="another version"):
        from_cache(json.dumps({"version": 0}).encode())


# --- the service -----------------------------------------------------------------------------

SMALL = {"KSampler": KSAMPLER_INFO}


class CountingScanner:
    def __init__(self, gate: threading.Event | None = None) -> None:
        self.calls = 0
        self.threads: list[int] = []
        self.gate = gate

    def __call__(self) -> Environment:
        self.calls += 1
        self.threads.append(threading.get_ident())
        if self.gate is not None:
            assert self.gate.wait(5), "the event loop stalled while the scan ran"
        return from_object_info(SMALL, MODELS, source="comfyui")


async def test_concurrent_gets_share_one_scan_in_a_thread(tmp_path: Path) -> None:
    gate = threading.Event()
    scanner = CountingScanner(gate)
    service = EnvironmentService(tmp_path, scanner, "comfyui")
    both = asyncio.gather(service.get(), service.get())
    await asyncio.sleep(0.05)
    gate.set()  # only possible because the loop runs while the scanner waits
    first_env, second_env = await both
    assert first_env is second_env
    assert scanner.calls == 1
    assert scanner.threads != [threading.get_ident()]
    assert await service.get() is first_env and scanner.calls == 1
    assert from_cache((tmp_path / "environment.json").read_bytes()) == first_env


async def test_a_new_service_reads_the_cache_and_rescan_scans(tmp_path: Path) -> None:
    first_env = await EnvironmentService(tmp_path, CountingScanner(), "comfyui").get()
    scanner = CountingScanner()
    service = EnvironmentService(tmp_path, scanner, "comfyui")
    assert await service.get() == first_env
    assert scanner.calls == 0
    fresh = await service.rescan()
    assert scanner.calls == 1 and fresh.scanned_at >= first_env.scanned_at
    assert await service.get() is fresh
    assert from_cache((tmp_path / "environment.json").read_bytes()) == fresh
    rescans = await asyncio.gather(service.rescan(), service.rescan())
    assert rescans[0] is rescans[1] and scanner.calls == 2


async def test_a_cache_from_another_source_or_broken_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await EnvironmentService.standalone(tmp_path).get()
    scanner = CountingScanner()
    assert (await EnvironmentService(tmp_path, scanner, "comfyui").get()).source == "comfyui"
    assert scanner.calls == 1
    (tmp_path / "environment.json").write_text("{broken")
    with caplog.at_level(logging.WARNING, logger="comfyui_assistant"):
        await EnvironmentService(tmp_path, scanner, "comfyui").get()
    assert scanner.calls == 2 and "ignoring the environment cache" in caplog.text
    assert from_cache((tmp_path / "environment.json").read_bytes()).source == "comfyui"


async def test_scan_errors_reach_every_caller_and_the_next_call_retries(tmp_path: Path) -> None:
    calls = 0

    def failing() -> Environment:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("disk gone")
        return from_object_info(SMALL, source="comfyui")

    service = EnvironmentService(tmp_path, failing, "comfyui")
    results = await asyncio.gather(service.get(), service.get(), return_exceptions=True)
    assert [str(r) for r in results] == ["disk gone", "disk gone"]
    assert list((await service.get()).nodes) == ["KSampler"] and calls == 2


async def test_a_cancelled_caller_does_not_cancel_the_scan(tmp_path: Path) -> None:
    gate = threading.Event()
    scanner = CountingScanner(gate)
    service = EnvironmentService(tmp_path, scanner, "comfyui")
    waiting = asyncio.ensure_future(service.get())
    await asyncio.sleep(0.05)
    waiting.cancel()
    follower = asyncio.ensure_future(service.get())
    gate.set()
    assert list((await follower).nodes) == ["KSampler"] and scanner.calls == 1


async def test_an_unwritable_cache_still_serves_from_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "file"
    data_dir.write_text("not a directory")
    service = EnvironmentService(data_dir, CountingScanner(), "comfyui")
    with caplog.at_level(logging.WARNING, logger="comfyui_assistant"):
        env = await service.get()
    assert list(env.nodes) == ["KSampler"]
    assert "could not write the environment cache" in caplog.text
