"""Cutting an oversized tool result down to a size, keeping its structure (JSON stays JSON:
long lists and strings shortened, with a note of what was left out and how to recall it).

Pure and deterministic, like the digests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..base import compact_json
from .digests import INVALID, RECALL_HINT, loads_or


@dataclass(frozen=True)
class _Limits:
    items: int  # array items (and keys of id -> object maps) kept; strings keep 16 * items
    depth: int  # containers at this depth or deeper become "{…}" / "[…]"
    all_keys: bool  # limit the keys of every nested object, not only of maps
    top_keys: bool  # limit the top-level object's keys too


def _shrink(value: Any, lim: _Limits, depth: int) -> tuple[Any, bool]:
    """`value` within `lim`, and whether anything was cut."""
    if isinstance(value, str):
        chars = 16 * lim.items
        if len(value) <= chars:
            return value, False
        return value[:chars] + f"…[+{len(value) - chars} chars]", True
    if not isinstance(value, (list, dict)) or not value:
        return value, False
    if depth >= lim.depth:
        return ("[…]" if isinstance(value, list) else "{…}"), True
    if isinstance(value, list):
        rest = value[lim.items :] if len(value) - lim.items <= 8 else None
        keep = len(value) if rest is not None and len(compact_json(rest)) <= 24 else lim.items
        pairs = [_shrink(item, lim, depth + 1) for item in value[:keep]]
        out = [item for item, _ in pairs]
        if len(value) > keep:  # (a marker that saves nothing is not worth it)
            out.append(f"… {len(value) - keep} more items")
        return out, len(value) > keep or any(cut for _, cut in pairs)
    is_map = all(isinstance(v, dict) for v in value.values())  # e.g. an API-format workflow
    limited = is_map or (lim.top_keys if depth == 0 else lim.all_keys)
    keys = list(value)[: lim.items] if limited else list(value)
    obj: dict[str, Any] = {}
    cut = len(keys) < len(value)
    for key in keys:
        obj[key], item_cut = _shrink(value[key], lim, depth + 1)
        cut = cut or item_cut
    if len(keys) < len(value):
        obj["…"] = f"{len(value) - len(keys)} more keys"
    return obj, cut


def _largest(value: Any, depth: int = 0) -> int:
    """The largest array, object or string (in 16-char steps) in `value`: the search bound."""
    if isinstance(value, str):
        return len(value) // 16 + 1
    if not isinstance(value, (list, dict)) or depth > 64:
        return 1
    items = value.values() if isinstance(value, dict) else value
    return max([len(value), *(_largest(v, depth + 1) for v in items)])


def _render(value: Any, lim: _Limits, original: int, hint: str) -> str:
    shrunk, cut = _shrink(value, lim, 0)
    if not cut:
        return compact_json(shrunk)
    wrap = "items" if isinstance(value, list) else "value"
    obj = shrunk if isinstance(shrunk, dict) else {wrap: shrunk}

    def dump(size: str) -> str:
        note = f"result cut from {original:,} to {size} chars; {hint}"
        return compact_json({**obj, "_truncated": note})

    base = len(dump(""))  # the note states the final size, its own digits included
    size = next(n for n in range(base + 1, base + 20) if len(f"{n:,}") == n - base)
    return dump(f"{size:,}")


def _fit(value: Any, stage: _Limits, original: int, hint: str, max_chars: int) -> str | None:
    """The render with the most items per array that fits (a render grows with them)."""
    best, low, high = None, 1, _largest(value)
    while low <= high:
        k = (low + high) // 2
        out = _render(value, replace(stage, items=k), original, hint)
        if len(out) <= max_chars:
            best, low = out, k + 1
        else:
            high = k - 1
    return best


def _cut_text(text: str, max_chars: int) -> str:
    room = max_chars - len(f"\n…[cut {len(text):,} chars]…\n")
    if room <= 1:
        return text[:max_chars]
    head_n = room * 2 // 3
    tail_n = room - head_n
    head, tail = text[:head_n], text[len(text) - tail_n :]
    if (newline := head.rfind("\n")) >= head_n // 2:
        head = head[:newline]
    if 0 <= (newline := tail.find("\n")) < tail_n // 2:
        tail = tail[newline + 1 :]
    return f"{head}\n…[cut {len(text) - len(head) - len(tail):,} chars]…\n{tail}"


def cut_json(text: str, max_chars: int, *, hint: str = RECALL_HINT) -> str:
    """`text` in at most `max_chars` characters; JSON stays valid JSON (for max_chars >= 2).

    JSON keeps its top-level keys, and object keys as long as possible; long arrays keep their
    first items and a `"… N more items"` marker, id -> object maps their first keys and
    `"…": "N more keys"`, long strings their start and `…[+N chars]`, deep structures become
    `"{…}"`/`"[…]"`; a `_truncated` note says so. Other text keeps its head and tail.
    """
    if len(text) <= max_chars:
        return text
    value = loads_or(text, INVALID)
    if value is INVALID:
        return _cut_text(text, max_chars)
    if len(compact := compact_json(value)) <= max_chars:
        return compact  # only the whitespace was too much
    stages = [_Limits(1, 64, False, False), _Limits(1, 64, True, False)]
    stages += [_Limits(1, depth, True, False) for depth in (8, 4, 3, 2, 1)]
    for stage in [*stages, _Limits(1, 1, True, True)]:
        if (found := _fit(value, stage, len(text), hint, max_chars)) is not None:
            return found
    short = compact_json({"_truncated": f"result of {len(text):,} chars cut; {hint}"})
    return next((s for s in (short, '{"_truncated":true}', "{}") if len(s) <= max_chars), "")
