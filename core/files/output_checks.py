"""What a run's output is, in words for the model and the user: its format and size, and the
cheap checks that catch the common failures before anyone looks at it: an all-black image, a
blank one (one flat colour), the wrong size. A cause is named only where the graph that ran makes
it likely: all black after a latent decode (VAEDecode, tiled or not) upstream of that output is
the usual sign of a failed decode (NaN values become black); an EmptyImage is black by design.

The structure is checked first by core/files/image_files.py (bounded, pure Python: a damaged
file or a decompression bomb is refused there). Pixels are read with Pillow, which ComfyUI
ships (standalone it is optional): the extremes of each channel, exactly, for an image of up to
CHECK_PIXELS (a JPEG is decoded at a reduced size); without Pillow, or past that, the facts say
the pixels were not checked.
"""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass
from typing import Any

from .image_files import BadImage, inspect_image
from .run_outputs import OutputRef, OutputRefused, OutputSource

CHECK_PIXELS = 4096 * 4096  # decoded for the checks at most (48 MB of RGB)
BLACK = 8  # no channel brighter than this (of 255): all black
FLAT = 6  # no channel spanning more than this: one flat colour
ALL_BLACK = "all black"
DECODE_CAUSE = " (the usual sign of a failed VAE decode: NaN values)"  # said only after a decode


@dataclass(frozen=True)
class OutputLook:
    """One output, as told: `findings` are what looks wrong (empty when nothing does)."""

    name: str  # ComfyUI's annotated name, "x.png [output]"
    format: str  # png, jpeg, webp, gif; the extension for a video
    size: int  # bytes
    width: int = 0
    height: int = 0
    frames: int = 1
    checked: bool = False  # its pixels were looked at
    findings: tuple[str, ...] = ()

    def line(self) -> str:
        """One line: "x.png [output]: PNG 1024×1024, all black (…)"."""
        shape = f" {self.width}×{self.height}" if self.width else ""
        frames = f", {self.frames} frames" if self.frames > 1 else ""
        told = "; ".join(self.findings) if self.findings else ("looks fine" if self.checked else "")
        return f"{self.name}: {self.format.upper()}{shape}{frames}" + (f", {told}" if told else "")

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "line": self.line(), "format": self.format}
        out["bytes"] = self.size
        if self.width:
            out |= {"width": self.width, "height": self.height}
        if self.frames > 1:
            out["frames"] = self.frames
        out["pixelsChecked"] = self.checked
        out["findings"] = list(self.findings)
        return out


def look_at(
    ref: OutputRef, data: bytes, expected: tuple[int, int] | None = None, decoded: bool = False
) -> OutputLook:
    """The facts of one output; raises BadImage for an image that is not whole. `decoded`: a
    latent decode is upstream of the node that saved it in the graph that ran (then all black
    names its usual cause). Blocking (it may decode an image): call it in a worker thread."""
    if not ref.is_image:
        return OutputLook(ref.annotated(), ref.extension, len(data))
    info = inspect_image(data)
    findings: list[str] = []
    if expected and (info.width, info.height) != expected:
        findings.append(
            f"it is {info.width}×{info.height}, not the {expected[0]}×{expected[1]} asked for"
        )
    checked, frames, pixel_findings = _pixels(data, info.width * info.height, decoded)
    return OutputLook(
        ref.annotated(), info.format, len(data), info.width, info.height, frames, checked,
        tuple(pixel_findings + findings),
    )  # fmt: skip


def _pixels(data: bytes, pixels: int, decoded: bool) -> tuple[bool, int, list[str]]:
    """(checked, frames, findings) from the first frame's channel extremes."""
    try:
        from PIL import Image
    except ImportError:  # (standalone without Pillow: facts without the checks)
        return False, 1, []
    if pixels > CHECK_PIXELS:
        return False, 1, []
    try:
        with Image.open(io.BytesIO(data)) as image:
            frames = int(getattr(image, "n_frames", 1) or 1)
            image.draft("RGB", (1024, 1024))  # (a JPEG decodes at a reduced scale)
            extrema = image.convert("RGB").getextrema()
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise BadImage(f"its pixels could not be read: {exc}") from None
    lows = [int(low) for low, _ in extrema]
    highs = [int(high) for _, high in extrema]
    if max(highs) <= BLACK:
        return True, frames, [ALL_BLACK + (DECODE_CAUSE if decoded else "")]
    if all(high - low <= FLAT for low, high in zip(lows, highs, strict=True)):
        colour = ",".join(str((low + high) // 2) for low, high in zip(lows, highs, strict=True))
        return True, frames, [f"blank: one flat colour (RGB {colour}), no picture"]
    return True, frames, []


async def look_output(
    outputs: OutputSource, ref: OutputRef, expected: tuple[int, int] | None, decoded: bool
) -> dict[str, Any]:
    """One file's facts, or why it was not read (the others are still answered)."""
    try:
        data = await outputs.read(ref)
        return (await asyncio.to_thread(look_at, ref, data, expected, decoded)).as_json()
    except OutputRefused as exc:
        return {"name": ref.annotated(), "error": str(exc), "status": exc.status}
    except BadImage as exc:
        return {"name": ref.annotated(), "error": f"{ref.annotated()} is not a whole image: {exc}"}
