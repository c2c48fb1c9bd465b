"""The context window a provider's own metadata states for a model: the lookups each kind of
server answers (`ProviderProfile.probes`, in its order), with short timeouts, cached per
(base URL, model, key). A local server's answer for a model not loaded yet is provisional: asked
again sooner, and the window it last ran the model with is remembered meanwhile.

The key is in every cache key (as a keyed hash, never the key itself): with a provider per user
(COMFY_ASSISTANT_PER_USER_PROVIDER) one user's key never answers another's request, and a list
of models one key may see is not shown to a user with another key or none."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import secrets
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp

from ..base import PROVIDER, client_session
from .budget import Window, turn_window
from .provider_config import ProviderSettings
from .provider_profiles import Ask, ProviderProfile

log = logging.getLogger("comfyui_assistant")

PROBE_TIMEOUT_SECONDS = 2.0  # per metadata request; a slow answer must not delay the chat
CACHE_SECONDS = 600.0  # metadata answers are kept this long per (base URL, model, key)
RETRY_SECONDS = 30.0  # ... but failures and "not loaded yet" answers only this long
OLLAMA_DEFAULT_NUM_CTX = 4096

# (base URL, model, key's fingerprint) -> what was found
CacheKey = tuple[str, str, str]
_windows: dict[CacheKey, tuple[float, Window | None]] = {}
_lists: dict[tuple[str, str], tuple[float, list[dict[str, Any]]]] = {}  # (URL, fingerprint)
_last_loaded: dict[CacheKey, Window] = {}  # what a local server last ran the model with
_SALT = secrets.token_bytes(16)  # (this process's: a fingerprint is worth nothing elsewhere)


def key_fingerprint(api_key: str | None) -> str:
    """Which key answered, for the caches: a keyed hash of it ("" without a key). The key
    itself is never kept, logged or shown."""
    if not api_key:
        return ""
    return hmac.new(_SALT, api_key.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def cache_key(settings: ProviderSettings, model: str) -> CacheKey:
    return (settings.base_url.rstrip("/"), model, key_fingerprint(settings.api_key))


def clear_caches() -> None:
    _capabilities.clear()
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


class Lookup:
    """One metadata lookup against one server; `provisional` marks an answer that may change
    soon (a model not loaded yet), `troubled` a server that failed."""

    def __init__(self, settings: ProviderSettings, model: str, session: aiohttp.ClientSession):
        self.session, self.model = session, model
        self.base = settings.base_url.rstrip("/")
        self.root = re.sub(r"/v1$", "", self.base)
        self.key = cache_key(settings, model)
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
        """One JSON document (POST when there is a body); None for any other answer. A
        redirect is not followed: the key goes to the provider's own URLs only."""
        method = "GET" if body is None else "POST"
        timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_SECONDS)
        try:
            async with self.session.request(
                method, url, json=body, headers=self.headers, timeout=timeout,
                allow_redirects=False,
            ) as resp:  # fmt: skip
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
        listed = (url, self.key[2])  # (the list one key may see)
        cached = _lists.get(listed)
        if cached and cached[0] > time.monotonic():
            entries = cached[1]
        else:
            entries = _entries(await self.fetch(url), "data")
            if entries:
                _lists[listed] = (time.monotonic() + CACHE_SECONDS, entries)
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
    each request has a short timeout and answers are cached per (base URL, model, key)."""
    key = cache_key(settings, model)
    hit = _windows.get(key)
    if hit and hit[0] > time.monotonic():
        return hit[1]
    if not model:
        return None
    http = session or client_session(PROVIDER)
    lookup = Lookup(settings, model, http)
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


@dataclass(frozen=True)
class Capabilities:
    """What the server can do with a model, as far as it says."""

    tools: bool | None = None  # renders tool definitions (None: it does not say)
    progress: bool = False  # streams prompt-processing progress (llama.cpp `return_progress`)
    counts: bool = False  # counts tokens itself (llama.cpp /apply-template, /tokenize)
    vision: bool | None = None  # takes images (llama.cpp `modalities`, Ollama "vision")
    slots: int = 0  # llama.cpp's server slots (each keeps the cache of its last prompt)
    slot_ctx: int = 0  # llama.cpp: the tokens a slot may hold (/props n_ctx)

    @property
    def shared(self) -> bool:
        """llama.cpp slots that share one cache of `slot_ctx` tokens (core/provider/
        shared_cache.py): its /props does not say whether the cache is unified, and several
        slots are by default (`-np` unset: 4 slots, `kv_unified`)."""
        return self.slots > 1


_capabilities: dict[CacheKey, tuple[float, Capabilities]] = {}
_YES, _NO = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off"})


def thread_slot(caps: Capabilities, thread_id: str) -> int | None:
    """The llama.cpp slot a thread's requests go to (its summaries too), when the server has
    several: left to choose, llama-server picks the slot whose cached prompt is most alike,
    and after a summary the chat's prompt shares only its system prompt and tools with any
    (under its 10% threshold): it took an empty slot and processed everything again. In the
    thread's own slot that prefix is found. None: one slot, or not llama.cpp."""
    return zlib.crc32(thread_id.encode()) % caps.slots if caps.slots > 1 else None


def sees_images(caps: Capabilities, environ: Mapping[str, str]) -> bool:
    """Whether images go to the model as images: LLM_VISION when set (1 or 0), else what the
    server says, else yes (hosted chat models mostly take images; a local server says)."""
    setting = environ.get("LLM_VISION", "").strip().lower()
    if setting in _YES or setting in _NO:
        return setting in _YES
    return caps.vision is not False


async def provider_capabilities(settings: ProviderSettings, model: str) -> Capabilities:
    """Asked of llama.cpp (`/props`: its chat template's `supports_tools`) and Ollama
    (`/api/show`: the model's `capabilities`); cached per (base URL, model, key). Never raises."""
    key = cache_key(settings, model)
    hit = _capabilities.get(key)
    if hit and hit[0] > time.monotonic():
        return hit[1]
    found, ttl = Capabilities(), CACHE_SECONDS
    if settings.profile.capabilities:
        async with client_session(PROVIDER) as session:
            lookup = Lookup(settings, model, session)
            try:
                found = await _capabilities_of(lookup, settings.profile.capabilities)
            except Exception as exc:  # _Unreachable, or a strange answer
                log.debug("capabilities: none from %s for %s: %r", key[0], model, exc)
                ttl = RETRY_SECONDS
    _capabilities[key] = (time.monotonic() + ttl, found)
    return found


async def _capabilities_of(lookup: Lookup, asks: tuple[Ask, ...]) -> Capabilities:
    """What the first of `asks` that answers says (`ProviderProfile.capabilities`)."""
    if "props" in asks:  # llama.cpp
        props = await lookup.fetch(f"{lookup.root}/props")
        if isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict):
            caps = props.get("chat_template_caps")
            tools = caps.get("supports_tools") if isinstance(caps, dict) else None
            tools = tools if isinstance(tools, bool) else None
            modalities = props.get("modalities")
            vision = modalities.get("vision") if isinstance(modalities, dict) else None
            vision = vision if isinstance(vision, bool) else None
            slots = _positive(props.get("total_slots")) or 0
            n_ctx = _positive(props["default_generation_settings"].get("n_ctx")) or 0
            return Capabilities(tools, True, True, vision, slots, n_ctx)
    if "show" in asks:  # Ollama
        show = await lookup.fetch(f"{lookup.root}/api/show", {"model": lookup.model})
        listed = show.get("capabilities") if isinstance(show, dict) else None
        if isinstance(listed, list):
            return Capabilities(tools="tools" in listed, vision="vision" in listed)
    return Capabilities()


@dataclass(frozen=True)
class ProviderFacts:
    """What a chat turn needs of the provider for its model, read once (`provider_facts`):
    what the server can do, whether images go to the model as images, and the window."""

    caps: Capabilities
    vision: bool  # (`sees_images`)
    window: Window  # (budget.turn_window)
    key: str  # the model of this provider, as the store remembers things of it (`model_key`)


def model_key(settings: ProviderSettings, model: str) -> str:
    """A model of a provider, as what the store remembers of it is keyed (its base URL, the
    model's name)."""
    return f"{settings.base_url.rstrip('/')} {model}"


async def provider_facts(
    settings: ProviderSettings,
    model: str,
    environ: Mapping[str, str],
    learned: Mapping[str, Any] | None = None,
) -> ProviderFacts:
    """The server's capabilities, then the window its metadata states (unless the settings
    name one), each cached (`provider_capabilities`, `provider_window`); `learned`: the windows
    overflow errors stated, by `model_key` (turn_setup.WINDOWS). Never raises."""
    caps = await provider_capabilities(settings, model)
    vision = sees_images(caps, environ)
    stated = None if settings.context_window else await provider_window(settings, model)
    key = model_key(settings, model)
    said = (learned or {}).get(key)
    window = turn_window(settings, model, stated, said if isinstance(said, dict) else None)
    return ProviderFacts(caps, vision, window, key)
