"""Builds the system message from its sections.

The message must be byte-identical from turn to turn while its inputs are unchanged, because
providers and local servers cache the longest unchanged request prefix: nothing volatile (time,
counters) goes in here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

SYSTEM_CONTEXT_DIR = Path(__file__).resolve().parent / "system_context"

FALLBACK_PROMPT = (
    "You are ComfyUI Assistant, an assistant inside ComfyUI. Help the user build, edit and run "
    "workflows with the tools you have. Read the workflow before changing it, never replace "
    "the user's graph without asking, and say which node ids you changed."
)


def _read_sections(directory: Path) -> tuple[tuple[Path, float], ...]:
    paths = sorted(p for p in directory.glob("*.md") if p.is_file() and p.name != "README.md")
    return tuple((p, p.stat().st_mtime) for p in paths)


@lru_cache(maxsize=4)
def _system_context(files: tuple[tuple[Path, float], ...]) -> str:
    texts = (path.read_text(encoding="utf-8").strip() for path, _ in files)
    return "\n\n".join(t for t in texts if t)


def system_context(directory: Path = SYSTEM_CONTEXT_DIR) -> str:
    """The shipped top-level prompt files, in sorted order (re-read only when one changes)."""
    files = _read_sections(directory) if directory.is_dir() else ()
    return _system_context(files)


def build_system_message(extra: Iterable[str] = (), directory: Path = SYSTEM_CONTEXT_DIR) -> str:
    """The system message: shipped context (or the fallback), then instructions the panel sent."""
    sections = [system_context(directory) or FALLBACK_PROMPT]
    sections.extend(text.strip() for text in extra if text and text.strip())
    return "\n\n".join(sections)
