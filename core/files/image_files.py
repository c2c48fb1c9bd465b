"""What an image file is: its format and size, read from its own bytes, whether it is whole,
and the text it carries (ComfyUI writes the workflow and the prompt into its outputs: PNG text
chunks `workflow` and `prompt`; WebP EXIF strings `workflow:{...}` and `Prompt:{...}`).

Pure Python, no imaging library: the structure is walked (PNG chunks with their CRCs and a
complete compressed image stream, JPEG segments to the end-of-image marker, the WebP RIFF
container, the GIF trailer), so a truncated or damaged file is refused with what is wrong,
before anything is stored.

The work is bounded whatever the file claims (a few MB of PNG can inflate to tens of GB): its
pixel data is inflated a step at a time, kept nowhere, and no further than the size its header
gives (at most 100 megapixels); its metadata texts no further than METADATA_TEXT_BYTES each,
METADATA_BYTES and METADATA_TEXTS in all, charged before they are decoded (EXIF entries that
point at the same bytes are read once: 65,535 of them could make gigabytes of an 800 KB file).
Callers in a server run it on a worker thread (it takes seconds for the largest images).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..tokens import sniff_size

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MEDIA_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
MAX_SIDE = 32_768  # pixels; larger is a damaged header (or nothing a model could take)
MAX_PIXELS = 100_000_000  # a model scales any image to ~2 MP; past this, a decompression bomb
_INFLATE_STEP = 1 << 20  # bytes of decompressed pixels checked at a time, then dropped
METADATA_TEXT_BYTES = 8 * 1024 * 1024  # one text (a workflow): past this, a decompression bomb
METADATA_BYTES = 16 * 1024 * 1024  # all of an image's texts
MAX_CHUNKS = 100_000  # chunks (JPEG segments) an image may have; 20 MB of empty ones: 12 s
METADATA_TEXTS = 1_000  # texts (PNG chunks, EXIF strings) an image may carry; ComfyUI: 2


class BadImage(ValueError):
    """The bytes are not a whole image of the format they claim, or carry more than is taken;
    the message says what, `status` is the HTTP status to refuse it with."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


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
    texts = _Texts()
    pixels = _Pixels(_png_header(data))
    pos, ended = 8, False
    for _ in _steps("PNG"):
        if pos >= len(data):
            break
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
        if kind == b"IDAT":
            pixels.feed(body)
        elif kind in (b"tEXt", b"iTXt", b"zTXt", b"comf"):
            _png_text(kind, body, texts)
        elif kind == b"IEND":
            ended = True
            break
        pos += 12 + length
    if not ended or not pixels.fed:
        raise BadImage("the PNG is cut off (no image data, or no end chunk)")
    pixels.finish()
    return texts.found


_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # colour type: grey, RGB, palette, grey+alpha, RGBA
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
# Adam7 interlacing, each pass: first column, first row, column step, row step
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))  # fmt: skip


@dataclass(frozen=True)
class _PngHeader:
    width: int
    height: int
    bits: int  # per pixel
    interlaced: bool

    def pixel_bytes(self) -> int:
        """The size of the image data once inflated: each row of each pass, with its filter
        byte (a pass with no pixel has no row)."""
        if not self.interlaced:
            return self._rows(self.width, self.height)
        return sum(
            self._rows(_ceil(self.width - x, dx), _ceil(self.height - y, dy))
            for x, y, dx, dy in _ADAM7
        )

    def _rows(self, width: int, height: int) -> int:
        return height * (1 + _ceil(width * self.bits, 8)) if width > 0 and height > 0 else 0


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _png_header(data: bytes) -> _PngHeader:
    """IHDR, the first chunk: the size and the layout of the pixels."""
    if len(data) < 33:
        raise BadImage("the PNG is cut off (in its header chunk)")
    if data[8:16] != b"\x00\x00\x00\x0dIHDR":
        raise BadImage("the PNG is damaged (it does not start with its header chunk)")
    depth, colour, interlace = data[24], data[25], data[28]
    if depth not in _DEPTHS.get(colour, ()) or interlace > 1:
        raise BadImage(
            f"the PNG is damaged (its header gives an unknown pixel format: colour type {colour}, "
            f"bit depth {depth}, interlace {interlace})"
        )
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return _PngHeader(width, height, depth * _CHANNELS[colour], interlace == 1)


class _Pixels:
    """The compressed image data (all IDAT chunks: one zlib stream), inflated a step at a time
    to check it, keeping no pixels, and never past the size the header gives: a few MB of
    file can inflate to tens of GB."""

    def __init__(self, header: _PngHeader) -> None:
        self.header, self.expected = header, header.pixel_bytes()
        self.inflate = zlib.decompressobj()
        self.size, self.fed = 0, False

    def feed(self, body: bytes) -> None:
        self.fed = True
        try:
            self._count(self.inflate.decompress(body, _INFLATE_STEP))
            while self.inflate.unconsumed_tail:
                self._count(self.inflate.decompress(self.inflate.unconsumed_tail, _INFLATE_STEP))
        except zlib.error as exc:
            raise BadImage(
                f"the PNG is damaged (its image data does not decompress: {exc})"
            ) from None

    def _count(self, pixels: bytes) -> None:
        self.size += len(pixels)
        if self.size > self.expected:
            raise BadImage(
                f"the PNG is damaged: its image data inflates past the {self.expected:,} bytes "
                f"its {self.header.width}×{self.header.height} header gives (a decompression bomb?)"
            )

    def finish(self) -> None:
        if not self.inflate.eof:
            raise BadImage("the PNG is cut off (its compressed image data ends early)")
        if self.size < self.expected:
            raise BadImage(
                f"the PNG is damaged: its image data holds {self.size:,} of the "
                f"{self.expected:,} bytes its {self.header.width}×{self.header.height} header gives"
            )


class _Texts:
    """Metadata texts as they are read, capped: one at most METADATA_TEXT_BYTES, all of them
    (those kept and those not, keys too) METADATA_BYTES, and no more than METADATA_TEXTS of
    them. A compressed text is inflated no further."""

    def __init__(self) -> None:
        self.found: dict[str, str] = {}
        self.used = 0
        self.texts = 0

    def room(self) -> int:
        """The bytes the next text may have."""
        return min(METADATA_TEXT_BYTES, METADATA_BYTES - self.used)

    def count(self, key: str, size: int) -> None:
        """Charge a text of `size` bytes (inflated); BadImage when it is more than allowed."""
        if size > METADATA_TEXT_BYTES:
            raise BadImage(
                f"its metadata text {key[:40]!r} is more than {_mb(METADATA_TEXT_BYTES)}, the "
                "most one may be (a ComfyUI workflow is a few MB at most)",
                status=413,
            )
        self.used += size
        self.texts += 1
        if self.texts > METADATA_TEXTS:
            raise BadImage(
                f"it carries more than {METADATA_TEXTS:,} metadata texts, the most an image may "
                "(ComfyUI writes two)",
                status=413,
            )
        if self.used > METADATA_BYTES:
            raise BadImage(
                f"its metadata texts add up to more than {_mb(METADATA_BYTES)}, the most an "
                "image may carry",
                status=413,
            )

    def keep(self, key: str, text: str) -> None:
        self.count(key, len(key) + len(text))
        if key:
            self.found.setdefault(key, text)


def _mb(size: int) -> str:
    return f"{size // (1024 * 1024)} MB"


def _png_text(kind: bytes, body: bytes, texts: _Texts) -> None:
    """Keep the (keyword, text) of a tEXt, zTXt, iTXt or comf chunk; one that cannot be read
    is left out (but counted)."""
    key_bytes, _, rest = body.partition(b"\x00")
    key = key_bytes.decode("latin-1")
    if kind in (b"tEXt", b"comf"):  # (comf: ComfyUI's animated PNG, after the image data)
        texts.keep(key, rest.decode("latin-1"))
        return
    if kind == b"zTXt":
        compressed, encoding, text = True, "latin-1", rest[1:]
    else:
        compressed, encoding = rest[:1] == b"\x01", "utf-8"
        _lang, _, rest = rest[2:].partition(b"\x00")
        _translated, _, text = rest.partition(b"\x00")
    if compressed:
        inflated = _inflate_text(text, key, texts)
        if inflated is None:
            return
        text = inflated
    try:
        texts.keep(key, text.decode(encoding))
    except UnicodeDecodeError:
        texts.count(key, len(text))


def _inflate_text(data: bytes, key: str, texts: _Texts) -> bytes | None:
    """What a compressed text inflates to, a step at a time and never a byte past the room
    `texts` has (BadImage then); None when it is damaged or cut off (what it inflated to
    is charged all the same: the work is bounded by the room, not by the text being whole)."""
    room = texts.room()
    inflate, out, pending = zlib.decompressobj(), bytearray(), data
    try:
        while pending and len(out) <= room:
            out += inflate.decompress(pending, min(_INFLATE_STEP, room + 1 - len(out)))
            pending = inflate.unconsumed_tail
    except zlib.error:
        texts.count(key, len(out))
        return None
    if len(out) > room or not inflate.eof:
        texts.count(key, len(out))  # (past the room, this refuses the image)
        return None
    return bytes(out)


def _steps(kind: str) -> Iterator[int]:
    """The steps of a walk through a file's chunks (segments, markers), at most MAX_CHUNKS:
    20 MB of empty chunks took 8 to 12 s."""
    yield from range(MAX_CHUNKS)
    raise BadImage(
        f"the {kind} is damaged: it has more than {MAX_CHUNKS:,} chunks (an image has a few "
        "thousand at most)"
    )


def _jpeg_check(data: bytes) -> dict[str, str]:
    """Segments from the start to the scan, then an end-of-image marker after it."""
    pos = 2
    for _ in _steps("JPEG"):
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
    texts = _Texts()
    pos, image = 12, False
    for _ in _steps("WebP"):
        if pos + 8 > size + 8:
            break
        kind, length = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        body = data[pos + 8 : pos + 8 + length]
        if len(body) < length:
            raise BadImage("the WebP is cut off (its last chunk is incomplete)")
        if kind in (b"VP8 ", b"VP8L", b"ANMF"):
            image = True
        elif kind == b"EXIF":
            for text in exif_strings(body, texts):  # (each charged as it is read)
                key, sep, value = text.partition(":")
                if sep and key.strip().isidentifier():
                    texts.found.setdefault(key.strip().lower(), value)
        pos += 8 + length + (length & 1)
    if not image:
        raise BadImage("the WebP holds no image data")
    return texts.found


def exif_strings(body: bytes, texts: _Texts | None = None) -> list[str]:
    """The ASCII values of an EXIF block's first directory (ComfyUI writes its metadata into
    ImageDescription and Make as "key:value"); [] when it cannot be read. Each is charged to
    `texts` before it is decoded (BadImage past its caps); entries that point at the same
    bytes are one value, read once."""
    if body.startswith(b"Exif\x00\x00"):
        body = body[6:]
    order = {b"II": "<", b"MM": ">"}.get(body[:2])
    if order is None or len(body) < 8:
        return []
    (ifd,) = struct.unpack_from(order + "I", body, 4)
    if ifd + 2 > len(body):
        return []
    (entries,) = struct.unpack_from(order + "H", body, ifd)
    first = ifd + 2
    entries = min(entries, (len(body) - first) // 12)  # (a directory cut off: its whole ones)
    texts = texts if texts is not None else _Texts()
    out, seen = [], set()
    table = struct.iter_unpack(order + "HHII", body[first : first + 12 * entries])
    for i, (_tag, kind, count, offset) in enumerate(table):
        if kind != 2:  # ASCII
            continue
        at = first + 12 * i + 8 if count <= 4 else offset
        size = max(0, min(count, len(body) - at))
        if (at, size) in seen:
            continue
        seen.add((at, size))
        texts.count("EXIF", size)
        out.append(body[at : at + size].rstrip(b"\x00").decode("utf-8", errors="replace"))
    return out
