"""Loads the shipped system context and the skills index (the design card's name for it); it
lives in `core/knowledge/context_files.py`, so the core uses it without importing from above
itself."""

from .core.knowledge import (
    SYSTEM_CONTEXT_DIR,
    SystemContext,
    load_system_context,
    skills_index,
)

__all__ = ["SYSTEM_CONTEXT_DIR", "SystemContext", "load_system_context", "skills_index"]
