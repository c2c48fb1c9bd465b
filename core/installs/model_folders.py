"""Where a model of each ComfyUI models folder ("checkpoints", "loras", …) is written and looked
for. Inside ComfyUI the folders are `folder_paths`' (read at each use: extra_model_paths.yaml and
custom nodes add folders after we are imported; `comfy_environment.comfyui_model_folders`);
standalone they are `<data dir>/models/<folder>`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# ComfyUI's default folders (folder_paths.py, 0.3.x), less the ones that hold no model files.
STANDALONE_FOLDERS = (
    "checkpoints",
    "loras",
    "vae",
    "text_encoders",
    "diffusion_models",
    "clip_vision",
    "style_models",
    "embeddings",
    "vae_approx",
    "controlnet",
    "gligen",
    "upscale_models",
    "hypernetworks",
    "photomaker",
    "model_patches",
    "audio_encoders",
)
# Not model folders: the custom node packages themselves, model config files, diffusers folders.
NOT_MODELS = frozenset({"custom_nodes", "configs", "diffusers"})
# Names ComfyUI renamed; folder_paths still answers to the old ones (its map_legacy).
LEGACY = {"clip": "text_encoders", "unet": "diffusion_models"}

Lister = Callable[[], Mapping[str, Sequence[Path]]]


class ModelFolders:
    """Each models folder's directories; a download goes into the first, as ComfyUI's
    `folder_paths.get_folder_paths(name)[0]`, and a file in any of them is already there."""

    def __init__(self, lister: Lister) -> None:
        self._lister = lister

    @classmethod
    def standalone(cls, data_dir: Path) -> ModelFolders:
        models = data_dir / "models"
        return cls(lambda: {name: [models / name] for name in STANDALONE_FOLDERS})

    def names(self) -> list[str]:
        return sorted(name for name in self._lister() if name not in NOT_MODELS)

    def canonical(self, folder: str) -> str | None:
        """The folder's current name, or None when ComfyUI has no such models folder."""
        name = LEGACY.get(folder, folder)
        return name if name in self.names() else None

    def directories(self, folder: str) -> list[Path]:
        return [Path(path) for path in self._lister().get(folder, ())]

    def existing(self, folder: str, name: str) -> Path | None:
        """The file `name` (relative, with `/`) in any of the folder's directories."""
        for directory in self.directories(folder):
            path = directory.joinpath(*name.split("/"))
            if path.is_file():
                return path
        return None
