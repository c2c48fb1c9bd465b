"""Compact JSON text (`{"a":1}`, non-ASCII kept as is): one encoder for the package.

Byte-identical to `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, without
building an encoder per call (that is most of the cost of the small values the request
path serializes by the thousand: tool arguments, digest fields, stored parts). The C encoder
is made once; `JSONEncoder.encode` would make one per call.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_STRING: Callable[[str], str] = json.encoder.encode_basestring
_C_ENCODER: Callable[[Any, int], list[str]] | None = None
if json.encoder.c_make_encoder is not None:  # type: ignore[attr-defined]
    # (markers None: no cycle check, as with check_circular=False; parsed JSON has no cycles,
    # and a cycle still fails, with RecursionError. A shared markers dict would not be safe
    # across threads.)
    _C_ENCODER = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
        None, _ENCODER.default, _STRING, None, ":", ",", False, False, True
    )


def compact_json(value: Any) -> str:
    if _C_ENCODER is None or isinstance(value, str):
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))
