"""ComfyUI Assistant: the ComfyUI adapter, and nothing else.

ComfyUI imports this folder as a custom node. It serves `WEB_DIRECTORY` (the built panel) and,
when ComfyUI's server is running, we add our routes to its route table. Imported anywhere else
(pip, pytest, the standalone server) this module does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

WEB_DIRECTORY = "./ui/dist"
NODE_CLASS_MAPPINGS: dict[str, Any] = {}
NODE_DISPLAY_NAME_MAPPINGS: dict[str, str] = {}

__all__ = ["NODE_CLASS_MAPPINGS", "NODE_DISPLAY_NAME_MAPPINGS", "WEB_DIRECTORY"]


def _comfyui_data_dir() -> Path:
    """Inside ComfyUI's user directory, so updating or reinstalling never loses data."""
    if os.environ.get("COMFY_ASSISTANT_DATA_DIR"):
        return Path(os.environ["COMFY_ASSISTANT_DATA_DIR"]).expanduser()
    import folder_paths  # type: ignore[import-not-found]  # ComfyUI's module

    return Path(folder_paths.get_user_directory()) / "comfyui-assistant"


_background: set[asyncio.Future[Any]] = set()  # (a task needs a reference while it runs)


def _report_failed_scan(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logging.getLogger("comfyui_assistant").warning(
            "scanning ComfyUI's nodes and models failed: %s", task.exception()
        )


def _mount_in_comfyui() -> None:
    # ComfyUI imports its `server` module before it loads custom nodes; never import it here.
    server = sys.modules.get("server")
    prompt_server = getattr(server, "PromptServer", None)
    instance = getattr(prompt_server, "instance", None)
    if instance is None or not hasattr(instance, "routes"):
        return
    from .api_handlers import add_routes
    from .comfy_environment import (
        comfyui_address,
        comfyui_model_folders,
        comfyui_outputs,
        scan_comfyui,
    )
    from .core.base import comfyui_users
    from .core.installs import manager_lookups
    from .core.knowledge import COMFYUI_SOURCE, EnvironmentService
    from .core.service import AssistantService, ServiceOptions
    from .core.store import StoreUnavailable
    from .routes.guard import policy_for_comfyui

    data_dir = _comfyui_data_dir()
    environment = EnvironmentService(data_dir, scan_comfyui, COMFYUI_SOURCE)
    options = ServiceOptions(
        data_dir=data_dir,
        environment=environment,
        outputs=comfyui_outputs(),
        model_folders=comfyui_model_folders(),
        install_lookups=manager_lookups(comfyui_address(instance)),  # Manager is on its server
        inside_comfyui=True,
        users=comfyui_users(instance),  # ComfyUI's own resolver; --multi-user or not
    )
    service = AssistantService(options)
    add_routes(instance.routes, service, policy_for_comfyui())
    app = getattr(instance, "app", None)
    if app is not None:

        async def refresh(_app: Any) -> None:
            # Node packs or models may have changed since the cached scan: rescan once, in
            # the background (off the event loop), so the first chat never waits on it.
            task = asyncio.ensure_future(environment.rescan())
            task.add_done_callback(_report_failed_scan)
            _background.add(asyncio.ensure_future(service.warm()))
            log = logging.getLogger("comfyui_assistant")
            try:  # a database we cannot use: one clear line in ComfyUI's console, now
                await service.store()
            except StoreUnavailable as exc:
                log.error("ComfyUI Assistant cannot use its database: %s", exc)
                return
            log.info("ComfyUI Assistant: %s", (await service.provider_settings()).describe())

        async def close(_app: Any) -> None:
            await service.close()

        app.on_startup.append(refresh)
        app.on_cleanup.append(close)


_mount_in_comfyui()
