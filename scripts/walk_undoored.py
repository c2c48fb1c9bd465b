"""Walk a name with `farm-studio walk` as if the wings had no doors (issue 37's comparable
`ChatTurn.prepare` figure).

Since each wing of core/ names its public face in its `__init__` ("doors"), `farm-studio walk`
stops at a door. This copies the tracked Python tree (without ui/) to a scratch folder, rewrites
each `from ..wing import X` to the module the door takes X from, and runs the walk there:

    python3 scripts/walk_undoored.py core/chat/chat_turn.py:ChatTurn.prepare:self [-v]

It prints farm-studio's summary line ("N stays; ... M returns to a room I had left"); `-v` also
lists the rooms. Nothing in the checkout is changed.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def door_sources(root: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(wing, name as the door offers it) -> (module inside the wing, its own name)."""
    where: dict[tuple[str, str], tuple[str, str]] = {}
    for init in (root / "core").glob("*/__init__.py"):
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                for alias in node.names:
                    shown = alias.asname or alias.name
                    where[(init.parent.name, shown)] = (node.module, alias.name)
    return where


def rewrite(file: Path, root: Path, where: dict[tuple[str, str], tuple[str, str]]) -> None:
    wings = {w for w, _ in where}
    source = file.read_text()
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module):
            continue
        package = file.parent
        for _ in range(node.level - 1):
            package = package.parent
        target = package / node.module.replace(".", "/")
        if target.parent != root / "core" or target.name not in wings:
            continue
        if file.is_relative_to(target):
            continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            module, own = where.get((target.name, alias.name), ("", alias.name))
            shown = alias.asname or (alias.name if own != alias.name else None)
            groups.setdefault(module, []).append(own + (f" as {shown}" if shown else ""))
        dots = "." * node.level
        text = "".join(
            f"from {dots}{node.module}{'.' + module if module else ''} import {', '.join(names)}\n"
            for module, names in groups.items()
        )
        edits.append((node.lineno, node.end_lineno or node.lineno, text))
    for start, end, text in sorted(edits, reverse=True):
        lines[start - 1 : end] = [text]
    file.write_text("".join(lines))


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    files = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch)
        for name in files:
            if name.startswith("ui/"):
                continue
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_text((ROOT / name).read_text())
        where = door_sources(copy)
        for file in copy.rglob("*.py"):
            rewrite(file, copy, where)
        subprocess.run(["git", "init", "-q", "."], cwd=copy, check=True)
        out = subprocess.run(
            ["farm-studio", "walk", sys.argv[1]], cwd=copy, capture_output=True, text=True
        )
        text = out.stdout + out.stderr
        for line in text.splitlines():
            if "stays" in line or ("-v" in sys.argv and line.lstrip()[:1].isdigit()):
                print(line[:200])
        return out.returncode


if __name__ == "__main__":
    sys.exit(main())
