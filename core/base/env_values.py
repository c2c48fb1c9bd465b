"""Numbers read from the environment (the LLM_* settings): one rule for every wing."""

from __future__ import annotations

import logging
from collections.abc import Mapping

log = logging.getLogger("comfyui_assistant")


def env_int(environ: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    """An integer environment variable; unset or empty gives `default`, a bad value a warning."""
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        log.warning("%s=%r is not an integer; using %d", name, raw, default)
        return default
    if value < minimum:
        log.warning("%s=%d is below %d; using %d", name, value, minimum, default)
        return default
    return value
