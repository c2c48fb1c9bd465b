"""Model files a workflow names: the download entries it carries (a node's `properties.models`,
the workflow's top-level `models`), ComfyUI-Manager's model list, and whether an entry can be
downloaded safely (an https URL, a plain file name, a known models folder, a model file type).
An entry that cannot is kept, with the reason, so the user sees it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

# As ComfyUI's frontend counts a value as a model file (missingModelScan).
MODEL_EXTENSIONS = (".safetensors", ".ckpt", ".pt", ".pth", ".bin", ".sft", ".onnx", ".gguf")
# ComfyUI's own model folders (folder_paths); a ComfyUI with custom nodes may list more.
COMFYUI_FOLDERS = frozenset(
    {
        "checkpoints", "loras", "vae", "text_encoders", "diffusion_models", "clip_vision",
        "style_models", "embeddings", "diffusers", "vae_approx", "controlnet", "gligen",
        "upscale_models", "hypernetworks", "photomaker", "classifiers", "model_patches",
        "audio_encoders",
    }
)  # fmt: skip
FOLDER_ALIASES = {"clip": "text_encoders", "unet": "diffusion_models", "t2i_adapter": "controlnet"}
# Manager's model list says `save_path: "default"` and leaves the folder to the type.
MANAGER_TYPES = {
    "checkpoint": "checkpoints", "checkpoints": "checkpoints", "unclip": "checkpoints",
    "lora": "loras", "vae": "vae", "clip": "text_encoders", "text_encoders": "text_encoders",
    "unet": "diffusion_models", "diffusion_model": "diffusion_models",
    "clip_vision": "clip_vision", "controlnet": "controlnet", "t2i-adapter": "controlnet",
    "t2i-style": "style_models", "gligen": "gligen", "upscale": "upscale_models",
    "embeddings": "embeddings", "taesd": "vae_approx",
}  # fmt: skip
SHA256 = re.compile(r"[0-9a-fA-F]{64}")
MANAGER_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?", re.IGNORECASE)


def is_model_file(name: str) -> bool:
    return name.lower().endswith(MODEL_EXTENSIONS)


def folder_name(directory: str | None) -> str | None:
    """The folder as ComfyUI names it now ("clip" is "text_encoders")."""
    if not directory:
        return None
    return FOLDER_ALIASES.get(directory, directory)


@dataclass(frozen=True)
class ModelEntry:
    """A download entry: `{name, url?, directory?, hash?, hash_type?}`, as the frontend's
    schema has it; `size` in bytes, only from Manager's list (which rounds it: "1.99GB")."""

    name: str
    url: str | None
    directory: str | None
    hash: str | None
    size: int | None
    source: str  # "node" (properties.models), "workflow" (top-level models), "manager"

    @classmethod
    def parse(cls, raw: Any, source: str) -> ModelEntry | None:
        if not isinstance(raw, Mapping) or not _text(raw.get("name")):
            return None
        digest = _text(raw.get("hash"))
        sha = _text(raw.get("hash_type")).lower() in ("sha256", "") and SHA256.fullmatch(digest)
        return cls(
            _text(raw.get("name")),
            _text(raw.get("url")) or None,
            folder_name(_text(raw.get("directory"))),
            digest.lower() if sha else None,
            None,
            source,
        )


def entries(raws: Iterable[Any], source: str) -> list[ModelEntry]:
    return [e for e in (ModelEntry.parse(raw, source) for raw in raws) if e is not None]


def parse_model_list(body: Any) -> dict[str, ModelEntry] | None:
    """Manager's model list (`externalmodel/getlist`: `{"models": [...]}`) by file name; the
    first entry of a name wins, as in Manager's own list order. None: not that shape at all."""
    items = body.get("models") if isinstance(body, Mapping) else None
    if not isinstance(items, list):
        return None
    found: dict[str, ModelEntry] = {}
    for item in items:
        if not isinstance(item, Mapping) or not _text(item.get("filename")):
            continue
        save_path = _text(item.get("save_path"))
        if save_path in ("", "default"):
            directory = MANAGER_TYPES.get(_text(item.get("type")).lower())
        else:
            directory = folder_name(save_path)
        found.setdefault(
            _text(item.get("filename")),
            ModelEntry(
                _text(item.get("filename")),
                _text(item.get("url")) or None,
                directory,
                None,
                manager_bytes(_text(item.get("size"))),
                "manager",
            ),
        )
    return found


def manager_bytes(text: str) -> int | None:
    """Manager's "4.71MB", "1.99GB" in bytes (decimal units, as Hugging Face shows sizes)."""
    found = MANAGER_SIZE.fullmatch(text.strip())
    if found is None:
        return None
    scale: int = 1000 ** "BKMGT".index((found[2] or "B")[0].upper())
    return round(float(found[1]) * scale)


def download_problem(
    name: str,
    url: str | None,
    directory: str | None,
    folders: Iterable[str],
    trusted: Callable[[str], bool] = lambda url: False,
) -> str | None:
    """Why this file cannot be downloaded as it is described; None when it can. `trusted`:
    an address of an origin the downloader was given besides https (a mirror, the tests)."""
    if url is None:
        return "no download address: the workflow and ComfyUI-Manager's model list give none"
    if not (url.startswith("https://") or trusted(url)) or url_host(url) is None:
        return f"the download address is not an https URL ({url[:80]})"
    if not plain_name(name):
        return f"{name!r} is not a plain file name (no '..', no absolute path)"
    if not is_model_file(name):
        return f"{name!r} is not a model file ({', '.join(MODEL_EXTENSIONS)})"
    if directory is None:
        return "the models folder it belongs in is not known"
    if directory not in folders:
        return f"{directory!r} is not one of ComfyUI's models folders"
    return None


def plain_name(name: str) -> bool:
    """A file name, or a sub-folder path under a models folder, that stays inside it."""
    if not name or "\\" in name or "\0" in name or name.startswith("/") or ":" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def url_host(url: str | None) -> str | None:
    """The host of a URL; None for none, or for text that is not a URL ("https://[::1")."""
    try:
        return urlsplit(url).hostname if url else None
    except ValueError:
        return None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
