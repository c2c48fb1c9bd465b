"""The built panel as ComfyUI loads it: one self-contained ES module within its size budget."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

DIST = Path(__file__).resolve().parent.parent / "ui" / "dist"
BUDGET_GZIP = 450 * 1024


def test_the_panel_is_one_module_within_budget():
    files = sorted(p.name for p in DIST.iterdir())
    # ComfyUI loads every .js here as an extension: one module, and its licence notices
    assert files == ["THIRD_PARTY_LICENSES.txt", "comfyui-assistant.js"]
    code = (DIST / "comfyui-assistant.js").read_bytes()
    assert len(gzip.compress(code, 9)) <= BUDGET_GZIP
    imports = re.findall(rb'(?:^|[;}\s])import[^"\'()]*?from\s*"([^"]+)"', code)
    assert set(imports) == {b"../../scripts/app.js"}  # React and the rest are inside
    assert b"process.env.NODE_ENV" not in code


def test_the_panel_css_is_scoped():
    """Nothing the panel styles may leak into ComfyUI's own UI."""
    code = (DIST / "comfyui-assistant.js").read_text(encoding="utf-8")
    sheets = re.findall(r"`(\.cua-root\{[^`]*)`", code)
    assert sheets, "the panel's stylesheet is inside the bundle"
    sheet = re.sub(r"@keyframes[^{]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", "", sheets[0])
    sheet = re.sub(r"@media[^{]*\{", "", sheet)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", sheet) for s in block.split(",")]
    assert selectors and all(s.startswith(".cua-") for s in selectors), [
        s for s in selectors if not s.startswith(".cua-")
    ]


def test_the_licence_notices_name_every_runtime_dependency_with_its_licence_text():
    """Generated at build from what the bundle kept (ui/license-notices.ts)."""
    import json

    notices = (DIST / "THIRD_PARTY_LICENSES.txt").read_text(encoding="utf-8")
    package = json.loads((DIST.parent / "package.json").read_text(encoding="utf-8"))
    # (@assistant-ui/react-ai-sdk only re-exports @assistant-ui/ai-sdk: no code of its own)
    names = ["react", "react-dom", "ai", "@ai-sdk/react", "@assistant-ui/react", "remark-gfm"]
    for name in names:
        version = package["dependencies"][name]
        assert re.search(rf"^{re.escape(name)} {re.escape(version)} \(", notices, re.M), name
    react = notices.split("\nreact 19", 1)[1].split("=" * 78, 2)[1]
    assert "Permission is hereby granted" in react and "Meta Platforms" in react
