"""Images saved the way ComfyUI saves them (comfy_api/latest/_ui.py, with Pillow as ComfyUI
does): a PNG with `prompt` and `workflow` text chunks, a WebP with `prompt:` (EXIF Model) and
`workflow:` (EXIF Make) strings, and plain images without any."""

from __future__ import annotations

import io
import json
import zlib
from typing import Any

from PIL import Image
from PIL.PngImagePlugin import PngInfo

PROMPT: dict[str, Any] = {
    "3": {
        "class_type": "KSampler",
        "inputs": {
            "seed": 156680208700286,
            "steps": 20,
            "cfg": 8,
            "sampler_name": "euler",
            "scheduler": "normal",
            "denoise": 1,
            "model": ["4", 0],
            "positive": ["6", 0],
            "negative": ["7", 0],
            "latent_image": ["5", 0],
        },
    },
    "4": {
        "class_type": "CheckpointLoaderSimple",
        "inputs": {"ckpt_name": "v1-5-pruned-emaonly.safetensors"},
    },
    "5": {
        "class_type": "EmptyLatentImage",
        "inputs": {"width": 512, "height": 512, "batch_size": 1},
    },
    "6": {
        "class_type": "CLIPTextEncode",
        "inputs": {"text": "a lighthouse at dusk, oil painting", "clip": ["4", 1]},
    },
    "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "blurry", "clip": ["4", 1]}},
    "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
    "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "ComfyUI", "images": ["8", 0]}},
}

WORKFLOW: dict[str, Any] = {
    "last_node_id": 9,
    "last_link_id": 1,
    "nodes": [
        {
            "id": 6,
            "type": "CLIPTextEncode",
            "pos": [415, 186],
            "size": [422, 164],
            "inputs": [{"name": "clip", "type": "CLIP", "link": 1}],
            "outputs": [{"name": "CONDITIONING", "type": "CONDITIONING", "links": []}],
            "widgets_values": ["a lighthouse at dusk, oil painting"],
        },
        {
            "id": 4,
            "type": "CheckpointLoaderSimple",
            "pos": [26, 474],
            "size": [315, 98],
            "inputs": [],
            "outputs": [{"name": "CLIP", "type": "CLIP", "links": [1]}],
            "widgets_values": ["v1-5-pruned-emaonly.safetensors"],
        },
    ],
    "links": [[1, 4, 1, 6, 0, "CLIP"]],
    "groups": [],
    "config": {},
    "extra": {},
    "version": 0.4,
}


def picture(size: tuple[int, int] = (64, 48)) -> Image.Image:
    image = Image.new("RGB", size)
    for x in range(size[0]):  # some content, so the encoders have something to compress
        image.putpixel((x, x % size[1]), (x * 4 % 256, 90, 200))
    return image


def comfy_png(
    prompt: Any = PROMPT, workflow: Any = WORKFLOW, size: tuple[int, int] = (64, 48)
) -> bytes:
    """SaveImage: PngInfo text chunks, `json.dumps` of each value, compress level 4."""
    metadata = PngInfo()
    if prompt is not None:
        metadata.add_text("prompt", prompt if isinstance(prompt, str) else json.dumps(prompt))
    if workflow is not None:
        metadata.add_text("workflow", json.dumps(workflow))
    out = io.BytesIO()
    picture(size).save(out, format="PNG", pnginfo=metadata, compress_level=4)
    return out.getvalue()


def comfy_webp(prompt: Any = PROMPT, workflow: Any = WORKFLOW) -> bytes:
    """SaveAnimatedWEBP / the WebP saver: EXIF Model "prompt:{...}", Make "workflow:{...}"."""
    image = picture()
    exif = image.getexif()
    exif[0x0110] = f"prompt:{json.dumps(prompt)}"
    exif[0x010F] = f"workflow:{json.dumps(workflow)}"
    out = io.BytesIO()
    image.save(out, format="WEBP", exif=exif, lossless=False, quality=80)
    return out.getvalue()


def plain(fmt: str, size: tuple[int, int] = (64, 48)) -> bytes:
    out = io.BytesIO()
    picture(size).save(out, format=fmt)
    return out.getvalue()


# Decompression bombs, built with zlib directly: a block compressed once after a full flush
# (which resets the compressor's history) compresses to the same bytes every time, so a
# stream that inflates to gigabytes is written in milliseconds, its checksum computed aside.


def deflate_repeated(block: bytes, count: int, head: bytes = b"", tail: bytes = b"") -> bytes:
    """A zlib stream of `head + block * count + tail`, built without compressing it all."""
    pack = zlib.compressobj(9)
    start = pack.compress(head) + pack.flush(zlib.Z_FULL_FLUSH)
    segment = pack.compress(block) + pack.flush(zlib.Z_FULL_FLUSH)
    end = pack.compress(tail) + pack.flush()
    check, once = zlib.adler32(head), zlib.adler32(block)
    for _ in range(count):
        check = _adler32_combine(check, once, len(block))
    check = zlib.adler32(tail, check)
    return start + segment * count + end[:-4] + check.to_bytes(4, "big")


def _adler32_combine(first: int, second: int, second_length: int) -> int:
    """zlib's adler32_combine: the checksum of two pieces from theirs."""
    base = 65_521
    a1, b1, a2, b2 = first & 0xFFFF, first >> 16, second & 0xFFFF, second >> 16
    a = (a1 + a2 - 1) % base
    b = (b1 + b2 + second_length * (a1 - 1)) % base
    return a | b << 16


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def png_header(
    width: int, height: int, depth: int = 8, colour: int = 2, interlace: int = 0
) -> bytes:
    body = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    return PNG_SIGNATURE + png_chunk(b"IHDR", body + bytes([depth, colour, 0, 0, interlace]))


def png_with(width: int, height: int, pixels: bytes, *chunks: bytes, **header: int) -> bytes:
    """A PNG of `pixels` (a zlib stream, cut into IDAT chunks of 1 MB), then `chunks`."""
    step = 1 << 20
    data = [png_chunk(b"IDAT", pixels[i : i + step]) for i in range(0, len(pixels), step)]
    return png_header(width, height, **header) + b"".join(data + list(chunks)) + IEND


def text_bomb(megabytes: int, kind: bytes = b"zTXt") -> bytes:
    """A 1×1 PNG whose `workflow` text (zTXt, or iTXt compressed) is a UI workflow with a note
    of `megabytes` MB: about 1 KB of file per MB of text."""
    text = deflate_repeated(b"a" * (1 << 20), megabytes, b'{"nodes": [], "note": "', b'"}')
    body = b"workflow\x00" + (b"\x00" if kind == b"zTXt" else b"\x01\x00\x00\x00") + text
    return png_with(1, 1, zlib.compress(b"\x00\x00\x00\x00"), png_chunk(kind, body))


def pixel_bomb(megabytes: int, width: int = 10_000, height: int = 10_000, **header: int) -> bytes:
    """A PNG claiming `width`×`height` whose image data inflates to `megabytes` MB of zeros."""
    return png_with(width, height, deflate_repeated(bytes(1 << 20), megabytes), **header)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IEND = png_chunk(b"IEND", b"")


def exif_bomb(
    size: int, value: bytes = b"\xff", entries: int = 65_535, shared: bool = True
) -> bytes:
    """A real WebP (Pillow's) of `size` bytes whose EXIF directory has `entries` ASCII entries
    (ImageDescription) pointing into one value, `value` repeated to fill the file: all at the
    same offset (`shared`), or each one byte further (overlapping, each a different text).
    Read entry by entry, each a copy of the value: gigabytes from an 800 KB file."""
    image = io.BytesIO()
    picture((16, 16)).save(image, format="WEBP", lossless=True)
    head = 8 + 2 + 12 * entries + 4  # TIFF header, count, entries, next directory
    room = size - len(image.getvalue()) - 8 - 6 - head  # (the EXIF chunk's header, "Exif\0\0")
    data = (value * (room // len(value) + 1))[:room]
    count = len(data) if shared else len(data) - entries
    tiff = [b"Exif\x00\x00II*\x00", (8).to_bytes(4, "little"), entries.to_bytes(2, "little")]
    for i in range(entries):  # (tag 0x010E ImageDescription, type 2 ASCII, count, offset)
        at = head + (0 if shared else i)
        tiff.append(b"\x0e\x01\x02\x00" + count.to_bytes(4, "little") + at.to_bytes(4, "little"))
    exif = b"".join(tiff) + bytes(4) + data
    out = io.BytesIO()
    picture((16, 16)).save(out, format="WEBP", lossless=True, exif=exif)
    return out.getvalue()
