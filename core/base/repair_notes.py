"""The notes a repaired tool call carries (issue 40: `core/stream/call_repair.py`).

A call the model wrote nearly right, or as text, is read as meant; what was read differently
travels on the call's part as `callProviderMetadata` (the AI SDK client keeps the
`providerMetadata` of a `tool-input-available` chunk there, and sends it back), so the model
reads it before the call's result on every later request, byte for byte the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

META_KEY = "comfyui_assistant"  # the key under callProviderMetadata


def notes_metadata(notes: list[str]) -> dict[str, Any] | None:
    """The call's providerMetadata carrying its notes (the client keeps it on the part as
    `callProviderMetadata`), or None when nothing was repaired."""
    return {META_KEY: {"repairs": list(notes)}} if notes else None


def repair_notes_of(part: Mapping[str, Any]) -> list[str]:
    """The repair notes a tool part carries (`notes_metadata`)."""
    meta = part.get("callProviderMetadata")
    mine = meta.get(META_KEY) if isinstance(meta, dict) else None
    notes = mine.get("repairs") if isinstance(mine, dict) else None
    return [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []


def repair_line(notes: list[str]) -> str:
    """The line the model reads before the result of a repaired call."""
    return f"(Your call was read as meant: {'; '.join(notes)}. Write it that way next time.)"


def repairs_in(message: Any) -> int:
    """The repairs the tool calls of an answer carry (the context report counts them)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    return sum(len(repair_notes_of(p)) for p in parts or [] if isinstance(p, dict))
