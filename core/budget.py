"""The context budget: how many tokens of the model's window the conversation may use.

The window comes from, first that answers: the thread's setting, the provider settings
(Settings or LLM_CONTEXT_WINDOW), the provider's own metadata, a table of known model
families, else a conservative default; the `Window` says which won. Budget = window − output
reserve − safety margin − tool definitions. Also here: reading the window back out of a
provider's "context length exceeded" error.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp

from .provider_config import ProviderSettings
from .provider_profiles import ProviderProfile

log = logging.getLogger("comfyui_assistant")

DEFAULT_WINDOW = 8192
PROBE_TIMEOUT_SECONDS = 2.0  # per metadata request; a slow answer must not delay the chat
CACHE_SECONDS = 600.0  # metadata answers are kept this long per (base URL, model)
RETRY_SECONDS = 30.0  # ... but failures and "not loaded yet" answers only this long
OLLAMA_DEFAULT_NUM_CTX = 4096


@dataclass(frozen=True)
class Window:
    """A context window in tokens and where the figure came from."""

    tokens: int
    source: str
    """One of "thread setting", "settings", "environment", "provider", "model table", "default"."""
    detail: str
    """For the report and errors, e.g. "Ollama /api/show num_ctx=8192"."""


# Known families, most specific first; searched in the lowercased name without its provider
# prefix ("openai/gpt-4o" → "gpt-4o"; Ollama tags such as "qwen3:8b" match as they are).
# Figures are the vendors' published context lengths (model cards, API docs, the
# context_length Ollama reports for its library builds); where variants differ we take the
# smaller. For a local server the context it was started with (Ollama's num_ctx, LM Studio's
# loaded context, llama.cpp's -c) usually matters more than the model's maximum, which is
# why the provider's metadata outranks this table.
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    # OpenAI
    (r"gpt-oss", 131_072),
    (r"gpt-5[\w.-]*-chat", 128_000),
    (r"gpt-5", 272_000),  # 400K in total, of which at most 272K may be input
    (r"gpt-4\.1", 1_047_576),
    (r"gpt-4o", 128_000),
    (r"gpt-4\.5|gpt-4-(turbo|1106|0125|vision)", 128_000),
    (r"gpt-4-32k", 32_768),
    (r"gpt-4\b", 8_192),
    (r"gpt-3\.5-turbo-instruct", 4_096),
    (r"gpt-3\.5-turbo", 16_385),
    (r"^o1-(mini|preview)", 128_000),
    (r"^o[134]\b", 200_000),
    # DeepSeek (before Llama and Qwen: the R1 distills carry their base model's name)
    (r"deepseek-r1", 131_072),
    (r"deepseek-(v3|chat|reasoner)", 65_536),
    (r"deepseek-coder-v2", 131_072),
    (r"deepseek-coder", 16_384),
    # Anthropic (Claude 3 and later) and Google
    (r"claude", 200_000),
    (r"gemini-(1\.5|2|3)", 1_048_576),
    (r"gemini", 32_768),
    (r"gemma-?3n|gemma-?3[-:_]?(1b|270m)", 32_768),
    (r"gemma-?3", 131_072),
    (r"gemma", 8_192),
    # Meta
    (r"codellama", 16_384),
    (r"llama-?4", 131_072),
    (r"llama-?3\.[1-3]", 131_072),
    (r"llama-?3", 8_192),
    (r"llama-?2", 4_096),
    # Qwen (Qwen2.5's 128K needs YaRN that servers rarely enable: 32K)
    (r"qwen-?3[-.]?coder|qwen-?3-(next|vl)|qwen-?3.*2507", 262_144),
    (r"qwen-?3", 40_960),
    (r"qwq", 32_768),
    (r"qwen-?2", 32_768),
    # Mistral
    (r"mistral-nemo|mistral-large|ministral|pixtral", 131_072),
    (r"mistral|mixtral|codestral", 32_768),
    # Microsoft Phi (Phi-3 comes as 4K and 128K variants)
    (r"\bphi-?3.*128k|\bphi-?3\.5|\bphi-?4-?mini", 131_072),
    (r"\bphi-?4", 16_384),
    (r"\bphi-?3", 4_096),
    # Others often served
    (r"command-r|kimi-k2|glm-?4|grok", 131_072),
)
_TABLE = tuple((re.compile(pattern), tokens) for pattern, tokens in MODEL_WINDOWS)


def table_window(model: str) -> Window | None:
    """The model table's window for this model name, or None for an unknown family."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    for pattern, tokens in _TABLE:
        found = pattern.search(name) if name else None
        if found:
            return Window(tokens, "model table", f"model table: {found.group(0)} → {tokens}")
    return None


# --- the provider's own metadata ------------------------------------------------------------

_windows: dict[tuple[str, str], tuple[float, Window | None]] = {}
_lists: dict[str, tuple[float, list[dict[str, Any]]]] = {}
_last_loaded: dict[tuple[str, str], Window] = {}  # what a local server last ran the model with


def clear_caches() -> None:
    _windows.clear()
    _lists.clear()
    _last_loaded.clear()


class _Unreachable(Exception):
    """The server did not answer at all (refused, timed out): stop asking it."""


def _positive(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return value if ok else None


def _entries(body: Any, key: str) -> list[dict[str, Any]]:
    items = body.get(key) if isinstance(body, dict) else None
    return [e for e in items if isinstance(e, dict)] if isinstance(items, list) else []


def _find(entries: list[dict[str, Any]], model: str) -> dict[str, Any] | None:
    for wanted in dict.fromkeys((model, model.split(":")[0])):  # "x:free" may list as "x"
        for entry in entries:
            if entry.get("id") == wanted:
                return entry
    return None


class _Lookup:
    """One metadata lookup against one server; `provisional` marks an answer that may change
    soon (a model not loaded yet), `troubled` a server that failed."""

    def __init__(self, settings: ProviderSettings, model: str, session: aiohttp.ClientSession):
        self.session, self.model = session, model
        self.base = settings.base_url.rstrip("/")
        self.root = re.sub(r"/v1$", "", self.base)
        self.key = (self.base, model)
        self.name = settings.label if settings.profile.named else ""
        self.headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self.provisional = self.troubled = False

    def plan(self, profile: ProviderProfile) -> list[Callable[[], Awaitable[Window | None]]]:
        """The profile's window lookups, in its order."""
        steps: dict[str, Callable[[], Awaitable[Window | None]]] = {
            "ollama": self.ollama,
            "lmstudio": self.lmstudio,
            "listing": self.listing,
            "props": self.props,
        }
        return [steps[probe] for probe in profile.probes]

    async def fetch(self, url: str, body: Any = None) -> Any:
        """One JSON document (POST when there is a body); None for any other answer."""
        method = "GET" if body is None else "POST"
        timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_SECONDS)
        try:
            async with self.session.request(
                method, url, json=body, headers=self.headers, timeout=timeout
            ) as resp:
                if resp.status != 200:
                    log.debug("context window: %s %s answered HTTP %s", method, url, resp.status)
                    self.troubled = self.troubled or resp.status >= 500
                    return None
                return await resp.json(content_type=None)
        except (aiohttp.ClientConnectionError, asyncio.TimeoutError, OSError) as exc:
            raise _Unreachable(f"{method} {url}: {exc!r}") from exc
        except (aiohttp.ClientError, ValueError) as exc:
            log.debug("context window: %s %s sent no usable JSON: %r", method, url, exc)
            self.troubled = True
            return None

    def remembered(self) -> Window | None:
        self.provisional = True
        return _last_loaded.get(self.key)

    def loaded(self, tokens: int, what: str) -> Window:
        _last_loaded[self.key] = Window(tokens, "provider", f"{what}={tokens} (when last loaded)")
        return Window(tokens, "provider", f"{what}={tokens}")

    async def ollama(self) -> Window | None:
        # A loaded model shows the context it really runs with (num_ctx, OLLAMA_CONTEXT_LENGTH
        # or the server's VRAM-based default); the OpenAI endpoint silently cuts longer prompts.
        tail = self.model.rsplit("/", 1)[-1]
        wanted = (self.model if ":" in tail else f"{self.model}:latest").lower()
        for entry in _entries(await self.fetch(f"{self.root}/api/ps"), "models"):
            names = {str(entry.get("model", "")).lower(), str(entry.get("name", "")).lower()}
            tokens = _positive(entry.get("context_length"))
            if tokens and wanted in names:
                return self.loaded(tokens, "Ollama /api/ps context_length")
        show = await self.fetch(f"{self.root}/api/show", {"model": self.model})
        if not (isinstance(show, dict) and isinstance(show.get("details"), dict)):
            return None
        num_ctx = re.search(r"^\s*num_ctx\s+(\d+)", str(show.get("parameters") or ""), re.M)
        if num_ctx:
            tokens = int(num_ctx.group(1))
            return Window(tokens, "provider", f"Ollama /api/show num_ctx={tokens}")
        info = show["model_info"] if isinstance(show.get("model_info"), dict) else {}
        lengths = [v for k, v in info.items() if k.endswith(".context_length")]
        maximum = _positive(lengths[0]) if lengths else None
        if maximum and show.get("remote_host"):  # a cloud model runs at its maximum
            return Window(maximum, "provider", f"Ollama cloud model context_length={maximum}")
        remembered = self.remembered()
        if remembered:
            return remembered
        if maximum and maximum <= OLLAMA_DEFAULT_NUM_CTX:
            return Window(maximum, "provider", f"Ollama /api/show context_length={maximum}")
        return Window(
            OLLAMA_DEFAULT_NUM_CTX,
            "provider",
            f"Ollama default num_ctx {OLLAMA_DEFAULT_NUM_CTX} (the model allows "
            f"{maximum or 'more'}; set num_ctx in the Modelfile or LLM_CONTEXT_WINDOW to use more)",
        )

    async def lmstudio(self) -> Window | None:
        entry = await self.fetch(f"{self.root}/api/v0/models/{quote(self.model, safe='')}")
        if not (isinstance(entry, dict) and entry.get("id") == self.model):
            listing = await self.fetch(f"{self.root}/api/v0/models")
            entry = _find(_entries(listing, "data"), self.model)
        if entry is None:
            return None
        tokens = _positive(entry.get("loaded_context_length"))
        if tokens:
            return self.loaded(tokens, "LM Studio /api/v0/models loaded_context_length")
        tokens = _positive(entry.get("max_context_length"))
        remembered = self.remembered()  # not loaded: it will load with its own settings
        if remembered or not tokens:
            return remembered
        return Window(tokens, "provider", f"LM Studio /api/v0/models max_context_length={tokens}")

    async def listing(self) -> Window | None:
        url = f"{self.base}/models"
        cached = _lists.get(url)
        if cached and cached[0] > time.monotonic():
            entries = cached[1]
        else:
            entries = _entries(await self.fetch(url), "data")
            if entries:
                _lists[url] = (time.monotonic() + CACHE_SECONDS, entries)
        entry = _find(entries, self.model) or {}
        for field in ("max_model_len", "context_length", "context_window"):
            tokens = _positive(entry.get(field))
            if tokens:
                top = entry.get("top_provider")  # OpenRouter: the provider it routes to first
                served = _positive(top.get("context_length")) if isinstance(top, dict) else None
                if served and served < tokens:
                    tokens, field = served, "top_provider.context_length"
                return Window(tokens, "provider", f"{self.name} /models {field}={tokens}".strip())
        return None

    async def props(self) -> Window | None:
        body = await self.fetch(f"{self.root}/props")
        defaults = body.get("default_generation_settings") if isinstance(body, dict) else None
        tokens = _positive(defaults.get("n_ctx")) if isinstance(defaults, dict) else None
        return Window(tokens, "provider", f"llama.cpp /props n_ctx={tokens}") if tokens else None


async def provider_window(
    settings: ProviderSettings, model: str, session: aiohttp.ClientSession | None = None
) -> Window | None:
    """The window the provider's own metadata states for this model, or None. Never raises;
    each request has a short timeout and answers are cached per (base URL, model)."""
    key = (settings.base_url.rstrip("/"), model)
    hit = _windows.get(key)
    if hit and hit[0] > time.monotonic():
        return hit[1]
    if not model:
        return None
    http = session or aiohttp.ClientSession()
    lookup = _Lookup(settings, model, http)
    window: Window | None = None
    try:
        for step in lookup.plan(settings.profile):
            window = await step()
            if window:
                break
    except Exception as exc:  # _Unreachable, or anything a strange answer provokes
        log.debug("context window: no metadata from %s for %s: %r", key[0], model, exc)
        lookup.troubled = True
    finally:
        if session is None:
            await http.close()
    short = lookup.troubled or lookup.provisional
    _windows[key] = (time.monotonic() + (RETRY_SECONDS if short else CACHE_SECONDS), window)
    return window


def resolve_window(
    *, thread_setting: int | None, settings: ProviderSettings, model: str, provider: Window | None
) -> Window:
    """The window to plan with. The provider's metadata outranks the model table because a
    server may run a model with a smaller context than the model's maximum."""
    if thread_setting:
        return Window(thread_setting, "thread setting", "this thread's setting")
    if settings.context_window:
        if settings.sources.get("contextWindow") == "environment":
            return Window(settings.context_window, "environment", "LLM_CONTEXT_WINDOW")
        return Window(settings.context_window, "settings", "Settings")
    if provider is not None:
        return provider
    return table_window(model) or Window(
        DEFAULT_WINDOW, "default", "the default for a model of unknown window"
    )


# --- the budget -----------------------------------------------------------------------------

RESERVE_SHARE, RESERVE_MIN, RESERVE_MAX = 0.20, 512, 8192
MARGIN_SHARE, MARGIN_MIN = 0.03, 64


@dataclass(frozen=True)
class Budget:
    """What the window leaves for the messages; checked before every request."""

    window: Window
    """The model's context window and where it came from."""
    reserve: int
    """Tokens kept free for the answer: LLM_MAX_OUTPUT_TOKENS when set, else 20% of the window
    clamped to [512, 8192]; never more than half the window."""
    margin: int
    """Safety margin for what we cannot count (chat template tokens, tokenizer differences):
    3% of the window, at least 64."""
    tools: int
    """Tokens the tool definitions take, counted by the caller."""

    @property
    def available(self) -> int:
        """Tokens left for system prompt and messages (may be 0 or negative)."""
        return self.window.tokens - self.reserve - self.margin - self.tools


def compute_budget(window: Window, max_output_tokens: int | None, tool_tokens: int) -> Budget:
    size = window.tokens
    wanted = max_output_tokens or min(max(int(size * RESERVE_SHARE), RESERVE_MIN), RESERVE_MAX)
    margin = max(int(size * MARGIN_SHARE), MARGIN_MIN)
    return Budget(window, min(wanted, size // 2), margin, tool_tokens)


class ContextBudgetError(Exception):
    """A request that cannot fit the budget whatever we leave out; raised before sending."""

    def __init__(self, message: str, *, limit_name: str, limit: int, needed: int) -> None:
        super().__init__(message)
        self.message, self.limit_name, self.limit, self.needed = message, limit_name, limit, needed

    @classmethod
    def for_message(cls, needed: int, budget: Budget, model: str) -> ContextBudgetError:
        fit, window = max(budget.available, 0), budget.window
        message = (
            f"The latest message needs {needed:,} tokens but only {fit:,} fit in "
            f"{model or 'the model'}'s context (window {window.tokens:,} from {window.detail}, "
            f"{budget.reserve:,} reserved for the answer, {budget.margin:,} margin, "
            f"{budget.tools:,} for tools) — shorten the message or raise the window "
            f"(LLM_CONTEXT_WINDOW or Settings)."
        )
        return cls(message, limit_name="context budget", limit=fit, needed=needed)


# --- the provider's overflow errors ---------------------------------------------------------

_N = r"(\d[\d,]*)"
_WINDOW_IN_ERROR = tuple(
    re.compile(p, re.I)
    for p in (
        rf"maximum context length is {_N}",  # OpenAI, vLLM, OpenRouter, DeepSeek, Groq
        rf"available context size \({_N} tokens?\)",  # llama.cpp
        rf"context length of (?:only )?{_N}",  # LM Studio
        rf"maximum model length of {_N}",  # vLLM: "The decoder prompt (length N) is longer ..."
        rf"too large for model with {_N} maximum context length",  # Mistral
        rf"tokens? > {_N} maximum",  # Anthropic: "prompt is too long: N tokens > M maximum"
        rf"maximum number of tokens allowed \({_N}\)",  # Gemini
        rf"exceed context window of {_N}",  # llama-cpp-python
        rf"\bn_ctx['\"]?\s*[:=]\s*{_N}",  # llama.cpp error fields, "n_ctx: 4096"
    )
)
_OVERFLOW_CODES = {"context_length_exceeded", "exceed_context_size_error"}
_OVERFLOW = re.compile(
    "context_length_exceeded|exceed_context_size|maximum context length|context length exceeded"
    "|exceeds the available context size|context length of only|context the overflows"
    "|maximum model length|prompt is too long|input is too long|reduce the length of the messages"
    "|exceeds the maximum number of tokens|exceeds the context window|exceed context window",
    re.I,
)


def window_from_error(message: str) -> int | None:
    """The window a provider's "context length exceeded" error states, or None."""
    for pattern in _WINDOW_IN_ERROR:
        found = pattern.search(message)
        tokens = int(found.group(1).replace(",", "")) if found else 0
        if tokens > 0:
            return tokens
    return None


def is_context_overflow(status: int | None, message: str, code: str | None) -> bool:
    """Whether a provider error means the request did not fit the model's window."""
    if status == 429:  # "Request too large ... tokens per min": a rate limit, not the window
        return False
    if code in _OVERFLOW_CODES:
        return True
    return bool(_OVERFLOW.search(message)) or window_from_error(message) is not None
