"""What an image costs a model's window, counted as its provider counts it, and the size that
fits a token budget.

- `image_cost_for(model)`: the `ImageCost` of the model's provider or local family, from its name
  as OpenAI, Anthropic, Google, llama.cpp, Ollama and LM Studio spell it.
- `fit(cost, width, height, budget)`: the largest size of the image, aspect kept, that costs at
  most `budget` tokens (and no more than the provider itself would use), or None.
- `image_budget(window)`: the share of a window one image may take.

Sources (research notes of issue 25; H = read in the provider's docs or the server's source,
M = official docs seen through a copy or consistent secondary sources, L = one secondary
source): OpenAI "Images and vision", Calculating costs (tile and patch families, H/M; patch
multipliers measured against the API where they differ from the docs, M); Anthropic "Vision"
(28 px patches, 1568 px long edge, about 1,600 tokens at most; Opus 4.7: 2576 px, L/M);
Google "Image understanding", Token calculation (Gemini 2.x crops, 258 tokens each, M) and
"Media resolution" (Gemini 3: 1120 tokens per image by default, M); llama.cpp tools/mtmd
(mtmd.cpp, mtmd-image.cpp, clip.cpp: each family's preprocessor, limits and wrapper tokens, H).
Ollama 0.30 and later runs llama-server, so its models count as llama.cpp's; LM Studio scales an
image to a 1024 px long edge before its engine sees it, which can only make it cheaper than the
llama.cpp count used here.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .image_families import (
    ClaudePatches,
    FixedCost,
    GeminiTiles,
    Idefics3Tiles,
    ImageCost,
    LlavaNext,
    MiniCpmSlices,
    OpenAIPatches,
    OpenAITiles,
    SmartResize,
    with_long_edge,
)

__all__ = [
    "IMAGE_SHARE",
    "MIN_LONG_EDGE",
    "OPENAI_TILES",
    "ImageCost",
    "fit",
    "image_budget",
    "image_cost_for",
]

OPENAI_TILES = OpenAITiles("openai-tiles 85/170", 85, 170)
"""gpt-4o's formula, and the one for a model we do not recognise (see `image_cost_for`)."""

IMAGE_SHARE = 0.20
"""The share of the window one image may take (`image_budget`)."""

MIN_LONG_EDGE = 224
"""The smallest image `fit` offers, by its long edge: CLIP's input size, about where a vision
encoder still makes out a scene (Anthropic warns that quality drops under 200 px)."""

# First match wins; searched in the lowercased name after its last "/" (router and publisher
# prefixes: "openai/gpt-4o", "lmstudio-community/gemma-3-4b-it-GGUF").
_FAMILIES: tuple[tuple[str, ImageCost], ...] = (
    # OpenAI. gpt-4o-mini bills (and reports in usage) inflated tile counts.
    (r"gpt-4o-mini", OpenAITiles("openai-tiles 2833/5667", 2833, 5667)),
    (r"gpt-4\.1-mini", OpenAIPatches("openai-patches 1536x1.62", 1536, 162)),
    (r"gpt-4\.1-nano", OpenAIPatches("openai-patches 1536x2.46", 1536, 246)),
    (r"^(o4-mini|codex-mini)", OpenAIPatches("openai-patches 1536x1.72", 1536, 172)),
    # gpt-5-mini and -nano: the docs say x1.62 and x2.46; the pricing calculator and API usage
    # show x1.2 (1024x1024 -> 1229) and x1.5 (1536 patches -> 2304) (community.openai.com
    # t/1344040, openai-python #2851): we count what the API counts.
    (r"gpt-5-mini", OpenAIPatches("openai-patches 1536x1.2", 1536, 120)),
    (r"gpt-5-nano", OpenAIPatches("openai-patches 1536x1.5", 1536, 150)),
    # gpt-5.2 and later: the calculator says x1.0, API users report x1.2; 5.4 and 5.5 allow 2500
    # patches at "high" (their -mini/-nano keep 1536). The larger count (L/M).
    (r"gpt-5\.\d+-(mini|nano)", OpenAIPatches("openai-patches 1536x1.2", 1536, 120)),
    (r"gpt-5\.[23]", OpenAIPatches("openai-patches 1536x1.2", 1536, 120)),
    (r"gpt-5\.([4-9]|\d\d)", OpenAIPatches("openai-patches 2500x1.2", 2500, 120)),
    (r"gpt-5", OpenAITiles("openai-tiles 70/140", 70, 140)),
    # o1 and o3 with vision (o1-mini, o1-preview and o3-mini take no images)
    (r"^o[13](?:$|-(?!mini|preview))", OpenAITiles("openai-tiles 75/150", 75, 150)),
    (r"gpt-4o|gpt-4\.[15]|gpt-4-(turbo|vision)", OPENAI_TILES),
    # Anthropic: Opus 4.7 and later read 2576 px (16:9 at most 92x52 = 4784 patches)
    (
        r"claude-opus-4[-.][7-9](?!\d)|claude-(opus|sonnet|haiku)-([5-9]|[1-9]\d)(?!\d)",
        ClaudePatches("claude 2576px", 2576, 4784),
    ),
    # older: 1568 px and at most 1568 patches (the docs' no-resize sizes, 1092x1092 to 784x1568)
    (r"claude", ClaudePatches("claude 1568px", 1568, 1568)),
    # Google (Gemini 3 counts at most 1120 per image by default: counted as 1120 at any size)
    (r"gemini-3", FixedCost("gemini-3 1120", 1120, None)),
    (r"gemini", GeminiTiles("gemini-2 tiles 258")),
    # llama.cpp families (as llama-server, Ollama and LM Studio name their models)
    (r"gemma-?3n", FixedCost("gemma-3n", 256 + 2, 768)),  # <start_of_image> ... <end_of_image>
    (r"gemma-?3", FixedCost("gemma-3", 256 + 2, 896)),
    (
        r"qwen-?3-?vl",
        SmartResize("qwen3-vl", 32, 8, 4096, 2),
    ),  # <|vision_start|> ... <|vision_end|>
    (r"qwen-?2(\.5)?-?vl", SmartResize("qwen2.5-vl", 28, 8, 4096, 2)),
    (r"llava.*v1[.-]5|llava-(llama|phi)|bakllava", FixedCost("llava-1.5", 576, 336)),
    (r"llava", LlavaNext("llava-1.6")),  # Ollama's llava:7b/13b/34b are LLaVA 1.6
    (r"pixtral", SmartResize("pixtral", 16, 8, 1024, 1, row_breaks=True)),  # ... [IMG_END]
    (r"mistral-?small-?3[.-]?[12]", SmartResize("mistral-small-3", 28, 8, 1024, 1, True)),
    (r"minicpm-?[vo]", MiniCpmSlices("minicpm-v")),
    # SmolVLM: per-model tile sizes from the HF configs (L)
    (r"smolvlm.*(256m|500m)", Idefics3Tiles("smolvlm-256m/500m", 512, 64, 2048)),
    (r"smolvlm", Idefics3Tiles("smolvlm-2.2b", 384, 81, 1536)),
)
_TABLE = tuple((re.compile(pattern), cost) for pattern, cost in _FAMILIES)


@lru_cache(maxsize=64)
def image_cost_for(model: str | None) -> ImageCost:
    """How the model's provider counts an image, from the model's name.

    A model we do not recognise is counted with OpenAI's tile formula (gpt-4o's, what this
    project counted every image with before): most unknown names are served behind an
    OpenAI-compatible API, the formula is that API's reference, it is bounded (at most 1,445 at
    any size), and the learned `Correction` absorbs the difference on the provider's reported
    usage. It under-counts families that take more (a Qwen-VL image may take 4,096): add such a
    family to `_FAMILIES` when it shows up."""
    name = (model or "").strip().lower().rsplit("/", 1)[-1].removeprefix("ft:")
    for pattern, cost in _TABLE:
        if name and pattern.search(name):
            return cost
    return OPENAI_TILES


def fit(cost: ImageCost, width: int, height: int, budget: int) -> tuple[int, int, int] | None:
    """(width, height, tokens): the largest size with the image's aspect, its long edge no longer
    than that of the provider's own size (`cost.largest`), that `cost` counts at most `budget`
    tokens; None when even a `MIN_LONG_EDGE` px long edge (or the image itself, if smaller)
    costs more. (Only the long edge is capped: a provider that rounds sides to its patch size,
    Qwen's 216x17 -> 224x16, would otherwise leave no size with the image's aspect.)

    Exact, not estimated: sizes are tried from the largest down, one pixel of long edge at a
    time, each counted with `cost.tokens` (some counts, Gemini's, do not shrink steadily with
    the size, so a bisection could miss the answer); a larger budget never gives a smaller size."""
    if width <= 0 or height <= 0:
        return None
    top = max(cost.largest(width, height))
    floor = min(MIN_LONG_EDGE, max(width, height))
    for long in range(top, floor - 1, -1):
        w, h = with_long_edge(width, height, long)
        tokens = cost.tokens(w, h)
        if tokens <= budget:
            return w, h, tokens
    return None


def image_budget(window: int, whole: int | None = None) -> int:
    """Tokens one image may take in a window: `IMAGE_SHARE` of it, capped at `whole` (what the
    image costs at the size the provider itself uses: a budget past it buys nothing)."""
    share = int(window * IMAGE_SHARE)
    return share if whole is None else min(share, whole)
