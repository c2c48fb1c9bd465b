"""What a ComfyUI output costs each vision model, sent whole and fitted to 4K, 8K, 32K windows.

    .venv/bin/python bench/image_costs.py [--size 1024x1024] [--windows 4096,8192,32768] [--quick]

For each model, what the image counted before issue 25 (gpt-4o's tiles for every model), and
the image counted as its provider counts it (core/tokens/image_costs.py): sent
whole (at the size the provider itself reduces it to, `largest`), and fitted with `fit` to the
image budget of each window, `image_budget(window, whole)`: 20% of the window, capped at what
the whole image costs (a 32K window sends it at the provider's own size). Beside it, the tokens
left for everything else: the window less the answer's reserve and the safety margin, by the
project's own rule (`compute_budget`: reserve 20% of the window within 512..8192, margin 3%, at
least 64), less the image. A model whose image does not fit even at a 224 px long edge gets
"words only" (the image is described, not sent).

TARGET (a guard): at 4K every model's fitted image leaves at least half the window for the
rest, or is refused. Arithmetic, not timing: the bench exits 1 when the TARGET fails.
`--quick` (what CI runs) is the same run: it takes milliseconds.
"""

from __future__ import annotations

import argparse
import sys

from comfyui_assistant.core.provider.budget import Window, compute_budget
from comfyui_assistant.core.tokens.image_costs import (
    OPENAI_TILES,
    fit,
    image_budget,
    image_cost_for,
)

# The models the issue names, then one of each other family we count.
MODELS = (
    "gpt-4o",
    "gpt-4.1-mini",
    "gpt-5-mini",
    "claude-sonnet-4-5",
    "gemini-2.5-flash",
    "gemini-3-pro-preview",
    "gemma3:4b",
    "qwen2.5vl:7b",
    "llava-v1.5-7b",
    "pixtral-12b",
    "qwen3-vl:8b",
    "mistral-small3.1",
    "minicpm-v",
    "llava:7b",
    "smolvlm",
)
TARGET_WINDOW = 4096


def room(window: int) -> int:
    """Tokens a window leaves for the conversation: less the answer's reserve and the margin."""
    return compute_budget(Window(window, "bench", "bench"), None, 0).available


def cell(size: tuple[int, int], tokens: int, left: int | None = None) -> str:
    text = f"{size[0]}x{size[1]} {tokens:,}"
    return text if left is None else f"{text}, {left:,} left"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="1024x1024", help="the image, WIDTHxHEIGHT")
    parser.add_argument("--windows", default="4096,8192,32768")
    parser.add_argument("--quick", action="store_true", help="the same run: it takes milliseconds")
    args = parser.parse_args()
    width, height = (int(side) for side in args.size.lower().split("x"))
    windows = [int(w) for w in args.windows.split(",")]

    print(f"a {width}x{height} image; left = window - reserve - margin - image")
    for window in windows:
        print(f"  {window:,}: {room(window):,} for the conversation, image budget up to "
              f"{image_budget(window):,}")  # fmt: skip
    # "before": how every image was counted before issue 25 (gpt-4o's tiles, whatever the model)
    head = ["model", "counted as", "before", "whole"] + [f"{w:,} window" for w in windows]
    rows = [head]
    worst: list[tuple[str, int | None]] = []  # (model, left at the target window or None)
    for model in MODELS:
        cost = image_cost_for(model)
        top = cost.largest(width, height)
        whole = cost.tokens(*top)
        row = [model, cost.name, f"{OPENAI_TILES.tokens(width, height):,}", cell(top, whole)]
        for window in windows:
            got = fit(cost, width, height, image_budget(window, whole))
            if got is None:
                row.append(f"words only, {room(window):,} left")
                left = None
            else:
                left = room(window) - got[2]
                row.append(cell(got[:2], got[2], left))
            if window == TARGET_WINDOW:
                worst.append((model, left))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print(" | ".join(text.ljust(size) for text, size in zip(r, widths, strict=True)).rstrip())

    if TARGET_WINDOW not in windows:
        print(f"TARGET window={TARGET_WINDOW} not measured (add it to --windows)")
        return 0
    half = TARGET_WINDOW // 2
    short = [model for model, left in worst if left is not None and left < half]
    refused = [model for model, left in worst if left is None]
    least = min((left for _, left in worst if left is not None), default=None)
    verdict = "FAIL" if short else "PASS"
    print(
        f"TARGET window={TARGET_WINDOW} image_leaves_half_or_words_only: "
        f"{len(worst) - len(short)}/{len(worst)} models "
        f"(least left {least or 0:,}, guard >= {half:,}; "
        f"words only: {', '.join(refused) or 'none'}"
        f"{'; short: ' + ', '.join(short) if short else ''}): {verdict}"
    )
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
