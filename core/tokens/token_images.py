"""What an image costs in tokens, from its size (read from the data URL's header bytes) and how
the model's provider counts images (image_costs.py)."""

from __future__ import annotations

import base64
import binascii

from .image_costs import OPENAI_TILES, ImageCost

IMAGE_DEFAULT_SIZE = (1024, 1024)
"""Assumed size of a remote image or one whose header we can't read."""
_IMAGE_HEADER_B64 = 65_536
"""Base64 characters of a data URL we read for the size: ~48 KB of bytes, past the EXIF blocks
that can precede a JPEG's frame header."""


def image_key(url: str) -> str:
    if url.startswith("data:"):
        comma = url.find(",")
        end = (comma + 1 if comma >= 0 else 0) + _IMAGE_HEADER_B64
        return url[:end]
    return "remote"  # any non-data URL: the size is assumed, the URL does not matter


def image_tokens(url: str, detail: str = "auto", cost: ImageCost = OPENAI_TILES) -> int:
    """The image's cost as `cost` counts it (by default OpenAI's tile formula: 85 for detail
    "low"; else the image is scaled to fit 2048x2048, then its shortest side down to 768, and
    each 512px tile costs 170, plus 85). The size comes from a data URL's header bytes; remote
    or unreadable: 1024x1024 (765 by the default)."""
    width, height = image_size(url) or IMAGE_DEFAULT_SIZE
    if width <= 0 or height <= 0:
        width, height = IMAGE_DEFAULT_SIZE
    return cost.tokens_with_detail(width, height, detail)


def image_size(url: str) -> tuple[int, int] | None:
    """(width, height) from a base64 `data:` URL's PNG/JPEG/GIF/WebP header, else None."""
    if not url.startswith("data:"):
        return None
    comma = url.find(",")
    if comma < 0 or not url[:comma].endswith(";base64"):
        return None
    b64 = url[comma + 1 : comma + 1 + _IMAGE_HEADER_B64]
    b64 = "".join(b64.split())
    b64 = b64[: len(b64) - len(b64) % 4]
    try:
        data = base64.b64decode(b64)
    except (binascii.Error, ValueError):
        return None
    return sniff_size(data)


def sniff_size(d: bytes) -> tuple[int, int] | None:
    if d[:8] == b"\x89PNG\r\n\x1a\n" and len(d) >= 24 and d[12:16] == b"IHDR":
        return int.from_bytes(d[16:20], "big"), int.from_bytes(d[20:24], "big")
    if d[:6] in (b"GIF87a", b"GIF89a") and len(d) >= 10:
        return int.from_bytes(d[6:8], "little"), int.from_bytes(d[8:10], "little")
    if d[:4] == b"RIFF" and d[8:12] == b"WEBP" and len(d) >= 30:
        chunk = d[12:16]
        if chunk == b"VP8 " and d[23:26] == b"\x9d\x01\x2a":
            w = int.from_bytes(d[26:28], "little") & 0x3FFF
            h = int.from_bytes(d[28:30], "little") & 0x3FFF
            return w, h
        if chunk == b"VP8L" and d[20] == 0x2F:
            bits = int.from_bytes(d[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8X":
            return int.from_bytes(d[24:27], "little") + 1, int.from_bytes(d[27:30], "little") + 1
        return None
    if d[:2] == b"\xff\xd8":
        return _jpeg_size(d)
    return None


_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(d: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 3 < len(d):
        if d[i] != 0xFF:
            return None
        marker = d[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD9:  # markers without a length
            i += 2
            continue
        length = int.from_bytes(d[i + 2 : i + 4], "big")
        if marker in _JPEG_SOF:
            if i + 9 > len(d):
                return None
            height = int.from_bytes(d[i + 5 : i + 7], "big")
            width = int.from_bytes(d[i + 7 : i + 9], "big")
            return width, height
        if length < 2:
            return None
        i += 2 + length
    return None
