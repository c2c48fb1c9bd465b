"""How many names cross the wings' borders: the distinct (wing, name) pairs that core's wings
(and service.py) import from another wing, and that routes/ imports from core; and how many
imports go past a wing's door (`from ..provider.provider import X` instead of
`from ..provider import X`).

    python scripts/border_names.py            # the figures
    python scripts/border_names.py --list     # and every pair, by wing
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imports(folder: str) -> list[tuple[str, int, str, list[str]]]:
    """(file, line, the package path imported from, the names) for each relative import."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        package = path.relative_to(ROOT).parent.parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *(node.module or "").split(".")]).strip(".")
                names = [alias.name for alias in node.names]
                found.append((str(path.relative_to(ROOT)), node.lineno, target, names))
    return found


def home(path: str) -> str:
    parts = Path(path).parts
    if parts[0] == "routes":
        return "routes"
    return parts[1] if len(parts) == 3 else "service"


def main() -> None:
    pairs: dict[str, set[tuple[str, str]]] = {"core": set(), "routes": set()}
    past_door = []
    for folder in ("core", "routes"):
        for path, line, target, names in imports(folder):
            parts = target.split(".")
            if parts[0] != "core" or len(parts) < 2 or parts[1] == home(path):
                continue
            pairs[folder].update((parts[1], name) for name in names)
            if len(parts) > 2:
                past_door.append(f"{path}:{line}: from {target}")
    both = pairs["core"] | pairs["routes"]
    print(f"names crossing wing borders (core wings and service.py): {len(pairs['core'])}")
    print(f"names routes/ imports from core: {len(pairs['routes'])}")
    print(f"distinct (wing, name) pairs, both: {len(both)}")
    print(f"imports past a wing's door: {len(past_door)}")
    if "--list" in sys.argv:
        by_wing = defaultdict(list)
        for wing, name in sorted(both):
            by_wing[wing].append(name)
        for wing, names in by_wing.items():
            print(f"{wing} ({len(names)}): {', '.join(names)}")
        print("\n".join(past_door))


if __name__ == "__main__":
    main()
