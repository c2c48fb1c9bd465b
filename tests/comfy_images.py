"""Images saved the way ComfyUI saves them (comfy_api/latest/_ui.py, with Pillow as ComfyUI
does): a PNG with `prompt` and `workflow` text chunks, a WebP with `prompt:` (EXIF Model) and
`workflow:` (EXIF Make) strings, and plain images without any."""

from __future__ import annotations

import io
import json
from typing import Any

from PIL import Image
from PIL.PngImagePlugin import PngInfo

PROMPT: dict[str, Any] = {
    "3": {
        "class_type": "KSampler",
        "inputs": {
            "seed": 156680208700286,
            "steps": 20,
            "cfg": 8,
            "sampler_name": "euler",
            "scheduler": "normal",
            "denoise": 1,
            "model": ["4", 0],
            "positive": ["6", 0],
            "negative": ["7", 0],
            "latent_image": ["5", 0],
        },
    },
    "4": {
        "class_type": "CheckpointLoaderSimple",
        "inputs": {"ckpt_name": "v1-5-pruned-emaonly.safetensors"},
    },
    "5": {
        "class_type": "EmptyLatentImage",
        "inputs": {"width": 512, "height": 512, "batch_size": 1},
    },
    "6": {
        "class_type": "CLIPTextEncode",
        "inputs": {"text": "a lighthouse at dusk, oil painting", "clip": ["4", 1]},
    },
    "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "blurry", "clip": ["4", 1]}},
    "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
    "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "ComfyUI", "images": ["8", 0]}},
}

WORKFLOW: dict[str, Any] = {
    "last_node_id": 9,
    "last_link_id": 1,
    "nodes": [
        {
            "id": 6,
            "type": "CLIPTextEncode",
            "pos": [415, 186],
            "size": [422, 164],
            "inputs": [{"name": "clip", "type": "CLIP", "link": 1}],
            "outputs": [{"name": "CONDITIONING", "type": "CONDITIONING", "links": []}],
            "widgets_values": ["a lighthouse at dusk, oil painting"],
        },
        {
            "id": 4,
            "type": "CheckpointLoaderSimple",
            "pos": [26, 474],
            "size": [315, 98],
            "inputs": [],
            "outputs": [{"name": "CLIP", "type": "CLIP", "links": [1]}],
            "widgets_values": ["v1-5-pruned-emaonly.safetensors"],
        },
    ],
    "links": [[1, 4, 1, 6, 0, "CLIP"]],
    "groups": [],
    "config": {},
    "extra": {},
    "version": 0.4,
}


def picture(size: tuple[int, int] = (64, 48)) -> Image.Image:
    image = Image.new("RGB", size)
    for x in range(size[0]):  # some content, so the encoders have something to compress
        image.putpixel((x, x % size[1]), (x * 4 % 256, 90, 200))
    return image


def comfy_png(
    prompt: Any = PROMPT, workflow: Any = WORKFLOW, size: tuple[int, int] = (64, 48)
) -> bytes:
    """SaveImage: PngInfo text chunks, `json.dumps` of each value, compress level 4."""
    metadata = PngInfo()
    if prompt is not None:
        metadata.add_text("prompt", prompt if isinstance(prompt, str) else json.dumps(prompt))
    if workflow is not None:
        metadata.add_text("workflow", json.dumps(workflow))
    out = io.BytesIO()
    picture(size).save(out, format="PNG", pnginfo=metadata, compress_level=4)
    return out.getvalue()


def comfy_webp(prompt: Any = PROMPT, workflow: Any = WORKFLOW) -> bytes:
    """SaveAnimatedWEBP / the WebP saver: EXIF Model "prompt:{...}", Make "workflow:{...}"."""
    image = picture()
    exif = image.getexif()
    exif[0x0110] = f"prompt:{json.dumps(prompt)}"
    exif[0x010F] = f"workflow:{json.dumps(workflow)}"
    out = io.BytesIO()
    image.save(out, format="WEBP", exif=exif, lossless=False, quality=80)
    return out.getvalue()


def plain(fmt: str, size: tuple[int, int] = (64, 48)) -> bytes:
    out = io.BytesIO()
    picture(size).save(out, format=fmt)
    return out.getvalue()
