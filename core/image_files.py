"""What an image file is: its format and size, read from its own bytes, whether it is whole,
and the text it carries (ComfyUI writes the workflow and the prompt into its outputs: PNG text
chunks `workflow` and `prompt`; WebP EXIF strings `workflow:{...}` and `Prompt:{...}`).

Pure Python, no imaging library: the structure is walked (PNG chunks with their CRCs and a
complete compressed image stream, JPEG segments to the end-of-image marker, the WebP RIFF
container, the GIF trailer), so a truncated or damaged file is refused with what is wrong,
before anything is stored.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from .token_images import sniff_size

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MEDIA_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
MAX_SIDE = 32_768  # pixels; larger is a damaged header (or nothing a model could take)
MAX_PIXELS = 100_000_000  # a model scales any image to ~2 MP; past this, a decompression bomb
_INFLATE_STEP = 1 << 20  # bytes of decompressed pixels checked at a time, then dropped


class BadImage(ValueError):
    """The bytes are not a whole image of the format they claim; the message says what."""


@dataclass(frozen=True)
class ImageInfo:
    format: str  # png, jpeg, webp, gif
    width: int
    height: int
    texts: dict[str, str] = field(default_factory=dict)  # metadata key -> text

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.format]


def image_format(data: bytes) -> str | None:
    """The image format the leading bytes announce, or None."""
    if data.startswith(PNG_SIGNATURE):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    return None


def inspect_image(data: bytes) -> ImageInfo:
    """The image's format, size and metadata texts; BadImage when it is damaged."""
    kind = image_format(data)
    if kind is None:
        raise BadImage("it is not a PNG, JPEG, WebP or GIF image")
    size = sniff_size(data[:65_536])
    if size is None or not (0 < size[0] <= MAX_SIDE and 0 < size[1] <= MAX_SIDE):
        raise BadImage(f"its {kind.upper()} header does not give a usable width and height")
    if size[0] * size[1] > MAX_PIXELS:
        raise BadImage(
            f"it is {size[0]}×{size[1]} pixels; images of more than {MAX_PIXELS // 1_000_000} "
            "megapixels are not taken (scale it down first)"
        )
    checks = {"png": _png_texts, "jpeg": _jpeg_check, "webp": _webp_texts, "gif": _gif_check}
    return ImageInfo(kind, size[0], size[1], checks[kind](data))


def _png_texts(data: bytes) -> dict[str, str]:
    texts: dict[str, str] = {}
    inflate = zlib.decompressobj()
    pos, first, ended, pixels = 8, True, False, False
    while pos < len(data):
        if pos + 12 > len(data):
            raise BadImage("the PNG is cut off (a chunk header is incomplete)")
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        crc = data[pos + 8 + length : pos + 12 + length]
        if len(body) < length or len(crc) < 4:
            raise BadImage("the PNG is cut off (its last chunk is incomplete)")
        if zlib.crc32(kind + body) != int.from_bytes(crc, "big"):
            raise BadImage(f"the PNG is damaged (chunk {kind.decode('latin-1')!r} fails its CRC)")
        if first and kind != b"IHDR":
            raise BadImage("the PNG is damaged (it does not start with its header chunk)")
        first = False
        if kind == b"IDAT":
            pixels = True
            _inflate_check(inflate, body)
        elif kind in (b"tEXt", b"iTXt", b"zTXt", b"comf"):
            key, text = _png_text(kind, body)
            if key:
                texts.setdefault(key, text)
        elif kind == b"IEND":
            ended = True
            break
        pos += 12 + length
    if not ended or not pixels:
        raise BadImage("the PNG is cut off (no image data, or no end chunk)")
    if not inflate.eof:
        raise BadImage("the PNG is cut off (its compressed image data ends early)")
    return texts


def _inflate_check(inflate: zlib._Decompress, body: bytes) -> None:
    """Decompress to check the stream, keeping no pixels (a large PNG inflates to 100s of MB)."""
    try:
        inflate.decompress(body, _INFLATE_STEP)
        while inflate.unconsumed_tail:
            inflate.decompress(inflate.unconsumed_tail, _INFLATE_STEP)
    except zlib.error as exc:
        raise BadImage(f"the PNG is damaged (its image data does not decompress: {exc})") from None


def _png_text(kind: bytes, body: bytes) -> tuple[str, str]:
    """(keyword, text) of a tEXt, zTXt or iTXt chunk; ("", "") when unreadable."""
    key, _, rest = body.partition(b"\x00")
    try:
        if kind in (b"tEXt", b"comf"):  # (comf: ComfyUI's animated PNG, after the image data)
            return key.decode("latin-1"), rest.decode("latin-1")
        if kind == b"zTXt":
            return key.decode("latin-1"), zlib.decompress(rest[1:]).decode("latin-1")
        compressed = rest[:1] == b"\x01"
        _lang, _, rest = rest[2:].partition(b"\x00")
        _translated, _, text = rest.partition(b"\x00")
        return key.decode("latin-1"), (zlib.decompress(text) if compressed else text).decode()
    except (zlib.error, UnicodeDecodeError):
        return "", ""


def _jpeg_check(data: bytes) -> dict[str, str]:
    """Segments from the start to the scan, then an end-of-image marker after it."""
    pos = 2
    while True:
        if pos + 4 > len(data) or data[pos] != 0xFF:
            raise BadImage("the JPEG is damaged or cut off before its image data")
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if length < 2 or pos + 2 + length > len(data):
            raise BadImage("the JPEG is damaged or cut off before its image data")
        if marker == 0xDA:  # start of scan: the image data follows
            break
        pos += 2 + length
    if data.rfind(b"\xff\xd9", pos) < 0:
        raise BadImage("the JPEG is cut off (no end-of-image marker)")
    return {}


def _gif_check(data: bytes) -> dict[str, str]:
    if not data.rstrip(b"\x00").endswith(b"\x3b"):
        raise BadImage("the GIF is cut off (no trailer)")
    return {}


def _webp_texts(data: bytes) -> dict[str, str]:
    size = int.from_bytes(data[4:8], "little")
    if size + 8 > len(data):
        raise BadImage(f"the WebP is cut off ({len(data):,} of {size + 8:,} bytes)")
    texts: dict[str, str] = {}
    pos, image = 12, False
    while pos + 8 <= size + 8:
        kind, length = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        body = data[pos + 8 : pos + 8 + length]
        if len(body) < length:
            raise BadImage("the WebP is cut off (its last chunk is incomplete)")
        if kind in (b"VP8 ", b"VP8L", b"ANMF"):
            image = True
        elif kind == b"EXIF":
            for text in exif_strings(body):
                key, sep, value = text.partition(":")
                if sep and key.strip().isidentifier():
                    texts.setdefault(key.strip().lower(), value)
        pos += 8 + length + (length & 1)
    if not image:
        raise BadImage("the WebP holds no image data")
    return texts


def exif_strings(body: bytes) -> list[str]:
    """The ASCII values of an EXIF block's first directory (ComfyUI writes its metadata into
    ImageDescription and Make as "key:value"); [] when it cannot be read."""
    if body.startswith(b"Exif\x00\x00"):
        body = body[6:]
    order = {b"II": "little", b"MM": "big"}.get(body[:2])
    if order is None or len(body) < 8:
        return []
    endian = "little" if order == "little" else "big"

    def num(at: int, size: int) -> int:
        return int.from_bytes(body[at : at + size], endian)  # type: ignore[arg-type]

    ifd = num(4, 4)
    if ifd + 2 > len(body):
        return []
    out = []
    for i in range(num(ifd, 2)):
        entry = ifd + 2 + 12 * i
        if entry + 12 > len(body):
            break
        if num(entry + 2, 2) != 2:  # ASCII
            continue
        count = num(entry + 4, 4)
        at = entry + 8 if count <= 4 else num(entry + 8, 4)
        raw = body[at : at + count].rstrip(b"\x00")
        out.append(raw.decode("utf-8", errors="replace"))
    return out
