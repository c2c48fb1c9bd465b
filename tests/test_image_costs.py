"""Image costs as each provider counts them (issue 25): the documented worked examples, which
family a model name picks, and `fit`: the largest size within a token budget, exactly."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from comfyui_assistant.core.tokens import tokens
from comfyui_assistant.core.tokens.image_costs import (
    _FAMILIES,
    MIN_LONG_EDGE,
    OPENAI_TILES,
    ImageCost,
    fit,
    image_budget,
    image_cost_for,
)
from comfyui_assistant.core.tokens.image_families import with_long_edge
from comfyui_assistant.core.tokens.token_images import image_tokens
from comfyui_assistant.core.tokens.tokens import MESSAGE_OVERHEAD, counter_for
from hypothesis import given, settings
from hypothesis import strategies as st

from .comfy_images import comfy_png

COSTS = sorted({cost for _, cost in _FAMILIES} | {OPENAI_TILES}, key=lambda c: c.name)


def cost(model: str) -> ImageCost:
    return image_cost_for(model)


# --- the documented worked examples -------------------------------------------------------------


def test_openai_tiles_gpt_4o() -> None:
    gpt_4o = cost("gpt-4o")
    assert gpt_4o.tokens(1024, 1024) == 85 + 170 * 4 == 765  # 768x768: 2x2 tiles
    assert gpt_4o.largest(1024, 1024) == (768, 768)
    assert gpt_4o.tokens(4096, 2048) == 85 + 170 * 6  # 2048x1024, then 1536x768: 3x2
    assert gpt_4o.tokens_with_detail(4096, 2048, "low") == 85
    assert gpt_4o.tokens(512, 512) == 255  # one tile, never scaled up


def test_openai_patches_gpt_4_1_mini_docs_example() -> None:
    mini = cost("gpt-4.1-mini")
    # 1800x2400 is 57x75 = 4275 patches > 1536: scaled by 0.603, then to whole patches across:
    # 1056x1408, 33x44 = 1452 patches, x1.62 = 2352.24, rounded up
    assert mini.largest(1800, 2400) == (1056, 1408)
    assert mini.tokens(1800, 2400) == 2353
    assert mini.tokens(1024, 1024) == -(-32 * 32 * 162 // 100) == 1659
    assert mini.tokens_with_detail(1024, 1024, "low") == 1659  # "low" changes nothing here
    assert cost("gpt-5-mini").tokens(1024, 1024) == 1229  # measured x1.2, not the docs' x1.62


def test_claude_28_px_patches_and_its_resize() -> None:
    claude = cost("claude-sonnet-4-5")
    assert claude.tokens(1092, 1092) == 39 * 39 == 1521  # the docs' largest 1:1, not resized
    assert claude.largest(1092, 1092) == (1092, 1092)
    assert claude.tokens(784, 1568) == 28 * 56 == 1568  # the docs' largest 1:2
    assert claude.largest(2000, 1000) == (1568, 784)  # long edge 1568
    assert claude.tokens(2000, 1000) == 56 * 28
    assert claude.largest(1120, 1120) == (1092, 1092)  # 40x40 patches would pass the cap
    assert claude.tokens(8000, 8000) == 1521
    opus = cost("claude-opus-4-7")
    assert opus.tokens(2576, 1456) == 92 * 52 == 4784  # 2576 px long edge
    assert opus.largest(5152, 2912) == (2576, 1456)


def test_gemini_tiles_and_gemini_3() -> None:
    gemini = cost("gemini-2.5-flash")
    assert gemini.tokens(384, 384) == 258
    assert gemini.tokens(1024, 1024) == 4 * 258  # crop unit 682: 2x2 tiles
    assert gemini.tokens(960, 540) == 6 * 258  # Google's example: crop unit 360, 3x2
    assert gemini.largest(4000, 3000) == (1536, 1152)  # crops of 768 px: each tile whole
    assert cost("gemini-3-pro-preview").tokens(1024, 1024) == 1120
    assert cost("gemini-3-flash").tokens(64, 64) == 1120


@pytest.mark.parametrize("size", [(64, 64), (896, 896), (1024, 1024), (4000, 3000)])
def test_fixed_size_families_cost_the_same_at_any_size(size: tuple[int, int]) -> None:
    assert cost("gemma3:4b").tokens(*size) == 256 + 2  # <start_of_image> ... <end_of_image>
    assert cost("llava-v1.5-7b").tokens(*size) == 576  # (336/14)^2, no wrappers
    assert cost("gemma3:4b").largest(4000, 3000) == (896, 672)
    assert cost("llava-v1.5-7b").largest(4000, 3000) == (336, 252)


def test_qwen_vl_smart_resize() -> None:
    qwen = cost("qwen2.5-vl-7b")
    assert qwen.tokens(1024, 1024) == 37 * 37 + 2 == 1371  # 1036x1036; vision_start/end
    assert qwen.tokens(512, 512) == 18 * 18 + 2
    assert qwen.tokens(1920, 1080) == 69 * 39 + 2
    assert qwen.largest(4000, 3000) == (2044, 1540)  # scaled to at most 4096 cells of 28 px
    assert qwen.tokens(4000, 3000) == 73 * 55 + 2 <= 4096 + 2
    assert qwen.tokens(100_000, 75_000) <= 4096 + 2
    assert qwen.tokens(20, 20) == 3 * 3 + 2  # scaled up past 8 cells (84x84)
    assert cost("Qwen3-VL-8B").tokens(1024, 1024) == 32 * 32 + 2  # 32 px cells


def test_pixtral_and_mistral_small_count_row_breaks() -> None:
    # at most 1024 cells: 1024x1024 -> 512x512, 32 rows of 32, 31 [IMG_BREAK], [IMG_END]
    assert cost("pixtral-12b").tokens(1024, 1024) == 32 * 32 + 31 + 1
    assert cost("pixtral-12b").largest(1024, 1024) == (512, 512)
    assert cost("mistral-small-3.1").tokens(1024, 1024) == 32 * 32 + 31 + 1  # 896: 28 px cells


def test_sliced_families() -> None:
    llava_next = cost("llava:7b")  # Ollama's llava is LLaVA 1.6
    assert llava_next.tokens(336, 336) == 576
    assert llava_next.tokens(1024, 1024) == 576 * (1 + 4)  # overview + 2x2 slices of 672x672
    assert llava_next.largest(1024, 1024) == (672, 672)
    minicpm = cost("minicpm-v")
    assert minicpm.tokens(448, 448) == 64 + 2
    assert minicpm.tokens(1024, 1024) == 66 * (1 + 6) + 2  # a 2x3 grid, newlines between rows
    smol = cost("SmolVLM-256M-Instruct")
    assert smol.tokens(1024, 1024) == smol.tokens(300, 300)  # scaled to 2048 whatever the size


# --- which family a model name picks ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("gpt-4o", "openai-tiles 85/170"),
        ("openai/gpt-4o-2024-08-06", "openai-tiles 85/170"),
        ("gpt-4.1", "openai-tiles 85/170"),
        ("gpt-4.5-preview", "openai-tiles 85/170"),
        ("gpt-4o-mini", "openai-tiles 2833/5667"),
        ("o1", "openai-tiles 75/150"),
        ("o3-2025-04-16", "openai-tiles 75/150"),
        ("gpt-5", "openai-tiles 70/140"),
        ("gpt-5.1", "openai-tiles 70/140"),
        ("gpt-4.1-mini", "openai-patches 1536x1.62"),
        ("gpt-4.1-nano", "openai-patches 1536x2.46"),
        ("o4-mini", "openai-patches 1536x1.72"),
        ("gpt-5-mini", "openai-patches 1536x1.2"),
        ("gpt-5-nano", "openai-patches 1536x1.5"),
        ("gpt-5.2", "openai-patches 1536x1.2"),
        ("gpt-5.4", "openai-patches 2500x1.2"),
        ("gpt-5.4-mini", "openai-patches 1536x1.2"),
        ("claude-sonnet-4-5-20250929", "claude 1568px"),
        ("claude-3-5-sonnet-20241022", "claude 1568px"),
        ("anthropic/claude-opus-4-7", "claude 2576px"),
        ("gemini-2.5-flash", "gemini-2 tiles 258"),
        ("gemini-1.5-pro", "gemini-2 tiles 258"),
        ("google/gemini-3-pro-preview", "gemini-3 1120"),
        ("gemma-3-4b-it-Q4_K_M.gguf", "gemma-3"),
        ("gemma3:4b", "gemma-3"),
        ("google/gemma-3-27b", "gemma-3"),
        ("gemma3n:e4b", "gemma-3n"),
        ("qwen2.5-vl-7b", "qwen2.5-vl"),
        ("qwen2.5vl:7b", "qwen2.5-vl"),
        ("Qwen2.5-VL-7B-Instruct-Q4_K_M.gguf", "qwen2.5-vl"),
        ("qwen2-vl-7b-instruct", "qwen2.5-vl"),
        ("Qwen3-VL-8B", "qwen3-vl"),
        ("qwen3-vl:8b", "qwen3-vl"),
        ("llava-v1.5", "llava-1.5"),
        ("llava:7b-v1.5-q4_0", "llava-1.5"),
        ("llava-llama3", "llava-1.5"),
        ("llava:7b", "llava-1.6"),
        ("llava-v1.6-mistral-7b", "llava-1.6"),
        ("pixtral-12b", "pixtral"),
        ("mistral-small-3.1", "mistral-small-3"),
        ("mistral-small3.2:24b", "mistral-small-3"),
        ("Mistral-Small-3.1-24B-Instruct-2503-Q4_K_M.gguf", "mistral-small-3"),
        ("minicpm-v", "minicpm-v"),
        ("MiniCPM-V-2_6-Q4_K_M.gguf", "minicpm-v"),
        ("smolvlm", "smolvlm-2.2b"),
        ("SmolVLM2-2.2B-Instruct", "smolvlm-2.2b"),
        ("SmolVLM-500M-Instruct", "smolvlm-256m/500m"),
    ],
)
def test_model_names_pick_their_family(model: str, name: str) -> None:
    assert image_cost_for(model).name == name


@pytest.mark.parametrize("model", [None, "", "llama3.1:8b", "o3-mini", "o1-mini", "mystery-vl"])
def test_an_unknown_or_imageless_model_counts_as_openai_tiles(model: str | None) -> None:
    assert image_cost_for(model) is OPENAI_TILES


# --- fit ------------------------------------------------------------------------------------------


def check_fit(image_cost: ImageCost, width: int, height: int, budget: int) -> None:
    """`fit`'s promise for one image and budget, checked against `tokens` itself."""
    top_w, top_h = image_cost.largest(width, height)
    assert top_w <= width and top_h <= height
    assert image_cost.tokens(top_w, top_h) <= image_cost.tokens(width, height)
    top = max(top_w, top_h)
    got = fit(image_cost, width, height, budget)
    floor = min(MIN_LONG_EDGE, max(width, height))
    if got is None:
        smallest = with_long_edge(width, height, floor)
        assert image_cost.tokens(*smallest) > budget or floor > top
        return
    w, h, tokens = got
    assert tokens == image_cost.tokens(w, h) <= budget
    assert (w, h) == with_long_edge(width, height, max(w, h))  # the image's aspect
    assert floor <= max(w, h) <= top and w <= width and h <= height
    bigger = with_long_edge(width, height, max(w, h) + 1)
    assert max(bigger) > top or image_cost.tokens(*bigger) > budget, (
        f"{image_cost.name}: {bigger} also fits {budget}"
    )


sizes = st.integers(min_value=16, max_value=5000)


@pytest.mark.parametrize("image_cost", COSTS, ids=lambda c: c.name)
@settings(max_examples=40, deadline=None)
@given(width=sizes, height=sizes, budget=st.integers(min_value=1, max_value=8000))
def test_fit_is_exact_for_every_family(
    image_cost: ImageCost, width: int, height: int, budget: int
) -> None:
    check_fit(image_cost, width, height, budget)


COMFY_SIZES = [(1024, 1024), (832, 1216), (1216, 832), (1920, 1080), (512, 512), (4000, 3000)]


@pytest.mark.parametrize("image_cost", COSTS, ids=lambda c: c.name)
def test_fit_grows_with_the_budget(image_cost: ImageCost) -> None:
    for width, height in COMFY_SIZES:
        last = 0  # the long edge fitted at the previous (smaller) budget; 0: none yet
        for budget in (64, 200, 258, 500, 819, 1000, 1638, 2500, 4096, 6553):
            check_fit(image_cost, width, height, budget)
            got = fit(image_cost, width, height, budget)
            long = 0 if got is None else max(got[0], got[1])
            assert long >= last, (image_cost.name, width, height, budget)
            last = long
        # a budget of what the provider's own size costs sends the image at that size
        top = with_long_edge(width, height, max(image_cost.largest(width, height)))
        whole = image_cost.tokens(*top)
        assert fit(image_cost, width, height, whole) == (*top, whole)


def test_fit_examples() -> None:
    assert fit(cost("gemma3:4b"), 1024, 1024, 200) is None  # 258 at any size
    assert fit(cost("gemma3:4b"), 1024, 1024, 258) == (896, 896, 258)
    assert fit(cost("gpt-4o"), 1024, 1024, 300) == (512, 512, 255)  # one tile
    assert fit(cost("gemini-2.5-flash"), 1024, 1024, 819) == (384, 384, 258)
    assert fit(cost("claude-sonnet-4-5"), 1024, 1024, 819) == (784, 784, 784)
    qwen = fit(cost("qwen2.5vl:7b"), 1024, 1024, 819)
    assert qwen is not None and qwen[2] <= 819
    assert fit(cost("qwen2.5vl:7b"), 100, 60, 9) is None  # 8 cells + 2 at the least
    assert fit(cost("qwen2.5vl:7b"), 100, 60, 10) == (100, 60, 10)  # seen as 112x56
    assert fit(cost("pixtral-12b"), 216, 17, 15) == (216, 17, 15)  # seen as 224x16
    assert fit(cost("gpt-4o"), 0, 10, 1000) is None


def test_image_budget() -> None:
    assert image_budget(4096) == 819
    assert image_budget(8192) == 1638
    assert image_budget(32768) == 6553
    assert image_budget(32768, whole=765) == 765  # more than the whole image buys nothing
    assert image_budget(4096, whole=765) == 765
    assert image_budget(4096, whole=1371) == 819


# --- the counter counts an image_url part as the model's provider does ---------------------------


MODELS = ("gpt-4o", "qwen2.5vl:7b", "gemma3:4b")


@pytest.fixture
def fresh_counters() -> Iterator[None]:
    tokens._counter.cache_clear()
    yield
    tokens._counter.cache_clear()


def image_message(width: int, height: int, detail: str | None = None) -> dict[str, Any]:
    url = "data:image/png;base64," + base64.b64encode(comfy_png(size=(width, height))).decode()
    image: dict[str, Any] = {"url": url} if detail is None else {"url": url, "detail": detail}
    return {"role": "user", "content": [{"type": "image_url", "image_url": image}]}


@pytest.mark.usefixtures("fresh_counters")
def test_the_counter_counts_an_image_as_the_models_provider_does() -> None:
    m = image_message(1024, 1024)  # a ComfyUI output, as the panel attaches it
    base = MESSAGE_OVERHEAD + counter_for(None).text("user")
    counted = {model: counter_for(model).message(m) - base for model in MODELS}
    assert counted == {"gpt-4o": 765, "qwen2.5vl:7b": 37 * 37 + 2, "gemma3:4b": 256 + 2}
    # each count from its own cache: asking again in another order changes nothing
    for model in reversed(MODELS):
        assert counter_for(model).message(m) - base == counted[model]
    assert counter_for("gpt-4o").message(image_message(1024, 1024, "low")) - base == 85
    assert counter_for("qwen2.5vl:7b").message(image_message(1024, 1024, "low")) - base == 1371


@pytest.mark.usefixtures("fresh_counters")
def test_counters_share_an_encodings_text_caches_but_not_their_message_caches() -> None:
    gpt, qwen, gemma = (counter_for(model) for model in MODELS)
    assert qwen is counter_for("Qwen2.5-VL-7B-Instruct-Q4_K_M.gguf")  # one per family
    assert qwen is not gemma and qwen.encoding == gemma.encoding == "cl100k_base"
    assert qwen._short is gemma._short and qwen._texts is gemma._texts
    assert qwen._cache is not gemma._cache
    assert gpt.images is OPENAI_TILES and qwen.images.name == "qwen2.5-vl"
    assert counter_for("llama3.1:8b") is counter_for(None)  # unknown: OpenAI's tiles


def test_image_tokens_takes_the_cost() -> None:
    url = image_message(1024, 1024)["content"][0]["image_url"]["url"]
    assert image_tokens(url) == image_tokens(url, "high") == 765
    assert image_tokens(url, "low") == 85
    assert image_tokens(url, "auto", image_cost_for("gemma3:4b")) == 258
    assert image_tokens("https://x.test/cat.png", "auto", image_cost_for("qwen2.5vl:7b")) == 1371
