"""Scripted plans for requests a template fits (issue 40), each two ways: from a template
(searchTemplates, loadTemplate, then the adaptation the request asks) and node by node (the
lookups, every node, link and value a capable model needs for the same graph, several calls of a
step sent together as a model may). `bench/small_windows.py` plays both through the server and
counts the tool calls and the model requests each needs.
"""

from __future__ import annotations

from typing import Any

Call = tuple[str, dict[str, Any]]


def _link(a: int, out: str, b: int, into: str) -> Call:
    return ("connectNodes", {"fromNodeId": a, "fromOutput": out, "toNodeId": b, "toInput": into})


def _add(node_type: str) -> Call:
    return ("addNode", {"nodeType": node_type})


def _set(node: int, **values: Any) -> Call:
    return ("setWidgetValues", {"nodeId": node, "values": values})


PROMPT = "a lighthouse on a cliff at dusk"

# name, request, from a template, node by node
PLANS: list[tuple[str, str, list[list[Call]], list[list[Call]]]] = [
    (
        "flux text to image",
        "Make a Flux text-to-image workflow.",
        [
            [("searchTemplates", {"query": "flux text to image"})],
            [("loadTemplate", {"name": "flux_dev_checkpoint_example"})],
            [_set(6, text=PROMPT)],
        ],
        [
            [("getSystemSkill", {"slug": "model_flux"})],
            [("getAvailableModels", {"category": "checkpoints"})],
            [("searchInstalledNodes", {"query": "flux guidance"})],
            [_add(t) for t in ("CheckpointLoaderSimple", "CLIPTextEncode", "CLIPTextEncode",
                               "FluxGuidance", "EmptySD3LatentImage", "KSampler", "VAEDecode",
                               "SaveImage")],
            [_link(1, "CLIP", 2, "clip"), _link(1, "CLIP", 3, "clip"),
             _link(2, "CONDITIONING", 4, "conditioning"), _link(1, "MODEL", 6, "model"),
             _link(4, "CONDITIONING", 6, "positive"), _link(3, "CONDITIONING", 6, "negative"),
             _link(5, "LATENT", 6, "latent_image"), _link(6, "LATENT", 7, "samples"),
             _link(1, "VAE", 7, "vae"), _link(7, "IMAGE", 8, "images")],
            [_set(1, ckpt_name="flux1-dev-fp8.safetensors"), _set(2, text=PROMPT),
             _set(4, guidance=3.5), _set(6, cfg=1, steps=20, sampler_name="euler")],
        ],
    ),
    (
        "upscale 2x",
        "Upscale an image 2x.",
        [
            [("searchTemplates", {"query": "upscale an image 2x"})],
            [("loadTemplate", {"name": "utility_seedvr2_3b_int8_upscale_image"})],
            [_set(1, image="photo.png")],
        ],
        [
            [("searchInstalledNodes", {"query": "upscale image with model"})],
            [("getAvailableModels", {"category": "upscale_models"})],
            [_add(t) for t in ("LoadImage", "UpscaleModelLoader", "ImageUpscaleWithModel",
                               "ImageScaleBy", "SaveImage")],
            [_link(2, "UPSCALE_MODEL", 3, "upscale_model"), _link(1, "IMAGE", 3, "image"),
             _link(3, "IMAGE", 4, "image"), _link(4, "IMAGE", 5, "images")],
            [_set(1, image="photo.png"), _set(2, model_name="RealESRGAN_x2.pth"),
             _set(4, scale_by=1.0)],
        ],
    ),
    (
        "SDXL with a refiner",
        "Build SDXL with a refiner.",
        [
            [("searchTemplates", {"query": "sdxl refiner"})],
            [("loadTemplate", {"name": "sdxl_refiner_prompt_example"})],
            [_set(6, text=PROMPT)],
        ],
        [
            [("getSystemSkill", {"slug": "model_sdxl"})],
            [("getAvailableModels", {"category": "checkpoints"})],
            [_add(t) for t in ("CheckpointLoaderSimple", "CheckpointLoaderSimple",
                               "CLIPTextEncode", "CLIPTextEncode", "CLIPTextEncode",
                               "CLIPTextEncode", "EmptyLatentImage", "KSamplerAdvanced",
                               "KSamplerAdvanced", "VAEDecode", "SaveImage")],
            [_link(1, "CLIP", 3, "clip"), _link(1, "CLIP", 4, "clip"),
             _link(2, "CLIP", 5, "clip"), _link(2, "CLIP", 6, "clip"),
             _link(1, "MODEL", 8, "model"), _link(3, "CONDITIONING", 8, "positive"),
             _link(4, "CONDITIONING", 8, "negative"), _link(7, "LATENT", 8, "latent_image"),
             _link(2, "MODEL", 9, "model"), _link(5, "CONDITIONING", 9, "positive"),
             _link(6, "CONDITIONING", 9, "negative"), _link(8, "LATENT", 9, "latent_image"),
             _link(9, "LATENT", 10, "samples"), _link(2, "VAE", 10, "vae"),
             _link(10, "IMAGE", 11, "images")],
            [_set(1, ckpt_name="sd_xl_base_1.0.safetensors"),
             _set(2, ckpt_name="sd_xl_refiner_1.0.safetensors"), _set(3, text=PROMPT),
             _set(5, text=PROMPT), _set(7, width=1024, height=1024),
             _set(8, steps=25, end_at_step=20, return_with_leftover_noise="enable"),
             _set(9, steps=25, start_at_step=20, add_noise="disable")],
        ],
    ),
]  # fmt: skip


def loaded_template(args: dict[str, Any]) -> dict[str, Any]:
    """What the panel's loadTemplate answers (ui/src/tools/loadTemplate.ts), for the bench."""
    return {
        "ok": True,
        "template": args["name"],
        "tab": args["name"],
        "note": "ComfyUI opened it in a new tab; this chat moved to the new tab.",
        "nodeCount": 9,
        "scan": "scan-1",
        "missing": [],
        "next": "Nothing is missing: it can run as it is.",
    }


def n_calls(steps: list[list[Call]]) -> int:
    return sum(len(step) for step in steps)
