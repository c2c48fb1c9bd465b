"""Compact JSON text (`{"a":1}`, non-ASCII kept as is): one encoder for the package, so every
stored part, digest field and key is serialized the same way."""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`."""
    return _ENCODER.encode(value)
