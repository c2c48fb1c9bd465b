"""Compact JSON text (`{"a":1}`, non-ASCII kept as is): one encoder for the package.

Byte-identical to `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, without
building an encoder per call (that is most of the cost of the small values the request
path serializes by the thousand: tool arguments, digest fields, stored parts).
"""

from __future__ import annotations

import json
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    return _ENCODER.encode(value)
