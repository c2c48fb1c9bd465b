"""The environment scan inside ComfyUI: the only module that imports ComfyUI's own modules.

They are imported inside `scan_comfyui`, never at import time: this module is loaded only when
ComfyUI runs us, and the scan runs in a worker thread (`EnvironmentService` does that).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core.files import FolderOutputs
from .core.installs import ComfyUIAddress, ModelFolders, comfyui_loopback_url
from .core.knowledge import COMFYUI_SOURCE, Environment, from_object_info

log = logging.getLogger("comfyui_assistant")

# Not model folders: the custom node packages themselves, and model config files.
SKIPPED_FOLDERS = frozenset({"custom_nodes", "configs"})

NodeInfo = Callable[[str], Any]


def scan_comfyui() -> Environment:
    """Node definitions as `/api/object_info` serves them, and every model folder's files.
    Blocking (it walks the model folders): run it in a thread."""
    import folder_paths  # type: ignore[import-not-found]  # ComfyUI's modules
    import nodes  # type: ignore[import-not-found]
    import server  # type: ignore[import-not-found]

    node_info = comfyui_node_info(server.PromptServer.instance)
    object_info: dict[str, Any] = {}
    # The same file-list cache ComfyUI's /object_info uses: loaders list their folders once.
    with getattr(folder_paths, "cache_helper", None) or contextlib.nullcontext():
        for class_name in list(nodes.NODE_CLASS_MAPPINGS):
            try:  # as JSON, as /object_info sends it: detached from ComfyUI's objects
                object_info[class_name] = json.loads(json.dumps(node_info(class_name)))
            except Exception:
                log.warning(
                    "skipping node type %r: its definition failed", class_name, exc_info=True
                )
        models: dict[str, list[str]] = {}
        for folder in sorted(folder_paths.folder_names_and_paths):
            if folder in SKIPPED_FOLDERS:
                continue
            try:
                models[folder] = list(folder_paths.get_filename_list(folder))
            except Exception:
                log.warning("skipping model folder %r: listing it failed", folder, exc_info=True)
    return from_object_info(object_info, models, source=COMFYUI_SOURCE)


def comfyui_node_info(prompt_server: Any) -> NodeInfo:
    """ComfyUI's own `node_info(class_name)`, the function behind `/object_info`.

    ComfyUI defines it inside `PromptServer.__init__` and only its route handlers see it, so
    it is taken from the `/object_info` handler's closure (a server that offers it as an
    attribute is used directly). Reusing it keeps our definitions identical to the frontend's.
    """
    direct: NodeInfo | None = getattr(prompt_server, "node_info", None)
    if callable(direct):
        return direct
    for route in getattr(prompt_server, "routes", None) or []:
        handler = getattr(route, "handler", None)
        if getattr(route, "path", None) != "/object_info" or handler is None:
            continue
        names = handler.__code__.co_freevars
        if "node_info" in names:
            found: NodeInfo = handler.__closure__[names.index("node_info")].cell_contents
            if callable(found):
                return found
    raise RuntimeError(
        "this ComfyUI's server has no node_info behind /object_info; the assistant cannot read "
        "the installed nodes. Update ComfyUI, or run the assistant standalone with an "
        "object_info.json saved from /api/object_info"
    )


def comfyui_outputs() -> FolderOutputs:
    """ComfyUI's output and temp folders, as ComfyUI itself resolves them (its --output-directory
    and --temp-directory included): where a run's files are read."""
    import folder_paths  # ComfyUI's module

    return FolderOutputs(
        {
            "output": Path(folder_paths.get_output_directory()),
            "temp": Path(folder_paths.get_temp_directory()),
        }
    )


def comfyui_model_folders() -> ModelFolders:
    """ComfyUI's models folders as `folder_paths` has them when asked (extra_model_paths.yaml and
    custom nodes included): a download goes into `get_folder_paths(name)[0]`."""
    import folder_paths  # ComfyUI's module

    def folders() -> dict[str, list[Path]]:
        return {
            name: [Path(path) for path in paths]
            for name, (paths, _extensions) in list(folder_paths.folder_names_and_paths.items())
        }

    return ModelFolders(folders)


def comfyui_address(prompt_server: Any) -> ComfyUIAddress:
    """ComfyUI's own URL, where ComfyUI-Manager's routes are, read at each call: the server sets
    `address` and `port` only when it starts listening, after custom nodes are loaded."""

    def address() -> str | None:
        host, port = getattr(prompt_server, "address", None), getattr(prompt_server, "port", None)
        if not isinstance(host, str) or not isinstance(port, int):
            return None
        args = getattr(sys.modules.get("comfy.cli_args"), "args", None)  # imported by ComfyUI
        tls = bool(getattr(args, "tls_keyfile", None) and getattr(args, "tls_certfile", None))
        return comfyui_loopback_url(host, port, tls)

    return address
