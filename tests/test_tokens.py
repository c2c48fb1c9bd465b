"""Token counting: exact cl100k counts for messages, tools and overheads; the cache; images;
the content-aware estimate; the learned correction; the fallback when tiktoken can't load."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from comfyui_assistant.core.tokens import token_encoding, tokens
from comfyui_assistant.core.tokens.token_correction import Factors, Parts
from comfyui_assistant.core.tokens.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TOOL_CALL_OVERHEAD,
    TOOL_OVERHEAD,
    TOOLS_OVERHEAD,
    Correction,
    TokenCounter,
    counter_for,
    encoding_for_model,
    estimate_tokens,
    image_size,
    image_tokens,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ENC = token_encoding.shipped_cl100k()


def n(text: str) -> int:
    return len(ENC.encode_ordinary(text))


@pytest.fixture(autouse=True)
def _fresh_shared_counters() -> Iterator[None]:
    tokens._counter.cache_clear()
    yield
    tokens._counter.cache_clear()


@pytest.fixture
def counter() -> TokenCounter:
    return TokenCounter("cl100k_base")


def counting_calls(monkeypatch: pytest.MonkeyPatch, counter: TokenCounter) -> list[str]:
    """Record every string the counter tokenizes."""
    calls: list[str] = []
    real = counter.text

    def text(s: str) -> int:
        calls.append(s)
        return real(s)

    monkeypatch.setattr(counter, "text", text)
    return calls


# --- samples for the estimate (written for this test; the JSON is copied from ComfyUI 0.3.64's
# /api/object_info, the workflow is ComfyUI's default graph in its saved format) ---------------

PROSE = """\
The assistant lives in the bottom panel of ComfyUI. You describe what you want in plain words, \
and it reads the graph, looks up the nodes that are installed on your machine, and proposes a \
change. Nothing happens behind your back: every edit it makes can be undone with a single \
keystroke, and it explains what it did and why.

Long conversations are where most chat tools quietly fall apart. The model forgets the first \
half of the discussion, or the request grows until the server refuses it. We count every token \
that is sent, keep the recent turns whole, and fold older tool results into short digests that \
still carry an identifier, so the model can ask for the full text again when it needs it.

Local models deserve the same care as hosted ones. A small model running on a laptop has a \
narrow window and a slow prompt phase, so we keep the beginning of every request identical from \
one turn to the next. The server can then reuse its cache instead of reading the whole history \
again, and the answer starts in a fraction of a second rather than after a long pause.
"""

CODE = '''\
def topological_order(nodes: dict[int, dict], links: list[list]) -> list[int]:
    """Return node ids so that every node comes after the nodes it reads from."""
    incoming: dict[int, set[int]] = {node_id: set() for node_id in nodes}
    for link_id, src, _src_slot, dst, _dst_slot, _kind in links:
        if src in nodes and dst in nodes:
            incoming[dst].add(src)
    ready = sorted(n for n, deps in incoming.items() if not deps)
    order: list[int] = []
    while ready:
        current = ready.pop(0)
        order.append(current)
        for other, deps in incoming.items():
            if current in deps:
                deps.discard(current)
                if not deps and other not in order and other not in ready:
                    ready.append(other)
        ready.sort()
    if len(order) != len(nodes):
        cycle = [n for n in nodes if n not in order]
        raise ValueError(f"the graph has a cycle through nodes {cycle}")
    return order


class LinkIndex:
    def __init__(self, links: list[list]) -> None:
        self.by_target = {(l[3], l[4]): l for l in links}
        self.by_source: dict[int, list[list]] = {}
        for link in links:
            self.by_source.setdefault(link[1], []).append(link)

    def inputs_of(self, node_id: int) -> list[tuple[int, int]]:
        return sorted((slot, l[1]) for (dst, slot), l in self.by_target.items() if dst == node_id)
'''

JSON = (
    '{"CLIPTextEncode": {"input": {"required": {"text": ["STRING", {"multiline": true, '
    '"dynamicPrompts": true, "tooltip": "The text to be encoded."}], "clip": ["CLIP", '
    '{"tooltip": "The CLIP model used for encoding the text."}]}}, "input_order": {"required": '
    '["text", "clip"]}, "output": ["CONDITIONING"], "output_is_list": [false], "output_name": '
    '["CONDITIONING"], "name": "CLIPTextEncode", "display_name": "CLIP Text Encode (Prompt)", '
    '"description": "Encodes a text prompt using a CLIP model into an embedding that can be used '
    'to guide the diffusion model towards generating specific images.", "python_module": '
    '"nodes", "category": "conditioning", "output_node": false, "output_tooltips": ["A '
    'conditioning containing the embedded text used to guide the diffusion model."]}, '
    '"EmptyLatentImage": {"input": {"required": {"width": ["INT", {"default": 512, "min": 16, '
    '"max": 16384, "step": 8, "tooltip": "The width of the latent images in pixels."}], '
    '"height": ["INT", {"default": 512, "min": 16, "max": 16384, "step": 8, "tooltip": "The '
    'height of the latent images in pixels."}], "batch_size": ["INT", {"default": 1, "min": 1, '
    '"max": 4096, "tooltip": "The number of latent images in the batch."}]}}, "input_order": '
    '{"required": ["width", "height", "batch_size"]}, "output": ["LATENT"], "output_is_list": '
    '[false], "output_name": ["LATENT"], "name": "EmptyLatentImage", "display_name": "Empty '
    'Latent Image", "description": "Create a new batch of empty latent images to be denoised '
    'via sampling.", "python_module": "nodes", "category": "latent", "output_node": false, '
    '"output_tooltips": ["The empty latent image batch."]}, "ImageScale": {"input": '
    '{"required": {"image": ["IMAGE"], "upscale_method": [["nearest-exact", "bilinear", "area", '
    '"bicubic", "lanczos"]], "width": ["INT", {"default": 512, "min": 0, "max": 16384, "step": '
    '1}], "height": ["INT", {"default": 512, "min": 0, "max": 16384, "step": 1}], "crop": '
    '[["disabled", "center"]]}}, "input_order": {"required": ["image", "upscale_method", '
    '"width", "height", "crop"]}, "output": ["IMAGE"], "output_is_list": [false], '
    '"output_name": ["IMAGE"], "name": "ImageScale", "display_name": "Upscale Image", '
    '"description": "", "python_module": "nodes", "category": "image/upscaling", '
    '"output_node": false}}'
)

WORKFLOW = (
    '{"last_node_id": 9, "last_link_id": 9, "nodes": [{"id": 7, "type": "CLIPTextEncode", '
    '"pos": [413, 389], "size": [425.28, 180.61], "flags": {}, "order": 3, "mode": 0, '
    '"inputs": [{"name": "clip", "type": "CLIP", "link": 5}], "outputs": [{"name": '
    '"CONDITIONING", "type": "CONDITIONING", "links": [6], "slot_index": 0}], "properties": '
    '{"Node name for S&R": "CLIPTextEncode"}, "widgets_values": ["text, watermark"]}, {"id": 5, '
    '"type": "EmptyLatentImage", "pos": [473, 609], "size": [315, 106], "flags": {}, "order": 0, '
    '"mode": 0, "inputs": [], "outputs": [{"name": "LATENT", "type": "LATENT", "links": [2], '
    '"slot_index": 0}], "properties": {"Node name for S&R": "EmptyLatentImage"}, '
    '"widgets_values": [512, 512, 1]}, {"id": 3, "type": "KSampler", "pos": [863, 186], "size": '
    '[315, 262], "flags": {}, "order": 4, "mode": 0, "inputs": [{"name": "model", "type": '
    '"MODEL", "link": 1}, {"name": "positive", "type": "CONDITIONING", "link": 4}, {"name": '
    '"negative", "type": "CONDITIONING", "link": 6}, {"name": "latent_image", "type": "LATENT", '
    '"link": 2}], "outputs": [{"name": "LATENT", "type": "LATENT", "links": [7], "slot_index": '
    '0}], "properties": {"Node name for S&R": "KSampler"}, "widgets_values": [156680208700286, '
    '"randomize", 20, 8, "euler", "normal", 1]}, {"id": 8, "type": "VAEDecode", "pos": [1209, '
    '188], "size": [210, 46], "flags": {}, "order": 5, "mode": 0, "inputs": [{"name": '
    '"samples", "type": "LATENT", "link": 7}, {"name": "vae", "type": "VAE", "link": 8}], '
    '"outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [9], "slot_index": 0}], '
    '"properties": {"Node name for S&R": "VAEDecode"}, "widgets_values": []}], "links": [[1, 4, '
    '0, 3, 0, "MODEL"], [2, 5, 0, 3, 3, "LATENT"], [3, 4, 1, 6, 0, "CLIP"], [4, 6, 0, 3, 1, '
    '"CONDITIONING"], [5, 4, 1, 7, 0, "CLIP"], [6, 7, 0, 3, 2, "CONDITIONING"], [7, 3, 0, 8, 0, '
    '"LATENT"], [8, 4, 2, 8, 1, "VAE"], [9, 8, 0, 9, 0, "IMAGE"]], "groups": [], "config": {}, '
    '"extra": {"ds": {"scale": 1.1, "offset": [-120.5, 42.25]}}, "version": 0.4}'
)

RUSSIAN = """\
Ассистент живёт в нижней панели ComfyUI. Вы описываете обычными словами, что хотите получить, \
а он читает граф, находит установленные на вашем компьютере узлы и предлагает изменения. \
Ничего не происходит за вашей спиной: любую правку можно отменить одним нажатием клавиш, а \
ассистент объясняет, что он сделал и почему.

Длинные разговоры — слабое место большинства чатов. Модель забывает начало обсуждения, или \
запрос растёт, пока сервер не откажется его принять. Мы считаем каждый отправленный токен, \
сохраняем последние ходы целиком и сворачиваем старые результаты инструментов в короткие \
сводки, в которых остаётся идентификатор, чтобы модель могла снова запросить полный текст.

Локальные модели заслуживают такой же заботы, как и облачные. У небольшой модели на ноутбуке \
узкое окно контекста и медленная обработка запроса, поэтому начало каждого запроса остаётся \
неизменным от хода к ходу. Сервер может повторно использовать свой кэш, и ответ начинается \
почти сразу, а не после долгой паузы.
"""

CHINESE = """\
助手位于 ComfyUI 的底部面板中。你用日常语言描述想要的效果，它会读取工作\
流图，查找你电脑上已经安装的节点，然后提出修改建议。它不会在背后偷偷做任何事情：\
每一次编辑都可以一键撤销，而且它会解释自己做了什么以及为什么这样做。

长对话是大多数聊天工具的薄弱环节。模型会忘记讨论的前半部分，或者请求不断变大，直\
到服务器拒绝处理。我们统计发送出去的每一个词元，完整保留最近的几轮对话，并把较早\
的工具结果折叠成简短的摘要，摘要中保留一个标识符，模型需要时可以再次请求完整内容\
。

本地模型应当得到与云端模型同样的照顾。在笔记本电脑上运行的小模型上下文窗口较窄，\
处理提示也比较慢，所以我们让每次请求的开头在各轮之间保持完全一致。这样服务器就可\
以复用缓存，而不必重新读取全部历史，回答几乎立刻开始，而不是在漫长的等待之后。
"""


# --- model -> encoding, and what loads -----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5.1-codex", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("ft:gpt-4o-2024-08-06:acme::abc", "o200k_base"),
        ("gpt-oss:20b", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("llama3.1:8b", "cl100k_base"),
        ("qwen2.5-coder:7b", "cl100k_base"),
        ("o1mini-lookalike", "cl100k_base"),
        ("", "cl100k_base"),
        (None, "cl100k_base"),
    ],
)
def test_encoding_for_model(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


def test_cl100k_loads_offline_and_counters_are_shared_per_encoding() -> None:
    c = counter_for("gpt-4")
    assert (c.encoding, c.source, c.exact, c.name) == (
        "cl100k_base",
        "tiktoken:cl100k_base",
        True,
        "cl100k_base",
    )
    assert counter_for("llama3.1:8b") is c
    assert counter_for("gpt-4o") is counter_for("o3-mini") is not c
    assert c.text("Hello, world!") == n("Hello, world!") == 4


def test_the_shipped_cl100k_file_is_openais_and_a_changed_one_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import hashlib

    data = token_encoding.cl100k_bytes(token_encoding.CL100K_FILE)
    assert hashlib.sha256(data).hexdigest() == token_encoding.CL100K_SHA256
    tampered = tmp_path / "cl100k_base.tiktoken"
    tampered.write_bytes(data.replace(b"IQ== 0", b"Ig== 0", 1))
    monkeypatch.setattr(token_encoding, "CL100K_FILE", tampered)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    with pytest.raises(ValueError, match=r"[Hh]ash mismatch"):
        token_encoding.shipped_cl100k()
    assert token_encoding._load("cl100k_base") is None  # (no cache here: counts are estimated)


def test_o200k_without_its_file_falls_back_to_cl100k_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(token_encoding, "_tiktoken_cached", lambda name: False)
    c = TokenCounter("o200k_base")
    assert c.encoding == "o200k_base"
    assert c.source == "tiktoken:cl100k_base"
    assert c.exact is False
    assert c.name == "cl100k_base (approximating o200k_base)"
    assert c.text("Hello, world!") == 4


def test_o200k_is_used_when_tiktoken_cache_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake(name: str) -> Callable[[str], list[int]]:
        asked.append(name)
        return lambda s: [0] * len(s.split())

    monkeypatch.setattr(token_encoding, "_tiktoken_cached", lambda name: name == "o200k_base")
    monkeypatch.setattr(token_encoding, "_get_encoding", fake)
    c = TokenCounter("o200k_base")
    assert asked == ["o200k_base"]
    assert (c.source, c.exact, c.name) == ("tiktoken:o200k_base", True, "o200k_base")
    assert c.text("three little words") == 3


def test_tiktoken_cache_lookup_matches_tiktoken(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert not token_encoding._tiktoken_cached("o200k_base")
    # tiktoken stores a download under sha1(url) in its cache directory
    import hashlib

    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"")
    assert token_encoding._tiktoken_cached("o200k_base")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken: caching disabled
    assert not token_encoding._tiktoken_cached("o200k_base")


# --- exact message counts ---------------------------------------------------------------------


def test_message_counts_are_exact(counter: TokenCounter) -> None:
    # hand-computed: "user", "assistant", "system", "tool" are one token each with cl100k;
    # "Hello, world!" 4, "example_user" 2, "addNode" 2, the arguments 10, "call_abc123" 4,
    # "Added node 12 (KSampler)." 8, "What is in this picture?" 6.
    assert counter.message({"role": "user", "content": "Hello, world!"}) == 3 + 1 + 4 == 8
    named = {"role": "system", "name": "example_user", "content": "Hello, world!"}
    assert counter.message(named) == 3 + 1 + (2 + 1) + 4 == 11
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc123",
                "type": "function",
                "function": {"name": "addNode", "arguments": '{"type":"KSampler","x":100}'},
            }
        ],
    }
    assert counter.message(call) == 3 + 1 + (2 + 10 + TOOL_CALL_OVERHEAD) == 23
    two_calls = {**call, "tool_calls": call["tool_calls"] * 2}
    assert counter.message(two_calls) == 3 + 1 + 2 * (2 + 10 + 7) == 42
    result = {"role": "tool", "tool_call_id": "call_abc123", "content": "Added node 12 (KSampler)."}
    assert counter.message(result) == 3 + 1 + 4 + 8 == 16
    parts = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "low"}},
        ],
    }
    assert counter.message(parts) == 3 + 1 + 6 + 85 == 95
    # the same sums straight from tiktoken
    assert counter.message(result) == (
        MESSAGE_OVERHEAD + n("tool") + n("call_abc123") + n("Added node 12 (KSampler).")
    )
    thread = [named, call, result, parts]
    assert counter.messages(thread) == 11 + 23 + 16 + 95 + REPLY_PRIMING == 148
    assert counter.messages([]) == REPLY_PRIMING


def test_arguments_sent_as_an_object_count_as_their_json(counter: TokenCounter) -> None:
    as_text = '{"type":"KSampler","x":100}'
    call = {"role": "assistant", "tool_calls": [{"function": {"name": "addNode"}}]}
    call["tool_calls"][0]["function"]["arguments"] = json.loads(as_text)
    assert counter.message(call) == 3 + 1 + 2 + n(as_text) + 7


COOKBOOK_EXAMPLE = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities "
        "for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    },
]


def cookbook_num_tokens_from_messages(messages: list[dict[str, str]]) -> int:
    """The OpenAI cookbook's formula for gpt-3.5-turbo-0613 / gpt-4 and later."""
    tokens_per_message, tokens_per_name = 3, 1
    total = 0
    for message in messages:
        total += tokens_per_message
        for key, value in message.items():
            total += n(value)
            if key == "name":
                total += tokens_per_name
    return total + 3  # every reply is primed with <|start|>assistant<|message|>


def test_openai_cookbook_example(counter: TokenCounter) -> None:
    # The cookbook prints 129 prompt tokens for this example on gpt-3.5-turbo and gpt-4, which is
    # also what the API reported for it.
    assert cookbook_num_tokens_from_messages(COOKBOOK_EXAMPLE) == 129
    assert counter.messages(COOKBOOK_EXAMPLE) == 129


# --- the cache ------------------------------------------------------------------------------------


def test_an_equal_message_is_not_encoded_again(
    monkeypatch: pytest.MonkeyPatch, counter: TokenCounter
) -> None:
    calls = counting_calls(monkeypatch, counter)
    m = {
        "role": "assistant",
        "content": "Adding a sampler.",
        "tool_calls": [
            {"id": "c1", "function": {"name": "addNode", "arguments": '{"type":"KSampler"}'}}
        ],
    }
    first = counter.message(m)
    assert calls
    calls.clear()
    copy = json.loads(json.dumps(m))  # equal, but new objects, as after parsing a request
    assert counter.message(copy) == first
    assert calls == []
    # a changed argument string is counted afresh
    copy["tool_calls"][0]["function"]["arguments"] = '{"type":"KSampler","x":100,"y":200}'
    changed = counter.message(copy)
    assert calls and changed > first
    assert changed == first - n('{"type":"KSampler"}') + n('{"type":"KSampler","x":100,"y":200}')


def test_a_long_thread_recount_encodes_only_new_messages(
    monkeypatch: pytest.MonkeyPatch, counter: TokenCounter
) -> None:
    thread = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}"}
        for i in range(300)
    ]
    total = counter.messages(thread)
    calls = counting_calls(monkeypatch, counter)
    again = [*json.loads(json.dumps(thread)), {"role": "user", "content": "one more"}]
    assert counter.messages(again) == total + 3 + 1 + n("one more")
    assert sorted(calls) == ["one more", "user"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"role": "user", "content": "x"}, {"role": "user", "name": "x"}),
        ({"role": "user", "content": "ab"}, {"role": "user", "content": "ab cd"}),
        (
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "user", "content": [{"type": "text", "text": "hi"}] * 2},
        ),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "low"}}],
            },
        ),
        (
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            {"role": "tool", "tool_call_id": "call_1 and more", "content": "ok"},
        ),
    ],
)
def test_different_messages_never_share_a_count(
    counter: TokenCounter, a: dict[str, Any], b: dict[str, Any]
) -> None:
    counted_a = counter.message(a)
    counted_b = counter.message(b)
    assert counted_a != counted_b
    assert counted_a == TokenCounter().message(a)
    assert counted_b == TokenCounter().message(b)


_texts = st.text(alphabet='ab {}":,\n日', max_size=6)
_messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"])},
    optional={
        "content": st.one_of(
            st.none(),
            _texts,
            st.lists(st.builds(lambda t: {"type": "text", "text": t}, _texts), max_size=3),
        ),
        "name": _texts,
        "tool_call_id": _texts,
        "tool_calls": st.lists(
            st.builds(
                lambda name, args: {"id": "c", "function": {"name": name, "arguments": args}},
                _texts,
                _texts,
            ),
            max_size=2,
        ),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_messages, min_size=1, max_size=12))
def test_cached_counts_are_never_stale(ms: list[dict[str, Any]]) -> None:
    shared = counter_for("gpt-4")  # its cache persists across examples
    for m in ms:
        assert shared.message(m) == TokenCounter(max_entries=0).message(m)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30) | st.sampled_from(["tool", "", "x" * 300]), max_size=12))
def test_a_total_is_the_sum_of_its_texts(texts: list[str]) -> None:
    for exact in (True, False):
        counter, reference = (TokenCounter(use_tiktoken=exact) for _ in range(2))
        once = counter.total(texts)  # counted (and remembered) here
        assert once == sum(reference.text(t) for t in texts)
        assert counter.total(texts) == once  # and from memory


def test_text_counts_are_remembered_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TokenCounter("cl100k_base")
    encode, encoded = counter._encode, []
    assert encode is not None
    monkeypatch.setattr(counter, "_encode", lambda s: encoded.append(s) or encode(s))
    texts = ["assistant", "tool", "assistant", "x" * 300, "x" * 300, "tool"]
    assert [counter.text(t) for t in texts] == [1, 1, 1, 38, 38, 1]
    assert encoded == ["assistant", "tool", "x" * 300]  # each distinct text encoded once
    monkeypatch.setattr(tokens, "SHORT_CACHE_ENTRIES", 3)
    for i in range(10):
        counter.text(f"word{i}")
    assert len(counter._short) <= 3


def test_uncached_message_count_equals_the_cached_one(counter: TokenCounter) -> None:
    m = {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true,"nodeId":3}'}
    assert counter.message(m, cache=False) == counter.message(m)
    assert counter.cache_info()["entries"] == 1  # only the cached call stored it


def test_the_cache_is_bounded() -> None:
    small = TokenCounter(max_entries=10)
    for i in range(25):
        small.message({"role": "user", "content": f"number {i}"})
    assert small.cache_info()["entries"] == 10
    by_size = TokenCounter(max_chars=100)
    for i in range(25):
        by_size.message({"role": "user", "content": f"{i:020d}"})
    assert by_size.cache_info()["chars"] <= 100
    by_size.message({"role": "user", "content": "x" * 500})  # larger than the whole cache
    assert by_size.cache_info()["chars"] <= 100


# --- tools ----------------------------------------------------------------------------------------


def _tool(name: str, description: str, **props: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": "string", "description": d} for k, d in props.items()},
                "required": list(props),
            },
        },
    }


ADD_NODE = _tool("addNode", "Add a node to the workflow.", type="Node class name.")


def test_tool_definitions_are_counted(counter: TokenCounter) -> None:
    assert counter.tools([]) == 0
    compact = (
        '{"name":"addNode","description":"Add a node to the workflow.","parameters":{"type":'
        '"object","properties":{"type":{"type":"string","description":"Node class name."}},'
        '"required":["type"]}}'
    )
    assert n(compact) == 42
    assert counter.tools([ADD_NODE]) == TOOLS_OVERHEAD + 42 + TOOL_OVERHEAD == 62
    more = [
        ADD_NODE,
        _tool("removeNode", "Remove a node.", id="The node id."),
        _tool("connect", "Link an output to an input.", src="Source.", dst="Target."),
    ]
    assert counter.tools(more[:2]) > counter.tools([ADD_NODE])
    assert counter.tools(more) > counter.tools(more[:2])
    # a longer description costs more
    longer = _tool("addNode", "Add a node of the given class to the workflow graph.", type="x")
    assert counter.tools([longer]) > counter.tools([_tool("addNode", "Add a node.", type="x")])


def test_tool_counts_are_cached(monkeypatch: pytest.MonkeyPatch, counter: TokenCounter) -> None:
    first = counter.tools([ADD_NODE])
    calls = counting_calls(monkeypatch, counter)
    assert counter.tools([json.loads(json.dumps(ADD_NODE))]) == first
    assert calls == []


def test_a_changed_definition_under_the_same_name_is_counted_again(
    counter: TokenCounter,
) -> None:
    mine = json.loads(json.dumps(ADD_NODE))
    first = counter.tools([mine])
    mine["function"]["description"] += " Much longer now, with several more words."
    assert counter.tools([mine]) > first  # the count was not taken from the stale snapshot
    assert counter.tools([ADD_NODE]) == first


# --- images ---------------------------------------------------------------------------------------


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def _jpeg(width: int, height: int, exif_bytes: int = 0) -> bytes:
    jfif = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    exif = b""
    if exif_bytes:
        payload = b"Exif\x00\x00" + b"\x00" * exif_bytes
        exif = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    dqt = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes(range(64))
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3)
    sof += b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8" + jfif + exif + dqt + sof + b"\xff\xd9"


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def _webp_vp8(width: int, height: int) -> bytes:
    frame = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height) + b"\x00" * 10
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(frame))
        + b"WEBPVP8 "
        + struct.pack("<I", len(frame))
        + frame
    )


def _webp_vp8l(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    data = b"\x2f" + struct.pack("<I", bits) + b"\x00" * 8
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(data))
        + b"WEBPVP8L"
        + struct.pack("<I", len(data))
        + data
    )


def _data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode()


def test_openai_image_formula() -> None:
    assert image_tokens("https://x.test/cat.png", "low") == 85
    assert image_tokens("https://x.test/cat.png", "high") == 765  # unknown size: 1024x1024
    assert image_tokens("https://x.test/cat.png") == 765
    assert image_tokens(_data_url(_png(1024, 1024)), "high") == 765
    # 4096x2048 -> fits 2048x1024 -> shortest side 768: 1536x768 -> 3x2 tiles
    big = _data_url(_png(4096, 2048))
    assert image_size(big) == (4096, 2048)
    assert image_tokens(big, "high") == 6 * 170 + 85 == 1105
    assert image_tokens(big, "low") == 85
    assert image_tokens(_data_url(_png(512, 512))) == 255  # one tile, never scaled up
    assert image_tokens(_data_url(_png(100, 3000))) == 170 * 4 + 85  # 68x2048: 1x4 tiles


def test_image_sizes_from_header_bytes() -> None:
    jpeg = _data_url(_jpeg(3000, 1000), "image/jpeg")
    assert image_size(jpeg) == (3000, 1000)
    assert image_tokens(jpeg) == 8 * 170 + 85  # 2048x683: 4x2 tiles
    behind_exif = _data_url(_jpeg(800, 600, exif_bytes=30_000), "image/jpeg")
    assert image_size(behind_exif) == (800, 600)
    assert image_size(_data_url(_gif(300, 200), "image/gif")) == (300, 200)
    assert image_size(_data_url(_webp_vp8(1280, 720), "image/webp")) == (1280, 720)
    assert image_tokens(_data_url(_webp_vp8(1280, 720), "image/webp")) == 1105
    assert image_size(_data_url(_webp_vp8l(700, 300), "image/webp")) == (700, 300)
    for junk in ["data:image/png;base64,not base64!!", "data:text/plain,hello", "data:", ""]:
        assert image_size(junk) is None
        assert image_tokens(junk) == 765


def test_image_parts_in_messages(counter: TokenCounter) -> None:
    url = _data_url(_png(4096, 2048))
    m = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    assert counter.message(m) == 3 + 1 + 1105
    low = {"type": "image_url", "image_url": {"url": url, "detail": "low"}}
    assert counter.message({"role": "user", "content": [low]}) == 3 + 1 + 85
    other = _data_url(_png(512, 512))
    assert counter.message({"role": "user", "content": [{"image_url": {"url": other}}]}) == 259


# --- the estimate ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sample",
    [PROSE, CODE, JSON, WORKFLOW, RUSSIAN, CHINESE],
    ids=["prose", "code", "json", "workflow", "russian", "chinese"],
)
def test_estimate_is_within_15_percent_of_cl100k(sample: str) -> None:
    exact = n(sample)
    estimate = estimate_tokens(sample)
    assert abs(estimate - exact) <= 0.15 * exact, (estimate, exact)


def test_estimate_beats_chars_over_four() -> None:
    for sample in (WORKFLOW, RUSSIAN, CHINESE):
        exact = n(sample)
        assert abs(estimate_tokens(sample) - exact) < abs(len(sample) / 4 - exact) / 3


def test_estimate_edges() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1
    assert estimate_tokens(" ") == 1
    assert estimate_tokens("x" * 10_000) > 1000


# --- fallback without tiktoken --------------------------------------------------------------------


def test_fallback_when_tiktoken_fails_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    real = TokenCounter()

    def broken(name: str) -> Callable[[str], list[int]]:
        raise OSError("no encoding file and no network")

    monkeypatch.setattr(token_encoding, "_get_encoding", broken)
    c = counter_for("gpt-4")
    assert (c.source, c.exact, c.name) == (
        "estimate",
        False,
        "estimate (approximating cl100k_base)",
    )
    assert c.text(PROSE) == estimate_tokens(PROSE)
    m = {"role": "user", "content": PROSE}
    assert c.message(m) == 3 + estimate_tokens("user") + estimate_tokens(PROSE)
    assert abs(c.messages([m]) - real.messages([m])) < 0.15 * n(PROSE)
    assert c.tools([ADD_NODE]) > TOOLS_OVERHEAD + TOOL_OVERHEAD


def test_fallback_by_flag_and_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TokenCounter(use_tiktoken=False).source == "estimate"
    monkeypatch.setenv("COMFYUI_ASSISTANT_TOKENS", "estimate")
    assert TokenCounter().source == "estimate"


# --- the learned correction -----------------------------------------------------------------------


S, T = 1500, 2000  # a system prompt and tool definitions, as we count them


def thread(c: Correction, truth: Factors, model: str = "m", turns: int = 12) -> Factors:
    """A thread's requests (the history grows, system prompt and tools stay), each reported
    as the server with these true factors counts it."""
    for m in range(60, 60 + 250 * turns, 250):
        parts = Parts(S, T, m)
        c.observe(model, parts, truth.scale(parts))
    return c.factors(model)


def test_correction_learns_a_common_ratio_and_keeps_models_apart() -> None:
    c = Correction()
    assert c.factors("llama3.1:8b") == Factors()
    first = c.observe("llama3.1:8b", Parts(S, T, 500), 5200)  # 1.3x of 4000 in one sample
    assert first.scale(Parts(S, T, 500)) == pytest.approx(5200, rel=0.02)
    learned = thread(c, Factors.uniform(1.3), "llama3.1:8b")
    assert learned.messages == pytest.approx(1.3, abs=0.02)  # the slope over the history
    assert learned.scale(Parts(S, T, 4000)) == pytest.approx(1.3 * 7500, rel=0.01)
    assert c.factors("qwen3:8b") == Factors()  # per model
    assert c.samples("llama3.1:8b") == 13


def test_a_server_that_drops_the_tools_does_not_skew_the_message_factor() -> None:
    # no calibration: one total per request, and the history grows within the thread
    learned = thread(Correction(), Factors(1.0, 0.0, 1.0))
    assert learned.messages == pytest.approx(1.0, abs=0.03)
    assert learned.tools < 0.1
    # the single factor of the previous design: (S + M) / (S + T + M), about 0.5 for all
    # the same for a template that renders tool schemas 1.5x as large as their JSON
    learned = thread(Correction(), Factors(1.0, 1.5, 1.0))
    assert learned.messages == pytest.approx(1.0, abs=0.03)
    assert learned.tools == pytest.approx(1.5, abs=0.1)


def test_the_servers_own_counts_pin_system_and_tools_and_usage_teaches_the_messages() -> None:
    c = Correction()
    ours, server = Parts(S, T, 80), Parts(1650, 0, 100)  # its tokenizer; a template without tools
    calibrated = c.calibrate("m", ours, server, "llama.cpp /tokenize")
    assert calibrated.system == pytest.approx(1.1, abs=0.001)
    assert calibrated.tools == pytest.approx(0.0, abs=0.001)
    assert c.calibrated("m") == "llama.cpp /tokenize" and c.samples("m") == 0
    for m in (1000, 2000, 3000):  # the totals now teach the messages
        c.observe("m", Parts(S, T, m), 1650 + round(1.2 * m))
    learned = c.factors("m")
    assert learned.messages == pytest.approx(1.2, abs=0.02)  # (its first guess: 100 / 80)
    assert (learned.system, learned.tools) == pytest.approx((1.1, 0.0), abs=0.01)


def test_correction_follows_a_changed_server() -> None:
    c = Correction()
    thread(c, Factors(1.0, 1.0, 1.2))
    learned = thread(c, Factors(1.0, 0.0, 1.2))  # the template now drops the tools
    assert learned.tools < 0.1
    assert learned.messages == pytest.approx(1.2, abs=0.03)


def test_correction_is_clamped_and_ignores_absurd_samples() -> None:
    c = Correction()
    parts = Parts(400, 0, 600)
    c.observe("m", parts, 3000)  # ratio 3: clamped
    assert (c.factors("m").system, c.factors("m").messages) == (2.0, 2.0)
    for _ in range(50):
        c.observe("m", parts, 400)  # ratio 0.4 (each step within the absurd-sample bounds)
    for _ in range(50):
        c.observe("m", parts, 150)  # ratio 0.15: clamped to 0.3
    before = c.factors("m")
    assert before.system == before.messages == pytest.approx(0.3, abs=1e-6)
    assert c.observe("m", Parts(10, 0, 30), 400) == before  # estimate too small
    assert c.observe("m", parts, 0) == before  # no usage
    assert c.observe("m", parts, 50) == before  # ratio 0.17 of the prediction: KV-cached left out
    assert c.observe("m", parts, 4500) == before  # ratio 15: nonsense
    assert c.samples("m") == 101


def test_a_calibrated_messages_factor_follows_the_content_of_the_thread() -> None:
    # llama.cpp pinned the system prompt and the tools; the messages' ratio drifts as prose in
    # Arabic (0.47x of cl100k on Gemma 3) outweighs the first request's template tokens (as in
    # bench/count_accuracy.py --chat-only --language ar: 0.84x at first, 0.70x by request 15)
    c = Correction()
    c.calibrate("m", Parts(S, T, 60), Parts(1600, 2500, 50), "llama.cpp /tokenize")
    for k in range(1, 13):
        m, ratio = 60 + 130 * k, 0.84 - 0.012 * k
        c.observe("m", Parts(S, T, m), round(1600 + 2500 + ratio * m))
    learned = c.factors("m")
    assert (learned.system, learned.tools) == pytest.approx((1600 / S, 2500 / T), abs=1e-3)
    assert learned.messages == pytest.approx(0.696, abs=0.03)  # the last request's ratio


def test_correction_learns_how_a_large_vocabulary_counts_cjk_and_arabic_prose() -> None:
    # Gemma 3's 262K SentencePiece (llama-server /tokenize) counts prose without Latin words at
    # 0.47x of cl100k in Arabic, 0.50x in Chinese, 0.49x in Japanese, 0.46x in Persian, 0.33x
    # in Hindi; an English system prompt at 1.07x (bench/count_accuracy.py's figures). A chat
    # without tool rounds is what the messages factor then learns: a floor of 0.5 overcounted it.
    for ratio in (0.47, 0.35):
        truth = Factors(1.07, 1.25, ratio)
        learned = thread(Correction(), truth, turns=20)
        assert learned.messages == pytest.approx(ratio, abs=0.02)
        assert learned.scale(Parts(S, T, 6000)) == pytest.approx(
            truth.scale(Parts(S, T, 6000)), rel=0.02
        )


def test_correction_round_trips_through_a_dict() -> None:
    c = Correction()
    c.observe("a", Parts(S, T, 500), 4800)
    c.calibrate("b", Parts(S, T, 80), Parts(1600, 1900, 90), "llama.cpp /tokenize")
    c.observe("b", Parts(S, T, 500), 4100)
    stored = json.loads(json.dumps(c.as_dict()))
    assert stored["b"]["factor"] == pytest.approx(c.factors("b").messages, abs=1e-4)  # read by
    # earlier versions
    back = Correction.from_dict(stored)
    assert back.as_dict() == json.loads(json.dumps(c.as_dict()))
    assert back.factors("a") == pytest.approx(c.factors("a"))
    assert back.samples("b") == 1 and back.calibrated("b") == "llama.cpp /tokenize"
    assert Correction.from_dict(None).as_dict() == {}
    assert Correction.from_dict({}).as_dict() == {}
    # what earlier versions stored: one factor per model, now for every component
    legacy = Correction.from_dict({"old": {"factor": 1.2, "samples": 7}})
    assert legacy.factors("old") == Factors.uniform(1.2) and legacy.samples("old") == 7
    odd = Correction.from_dict(
        {
            "x": "bad",
            "y": {"factor": float("nan")},
            "z": 5.0,
            "w": {"factor": True},
            "v": 1.5,
            "u": {"factor": 1.1, "tools": -1, "cov": [[1, 2], [3]]},
        }
    )
    assert sorted(odd.as_dict()) == ["u", "v", "z"]
    assert odd.factors("z") == Factors.uniform(2.0) and odd.factors("v") == Factors.uniform(1.5)
    assert odd.factors("u") == Factors.uniform(1.1)  # the bad parts fall back


async def test_the_server_loads_the_tokenizer_at_start_and_writes_nothing(tmp_path):
    # the first chat's first byte should not wait for the tokenizer's tables (0.7 s); the
    # warm-up touches neither the store nor the data directory
    from comfyui_assistant.standalone import WARMING

    from .conftest import start_app

    app = await start_app(tmp_path, {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"})
    try:
        await app.app[WARMING]  # done, without an error
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    finally:
        await app.close()
