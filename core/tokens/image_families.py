"""How each provider counts an image, family by family: the arithmetic only. Which family a model
belongs to, and where each figure comes from, is in image_costs.py.

Every family answers two questions for an image of width x height pixels: `tokens`, what the
provider counts for it (its own resize and wrapper tokens included), and `largest`, the size the
provider itself reduces it to (never larger than the image: sending more pixels buys nothing).
llama.cpp computes its resizes in 32-bit floats; the families that copy its arithmetic round
each step to float32 (`_f32`) so their counts agree with the server's to the token.
"""

from __future__ import annotations

import math
import struct
from abc import ABC, abstractmethod
from dataclasses import dataclass

Size = tuple[int, int]


class ImageCost(ABC):
    """What one provider (or one local model family) counts for an image."""

    name: str
    """Stable and short, for reports and caches: "openai-tiles 85/170", "qwen2.5-vl"."""

    @abstractmethod
    def tokens(self, width: int, height: int) -> int:
        """Tokens the provider counts for an image of this size (its resize and wrappers in)."""

    @abstractmethod
    def largest(self, width: int, height: int) -> Size:
        """The size the provider reduces such an image to; never larger than the image."""

    def tokens_with_detail(self, width: int, height: int, detail: str) -> int:
        """`tokens`, for an OpenAI `image_url` part's `detail`: only OpenAI's tile models honour
        "low"; every other provider ignores it."""
        return self.tokens(width, height)


# --- hosted providers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenAITiles(ImageCost):
    """OpenAI's tile models: the image is scaled to fit 2048x2048, then its shortest side down to
    768; each 512 px tile costs `tile`, plus `base` (all that detail "low" costs)."""

    name: str
    base: int
    tile: int

    def tokens(self, width: int, height: int) -> int:
        w, h = self._resized(width, height)
        return self.base + self.tile * math.ceil(w / 512) * math.ceil(h / 512)

    def tokens_with_detail(self, width: int, height: int, detail: str) -> int:
        return self.base if detail == "low" else self.tokens(width, height)

    def largest(self, width: int, height: int) -> Size:
        w, h = self._resized(width, height)
        return min(width, max(1, math.floor(w))), min(height, max(1, math.floor(h)))

    @staticmethod
    def _resized(width: int, height: int) -> tuple[float, float]:
        w, h = float(width), float(height)
        if max(w, h) > 2048:
            scale = 2048 / max(w, h)
            w, h = w * scale, h * scale
        if min(w, h) > 768:
            scale = 768 / min(w, h)
            w, h = w * scale, h * scale
        return w, h


@dataclass(frozen=True)
class OpenAIPatches(ImageCost):
    """OpenAI's patch models: 32 px patches, at most `cap` (a larger image is scaled down to fit,
    by the documented rule), times the model's multiplier, rounded up."""

    name: str
    cap: int
    percent: int
    """The multiplier in hundredths (1.62 -> 162): integer arithmetic, no float rounding."""

    def tokens(self, width: int, height: int) -> int:
        w, h = self.largest(width, height)
        patches = min(_cells(w, 32) * _cells(h, 32), self.cap)
        return -(-patches * self.percent // 100)

    def largest(self, width: int, height: int) -> Size:
        if _cells(width, 32) * _cells(height, 32) <= self.cap:
            return width, height
        scale = math.sqrt(self.cap * 32 * 32 / (width * height))
        across, down = width * scale / 32, height * scale / 32
        scale *= min(math.floor(across) / across, math.floor(down) / down)
        return _floored(width, height, scale)


@dataclass(frozen=True)
class ClaudePatches(ImageCost):
    """Claude: ceil(w/28) x ceil(h/28) visual tokens; an image whose long edge passes `long_edge`
    or whose patches pass `cap` is first scaled down, keeping its aspect, until both fit."""

    name: str
    long_edge: int
    cap: int

    def tokens(self, width: int, height: int) -> int:
        w, h = self.largest(width, height)
        return _cells(w, 28) * _cells(h, 28)

    def largest(self, width: int, height: int) -> Size:
        if max(width, height) <= self.long_edge and self._patches(width, height) <= self.cap:
            return width, height
        scale = min(
            self.long_edge / max(width, height), math.sqrt(self.cap * 784 / (width * height))
        )
        long = math.floor(max(width, height) * scale)
        while long > 1 and self._patches(*with_long_edge(width, height, long)) > self.cap:
            long -= 1  # the area estimate can leave a partial patch over the cap
        return with_long_edge(width, height, long)

    @staticmethod
    def _patches(width: int, height: int) -> int:
        return _cells(width, 28) * _cells(height, 28)


@dataclass(frozen=True)
class GeminiTiles(ImageCost):
    """Gemini 2.x: 258 tokens when both sides are at most 384 px; otherwise the image is cut into
    square crops of floor(shortest side / 1.5) px, each scaled to a 768 px tile of 258 tokens
    (Google's example: 960x540, crops of 360, 3x2 tiles). The ceil(w/768) x ceil(h/768) rule
    often quoted agrees at 1024x1024 (4 tiles) but counts 768x768 as one tile where this rule
    counts four: we keep Google's own, the larger."""

    name: str
    per_tile: int = 258

    def tokens(self, width: int, height: int) -> int:
        if width <= 384 and height <= 384:
            return self.per_tile
        unit = max(1, math.floor(min(width, height) / 1.5))
        return self.per_tile * _cells(width, unit) * _cells(height, unit)

    def largest(self, width: int, height: int) -> Size:
        short = min(width, height)
        if short <= 1152:  # its crops are at most 768 px: the tiles see every pixel
            return width, height
        return _floored(width, height, 1152 / short)


@dataclass(frozen=True)
class FixedCost(ImageCost):
    """The same count whatever the size: the model sees one square of `side` px (the image
    scaled to fit it and padded), or, with `side` None, a size its provider does not publish."""

    name: str
    count: int
    side: int | None

    def tokens(self, width: int, height: int) -> int:
        return self.count

    def largest(self, width: int, height: int) -> Size:
        if self.side is None:
            return width, height
        return with_long_edge(width, height, min(max(width, height), self.side))


# --- llama.cpp's libmtmd (llama-server, Ollama >= 0.30, LM Studio's GGUF engine) ---------------


@dataclass(frozen=True)
class SmartResize(ImageCost):
    """libmtmd's dynamic resolution ("smart resize"): each side rounded to a multiple of `align`
    (patch x merge), the whole scaled down to at most `max_tokens` (up to `min_tokens`) cells,
    one token per cell, plus `wrappers` text tokens; with `row_breaks` (Pixtral, Mistral Small)
    one [IMG_BREAK] after every row but the last."""

    name: str
    align: int
    min_tokens: int
    max_tokens: int
    wrappers: int
    row_breaks: bool = False

    def tokens(self, width: int, height: int) -> int:
        w, h = self._resized(width, height)
        cols, rows = w // self.align, h // self.align
        return cols * rows + (rows - 1 if self.row_breaks else 0) + self.wrappers

    def largest(self, width: int, height: int) -> Size:
        w, h = self._resized(width, height)
        return min(width, w), min(height, h)

    def _resized(self, width: int, height: int) -> Size:
        """llama.cpp's `calc_size_preserved_ratio(size, align, min_pixels, max_pixels)`."""
        f = self.align
        cell = f * f
        min_pixels, max_pixels = self.min_tokens * cell, self.max_tokens * cell
        h_bar = max(f, _round_half_away(_f32(height / f)) * f)
        w_bar = max(f, _round_half_away(_f32(width / f)) * f)
        if h_bar * w_bar > max_pixels:
            beta = _f32(math.sqrt(_f32(_f32(height * width) / max_pixels)))
            h_bar = max(f, math.floor(_f32(_f32(height / beta) / f)) * f)
            w_bar = max(f, math.floor(_f32(_f32(width / beta) / f)) * f)
        elif h_bar * w_bar < min_pixels:
            beta = _f32(math.sqrt(_f32(min_pixels / _f32(height * width))))
            h_bar = math.ceil(_f32(_f32(height * beta) / f)) * f
            w_bar = math.ceil(_f32(_f32(width * beta) / f)) * f
        return w_bar, h_bar


@dataclass(frozen=True)
class LlavaNext(ImageCost):
    """LLaVA 1.6 (llava_uhd with pinpoints): an image larger than `side` on either side is
    scaled into the best of the model's grid resolutions and cut into `side` px slices; the
    overview and each slice cost `per_image` tokens."""

    name: str
    side: int = 336
    per_image: int = 576
    grids: tuple[Size, ...] = ((336, 672), (672, 336), (672, 672), (1008, 336), (336, 1008))

    def tokens(self, width: int, height: int) -> int:
        if width <= self.side and height <= self.side:
            return self.per_image
        grid_w, grid_h = self._best(width, height)
        return self.per_image * (1 + _cells(grid_w, self.side) * _cells(grid_h, self.side))

    def largest(self, width: int, height: int) -> Size:
        if width <= self.side and height <= self.side:
            return width, height
        grid_w, grid_h = self._best(width, height)
        scale = min(grid_w / width, grid_h / height)
        return (width, height) if scale >= 1 else _floored(width, height, scale)

    def _best(self, width: int, height: int) -> Size:
        """llama.cpp's `select_best_resolution`: the most of the image's pixels kept, then the
        least padding."""
        best, kept_best, wasted_best = self.grids[0], 0, math.inf
        for grid_w, grid_h in self.grids:
            scale = min(_f32(grid_w / width), _f32(grid_h / height))
            fitted = int(_f32(width * scale)) * int(_f32(height * scale))
            kept = min(fitted, width * height)
            wasted = grid_w * grid_h - kept
            if kept > kept_best or (kept == kept_best and wasted < wasted_best):
                best, kept_best, wasted_best = (grid_w, grid_h), kept, wasted
        return best


@dataclass(frozen=True)
class MiniCpmSlices(ImageCost):
    """MiniCPM-V 2.6 and later (llava_uhd without pinpoints): an overview plus, when a side passes
    `side`, a grid of up to 9 slices chosen by area and aspect; each costs `per_slice` tokens and
    two wrappers (<image></image> or <slice></slice>), with a newline between grid rows."""

    name: str
    side: int = 448
    per_slice: int = 64
    max_slices: int = 9

    def tokens(self, width: int, height: int) -> int:
        each = self.per_slice + 2
        if width <= self.side and height <= self.side:
            return each
        cols, rows = self._grid(width, height)
        return each * (1 + cols * rows) + rows - 1

    def largest(self, width: int, height: int) -> Size:
        most = self.max_slices * self.side * self.side
        if width * height <= most:
            return width, height
        return _floored(width, height, math.sqrt(most / (width * height)))

    def _grid(self, width: int, height: int) -> Size:
        """llama.cpp's `get_best_grid`: of the grids of multiple-1, multiple and multiple+1
        slices (not 1, at most 9), the one closest to the image's aspect."""
        log_ratio = _f32(math.log(_f32(width / height)))
        multiple = min(math.ceil(_f32(_f32(width * height) / (self.side * self.side))), 9)
        best, error_best = (1, 1), math.inf
        for n in (multiple - 1, multiple, multiple + 1):
            if n == 1 or n > self.max_slices:
                continue
            for cols in range(1, n + 1):
                if n % cols == 0:
                    error = _f32(abs(log_ratio - math.log(cols / (n // cols))))
                    if error < error_best:
                        best, error_best = (cols, n // cols), error
        return best


@dataclass(frozen=True)
class Idefics3Tiles(ImageCost):
    """SmolVLM (Idefics3): the image is scaled, up or down, so its long edge is `longest_edge`,
    padded to whole `tile` px tiles, and sent as those tiles plus a global view, `per_tile`
    tokens each, with the row/column and global-image wrapper tokens."""

    name: str
    tile: int
    per_tile: int
    longest_edge: int

    def tokens(self, width: int, height: int) -> int:
        scale = min(_f32(self.longest_edge / width), _f32(self.longest_edge / height))
        cols = math.ceil(_f32(_f32(width * scale) / self.tile))
        rows = math.ceil(_f32(_f32(height * scale) / self.tile))
        tiles = cols * rows
        # each tile: <fake_token_around_image><row_i_col_j>; a newline between rows; the global
        # view: \n\n <fake_token_around_image><global-img> ... <fake_token_around_image>
        return self.per_tile * (tiles + 1) + 2 * tiles + (rows - 1) + 4

    def largest(self, width: int, height: int) -> Size:
        return with_long_edge(width, height, min(max(width, height), self.longest_edge))


# --- sizes --------------------------------------------------------------------------------------


def with_long_edge(width: int, height: int, long: int) -> Size:
    """The image's aspect with this long edge (the short side rounded to the nearest pixel)."""
    if width >= height:
        return long, max(1, (2 * height * long + width) // (2 * width))
    return max(1, (2 * width * long + height) // (2 * height)), long


def _floored(width: int, height: int, scale: float) -> Size:
    """The size times `scale`, each side floored (past float noise), at least 1 px, never more
    than the image."""
    w = min(width, max(1, math.floor(width * scale + 1e-9)))
    return w, min(height, max(1, math.floor(height * scale + 1e-9)))


def _cells(length: int, size: int) -> int:
    return -(-length // size)


def _f32(x: float) -> float:
    """`x` rounded to float32, as llama.cpp's `float` arithmetic rounds each step (one IEEE
    operation done in float64 and rounded once to float32 is the float32 result)."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _round_half_away(x: float) -> int:
    """C's `std::round` for x >= 0 (halves away from zero; Python's `round` goes to even)."""
    return math.floor(x + 0.5)
