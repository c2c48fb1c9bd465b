"""One picture of what a run made, sized for the model that will look at it.

A run makes one image, a batch of them, or an animation. A model is sent one picture per run:
the image itself, or a contact sheet (the images, or a few frames of an animation, on a grid,
each numbered in the order the label lists them), scaled down to the largest size whose cost,
as the model's provider counts images (`tokens/image_costs.py`), stays within the budget the
window affords. Nothing fits: no picture (the model has the facts in words).

Pillow draws it (ComfyUI ships it). Without Pillow a single still image is sent as it is when
it fits, else nothing. Every file was checked first by the bounded reader (`image_files`):
Pillow opens only whole images of at most `MAX_PIXELS`.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tokens import ImageCost, fit
from .image_files import BadImage, inspect_image

if TYPE_CHECKING:
    from PIL.Image import Image

SHEET_MAX = 9  # images on one contact sheet; the label counts the rest
FRAMES = 4  # frames of an animation shown
MAX_PIXELS = 4096 * 4096  # an image larger is not drawn (its facts still are)
JPEG_QUALITY = 90
_GREY = (40, 40, 40)


@dataclass(frozen=True)
class Picture:
    media_type: str
    data: bytes
    width: int
    height: int
    tokens: int  # as the provider counts it
    shows: str  # what it shows, e.g. "one 768×768 image" or "a 2×2 contact sheet of 4 images"


def picture(files: list[tuple[str, bytes]], cost: ImageCost, budget: int) -> Picture | None:
    """The picture of a run's image files [(name, bytes)] within `budget` tokens, or None."""
    try:
        import PIL.Image  # noqa: F401  (only to learn whether Pillow is there)
    except ImportError:
        return _as_it_is(files, cost, budget)
    tiles, what = _tiles(files)
    if not tiles:
        return None
    image = tiles[0] if len(tiles) == 1 else _sheet(tiles)
    if len(tiles) > 1:
        cols, rows = _grid(len(tiles))
        what = f"a {cols}×{rows} contact sheet of {what}, numbered in order"
    fitted = fit(cost, image.width, image.height, budget)
    if fitted is None:
        return None
    width, height, tokens = fitted
    return _encoded(image, width, height, tokens, what)


def _as_it_is(files: list[tuple[str, bytes]], cost: ImageCost, budget: int) -> Picture | None:
    if len(files) != 1:
        return None
    try:
        info = inspect_image(files[0][1])
    except BadImage:
        return None
    if info.format == "gif" or cost.largest(info.width, info.height) != (info.width, info.height):
        return None  # (an animation, or larger than the provider looks at: it must be scaled)
    tokens = cost.tokens(info.width, info.height)
    if tokens > budget:
        return None
    shows = f"one {info.width}×{info.height} image"
    return Picture(info.media_type, files[0][1], info.width, info.height, tokens, shows)


def _tiles(files: list[tuple[str, bytes]]) -> tuple[list[Image], str]:
    """The images to show (the frames of an animation), in RGB, and what they are in words."""
    from PIL import Image as Pil

    tiles: list[Image] = []
    frames = 0
    for _name, data in files[:SHEET_MAX]:
        try:
            info = inspect_image(data)
            if info.width * info.height > MAX_PIXELS:
                continue
            with Pil.open(io.BytesIO(data)) as opened:
                count = getattr(opened, "n_frames", 1)
                if count > 1 and len(files) == 1:
                    picks = sorted({round(i * (count - 1) / (FRAMES - 1)) for i in range(FRAMES)})
                    for index in picks:
                        opened.seek(index)
                        tiles.append(opened.convert("RGB"))
                    frames = count
                else:
                    tiles.append(opened.convert("RGB"))
        except (BadImage, OSError, ValueError, Pil.DecompressionBombError):
            continue
    if frames:
        return tiles, f"{len(tiles)} of the animation's {frames} frames"
    if len(tiles) == 1:
        return tiles, f"one {tiles[0].width}×{tiles[0].height} image"
    return tiles, f"{len(tiles)} images"


def _grid(n: int) -> tuple[int, int]:
    cols = math.ceil(math.sqrt(n))
    return cols, math.ceil(n / cols)


def _sheet(tiles: list[Image]) -> Image:
    """The tiles on a grid, each in a cell as large as the largest, numbered from 1."""
    from PIL import Image as Pil
    from PIL import ImageDraw

    cols, rows = _grid(len(tiles))
    cell_w, cell_h = max(t.width for t in tiles), max(t.height for t in tiles)
    gap = max(2, cell_w // 100)
    sheet = Pil.new(
        "RGB", (cols * cell_w + (cols - 1) * gap, rows * cell_h + (rows - 1) * gap), _GREY
    )
    draw = ImageDraw.Draw(sheet)
    size = max(12, min(cell_w, cell_h) // 10)
    for i, tile in enumerate(tiles):
        x, y = (i % cols) * (cell_w + gap), (i // cols) * (cell_h + gap)
        sheet.paste(tile, (x + (cell_w - tile.width) // 2, y + (cell_h - tile.height) // 2))
        draw.rectangle((x, y, x + size * 2, y + size * 1.6), fill=(0, 0, 0))
        draw.text((x + size // 2, y + size // 5), str(i + 1), fill=(255, 255, 255), font_size=size)
    return sheet


def _encoded(image: Image, width: int, height: int, tokens: int, what: str) -> Picture:
    from PIL.Image import Resampling

    if (width, height) != image.size:
        image = image.resize((width, height), Resampling.LANCZOS)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
    return Picture(
        "image/jpeg", out.getvalue(), width, height, tokens, f"{what}, at {width}×{height}"
    )
