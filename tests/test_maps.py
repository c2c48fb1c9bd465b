"""The maps a newcomer reads first cannot drift from what they map: docs/DESIGN.md's table of
core's wings says what each wing's own docstring says (scripts/gen_panel_types.py writes it), and
the README starts with a Quick start short enough to reach a first chat."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _said(text: str) -> str:
    return " ".join(text.split())


def test_the_design_notes_wing_table_is_the_wings_docstrings():
    design = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    table = design.split("<!-- wing table: written by scripts/gen_panel_types.py", 1)[1]
    table = table.split("<!-- end of the wing table -->", 1)[0]
    rows = [line.strip("|").split(" | ") for line in table.splitlines() if line.startswith("| `")]
    listed = {name.strip(" `"): (owns, may.strip()) for name, owns, may in rows}
    wings = sorted(p.parent.name for p in (ROOT / "core").glob("*/__init__.py"))
    assert "installs" in wings and len(wings) >= 13
    assert sorted(listed) == sorted([*wings, "service.py"])
    for wing in wings:
        doc = importlib.import_module(f"comfyui_assistant.core.{wing}").__doc__ or ""
        owns, may = doc.split("May import:")
        assert listed[wing] == (_said(owns), _said(may).removesuffix(".")), wing
    service = importlib.import_module("comfyui_assistant.core.service").__doc__ or ""
    assert listed["service.py"][0] == _said(service.split("\n\n")[0])
    order = [name.strip(" `") for name, _, _ in rows]
    for wing in wings:  # from the ground up: each after what it may import
        below = listed[wing][1].replace("service", "service.py").split(", ")
        assert set(below) - {"nothing of core"} <= set(order[: order.index(wing)]), wing


def test_the_readme_starts_with_a_quick_start_to_a_first_chat():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
    assert lines[headings[0]] == "## Quick start"
    section = lines[headings[0] : headings[1]]
    while not section[-1].strip():
        section.pop()
    assert len(section) <= 15, "\n".join(section)
    steps = "\n".join(section)
    for said in ("custom_nodes", "pip install -r", "Choose a model", "Settings", "Ctrl+Shift+L"):
        assert said in steps, said
    assert "first message" in steps and "Enter" in steps
