"""What differs between OpenAI-compatible providers, as data: one `ProviderProfile` per kind of
server. A provider quirk goes here, keyed by `ProviderKind`, never by a display name: a new
provider is one profile (how to recognize it, where it tells its window and what it can do, how
it names the answer's limit, how often a failed call is retried), not edits in several
functions.

The kind is recognized from the base URL (a host, else a default port: `kind_of`); anything
else is `GENERIC`, which tries every lookup.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit

from ..base import WORDS


class ProviderKind(str, Enum):
    OLLAMA = "ollama"
    LM_STUDIO = "lmstudio"
    LLAMA_CPP = "llamacpp"
    OPENAI = "openai"
    OPENROUTER = "openrouter"
    GROQ = "groq"
    GENERIC = "generic"


Probe = str  # a window lookup of provider_probes.Lookup: "ollama", "lmstudio", "listing", "props"
Ask = str  # where a server says what it can do: "props" (llama.cpp), "show" (Ollama)


@dataclass(frozen=True)
class ProviderProfile:
    kind: ProviderKind
    name: str
    """How messages name it at the start of a sentence ("Ollama is not reachable ...")."""
    probes: tuple[Probe, ...]
    """Where its context window can be read, in the order to ask (provider_probes)."""
    install_hint: str = ""
    """How to get a missing model, with {model} for its name ("" when there is no command)."""
    output_limit: str = "max_tokens"
    """The request field that caps the answer's tokens: OpenAI's newer models (o-series,
    gpt-5) refuse `max_tokens` and take `max_completion_tokens`, which all its chat models
    accept; OpenAI-compatible servers widely take `max_tokens`."""
    retries: int | None = None
    """How often a model call is tried again after a rate limit (429), a server error (5xx) or
    a dropped connection, before anything of the answer was shown, waiting as the server's
    `Retry-After` says (the openai SDK's own retry). None: by where the server is
    (`retries_for`)."""
    capabilities: tuple[Ask, ...] = ()
    """Where it says what it can do with a model (tools, vision, slots), in the order to ask
    (provider_probes.provider_capabilities); () asks nothing."""
    host: str = ""
    """A pattern of its host names (searched, lower case): "openai\\.com$"."""
    port: int | None = None
    """Its usual port, for a host that names no kind (a local server)."""

    @property
    def subject(self) -> str:
        """The name in the middle of a sentence: "the provider", not "The provider"."""
        return self.name[0].lower() + self.name[1:] if self.name.startswith("The ") else self.name

    @property
    def named(self) -> bool:
        """Whether the name says which server this is (not just "the provider")."""
        return self.kind is not ProviderKind.GENERIC


# A hosted service sheds load with 429 and 503 and says when to come back: a couple of retries
# hide that from the user. A server on this machine or network that fails will fail again (it is
# loading a model, or out of memory), and a retry only makes the user wait longer.
HOSTED_RETRIES = 2
LOCAL_RETRIES = 0

PROFILES: dict[ProviderKind, ProviderProfile] = {
    profile.kind: profile
    for profile in (
        # (the hosted ones first: a host that names one is that one, whatever its port)
        ProviderProfile(
            ProviderKind.OPENROUTER,
            "OpenRouter",
            ("listing",),
            retries=HOSTED_RETRIES,
            host=r"openrouter\.ai",
        ),
        ProviderProfile(  # (its /models has no lengths)
            ProviderKind.OPENAI,
            "OpenAI",
            (),
            output_limit="max_completion_tokens",
            retries=HOSTED_RETRIES,
            host=r"openai\.com$",
        ),
        ProviderProfile(
            ProviderKind.GROQ, "Groq", ("listing",), retries=HOSTED_RETRIES, host=r"groq\.com"
        ),
        ProviderProfile(
            ProviderKind.OLLAMA,
            "Ollama",
            ("ollama",),
            install_hint="ollama pull {model}",
            retries=LOCAL_RETRIES,
            capabilities=("show",),
            host="ollama",
            port=11434,
        ),
        ProviderProfile(
            ProviderKind.LM_STUDIO, "LM Studio", ("lmstudio",), retries=LOCAL_RETRIES, port=1234
        ),
        ProviderProfile(
            ProviderKind.LLAMA_CPP,
            WORDS["llama_cpp"],
            ("props", "listing"),
            retries=LOCAL_RETRIES,
            capabilities=("props",),
            port=8080,
        ),
        ProviderProfile(
            ProviderKind.GENERIC,
            WORDS["provider"],
            ("listing", "props", "ollama", "lmstudio"),
            capabilities=("props", "show"),
        ),
    )
}


def kind_of(base_url: str) -> ProviderKind:
    """The kind of server at this base URL, from its host or its usual port."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    for profile in PROFILES.values():
        if profile.host and re.search(profile.host, host):
            return profile.kind
    for profile in PROFILES.values():
        if port is not None and profile.port == port:
            return profile.kind
    return ProviderKind.GENERIC


def profile_for(base_url: str) -> ProviderProfile:
    return PROFILES[kind_of(base_url)]


def is_local_host(host: str) -> bool:
    """Whether a host name is this machine or its network: loopback, private and link-local
    addresses, `localhost`, `.local`/`.lan`/`.internal` names, and single-label names (a
    container's or a LAN machine's)."""
    host = host.lower().strip("[]").rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return (
            host == "localhost"
            or "." not in host
            or host.endswith((".local", ".lan", ".internal", ".localhost"))
        )
    return address.is_loopback or address.is_private or address.is_link_local


def retries_for(base_url: str) -> int:
    """How often a failed model call is retried (`ProviderProfile.retries`): the profile's
    choice, else by where the server is."""
    chosen = profile_for(base_url).retries
    if chosen is not None:
        return chosen
    host = urlsplit(base_url).hostname or ""
    return LOCAL_RETRIES if is_local_host(host) else HOSTED_RETRIES


# --- overflow errors: every kind's wording, recognized whoever sent it --------------------------

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
# llama.cpp's KV cache filled while decoding (its slots share one cache: several requests at
# once needed more than it holds): every request decoding then fails with it, HTTP 500 or an
# error event in a stream that started. A failure of that moment, not of the window: a prompt
# too long for its slot is refused before decoding (`exceed_context_size_error`, above).
_CACHE_FULL = re.compile(r"context size has been exceeded", re.I)


def window_from_error(message: str) -> int | None:
    """The window a provider's "context length exceeded" error states, or None."""
    for pattern in _WINDOW_IN_ERROR:
        found = pattern.search(message)
        tokens = int(found.group(1).replace(",", "")) if found else 0
        if tokens > 0:
            return tokens
    return None


def is_cache_full(message: str) -> bool:
    """Whether a provider error is llama.cpp's shared cache filling while decoding (transient:
    the same request fits once the other requests are done; core/provider/shared_cache.py)."""
    return bool(_CACHE_FULL.search(message))


def is_context_overflow(status: int | None, message: str, code: str | None) -> bool:
    """Whether a provider error means the request did not fit the model's window."""
    # (429 "Request too large ... tokens per min": a rate limit, not the window)
    if status == 429 or is_cache_full(message):
        return False
    if code in _OVERFLOW_CODES:
        return True
    return bool(_OVERFLOW.search(message)) or window_from_error(message) is not None
