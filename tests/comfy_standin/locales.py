"""`GET /api/i18n`, as ComfyUI answers it (`build_translations` in its
app/custom_node_manager.py): for each language, every hosted custom node's
`locales/<lang>/main.json`, with its `commands.json`, `settings.json` and `nodeDefs.json` under
those keys, merged. The frontend adds them to its own messages: our tab's title and our command's
label come from there."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aiohttp import web

EXTRA_FILES = ("nodeDefs.json", "commands.json", "settings.json")


def translations(nodes: Iterable[Path]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for node in nodes:
        for folder in sorted(p for p in (node / "locales").glob("*") if p.is_dir()):
            table = _read(folder / "main.json")
            for name in EXTRA_FILES:
                if extra := _read(folder / name):
                    table[name.removesuffix(".json")] = extra
            if table:
                merged[folder.name] = _merge(merged.get(folder.name, {}), table)
    return merged


def add_i18n_route(routes: web.RouteTableDef, nodes: list[Path]) -> None:
    @routes.get("/api/i18n")
    async def i18n(request: web.Request) -> web.Response:
        return web.json_response(translations(nodes))


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        both = isinstance(merged.get(key), dict) and isinstance(value, dict)
        merged[key] = _merge(merged[key], value) if both else value
    return merged
