"""Compact JSON text (`{"a":1}`, non-ASCII kept as is): one encoder for the package, so every
stored part, digest field and key is serialized the same way."""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`."""
    return _ENCODER.encode(value)


MAX_DEPTH = 64  # levels of nesting a document read from a file may have (a workflow: ~10)


class NotStrictJSON(ValueError):
    """Text that is not JSON every reader takes; `syntax` when it is not JSON at all (rather
    than JSON with NaN or Infinity, a number past a float's range, a lone surrogate, or nested
    too deeply)."""

    def __init__(self, message: str, syntax: bool = False) -> None:
        super().__init__(message)
        self.syntax = syntax


def finite_float(text: str) -> float:
    """`parse_float` for json.loads: the number, or NotStrictJSON for one past a 64-bit
    float's range (`1e400`, `-1e999`), which Python reads as infinity and a browser as
    Infinity: stored, it is sent back as `Infinity`, which no JSON reader takes."""
    value = float(text)
    if math.isinf(value):
        raise NotStrictJSON(_out_of_range(text[:24]))
    return value


def float_sized_int(text: str) -> int:
    """`parse_int` for json.loads: the integer, or NotStrictJSON for one past a float's range
    (a browser reads 1 and 400 zeros as Infinity)."""
    digits = len(text.lstrip("-"))
    if digits > 309 or (digits == 309 and abs(int(text)) > sys.float_info.max):
        raise NotStrictJSON(_out_of_range(f"{text[:12]}… ({digits} digits)"))
    return int(text)


def _out_of_range(number: str) -> str:
    return (
        f"it holds the number {number}, beyond the range of a 64-bit float (about "
        "1.8e308), which a browser reads as Infinity: write a smaller number"
    )


def strict_json(text: str) -> Any:
    """The JSON value of `text` as a browser reads it (`JSON.parse` has no NaN or Infinity,
    and reads a number past a float's range as Infinity) and as UTF-8 stores it (no lone
    UTF-16 surrogate), at most MAX_DEPTH levels deep; NotStrictJSON saying what is wrong."""
    try:
        value = json.loads(
            text, parse_constant=_no_constant, parse_float=finite_float, parse_int=float_sized_int
        )
    except NotStrictJSON:
        raise
    except json.JSONDecodeError as exc:
        raise NotStrictJSON(f"{exc.msg} at line {exc.lineno} column {exc.colno}", True) from None
    except RecursionError:
        raise NotStrictJSON(_TOO_DEEP) from None
    _check(value, strings=_SURROGATE_ESCAPE.search(text) is not None)
    return value


_TOO_DEEP = f"it is nested more than {MAX_DEPTH} levels deep (a ComfyUI workflow: about 10)"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")  # (only then can a string hold one)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> Any:
    raise NotStrictJSON(
        f"it holds {name}, which JSON has no value for (a browser cannot read it): write a "
        "number or null instead"
    )


def _check(value: Any, strings: bool) -> None:
    """Refuse nesting past MAX_DEPTH and, when `strings`, a string or key holding half of a
    surrogate pair (a pair written as two escapes is one character)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            texts: Any = (item,) if strings else ()
        elif isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise NotStrictJSON(_TOO_DEEP)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
            texts = item.keys() if strings and isinstance(item, dict) else ()
        else:
            continue
        for text in texts:
            if _LONE_SURROGATE.search(text):
                raise NotStrictJSON(
                    "it holds half of a UTF-16 surrogate pair (a \\ud800-\\udfff escape "
                    "alone), which is not text"
                )
