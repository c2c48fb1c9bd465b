#!/usr/bin/env python3
"""Non-test Python of the package: files, lines, and the longest functions (for notes on a
restructure). `python3 scripts/code_size.py [N]` prints the N longest (default 10)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = (".venv", "tests", "bench", "scripts", "ui")


def main(top: int) -> None:
    rows: list[tuple[int, str]] = []
    files = lines = 0
    for path in sorted(ROOT.rglob("*.py")):
        name = str(path.relative_to(ROOT))
        if name.startswith(SKIP):
            continue
        text = path.read_text(encoding="utf-8")
        files, lines = files + 1, lines + text.count("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                rows.append((length, f"{name}:{node.name}"))
    print(f"{files} files, {lines:,} lines")
    for length, where in sorted(rows, reverse=True)[:top]:
        print(f"{length:5d}  {where}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
