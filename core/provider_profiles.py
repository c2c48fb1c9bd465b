"""What differs between OpenAI-compatible providers, as data: one `ProviderProfile` per kind of
server. A provider quirk goes here, keyed by `ProviderKind`, never by a display name.

The kind is recognized from the base URL (a host or a default port); anything else is
`GENERIC`, which tries every metadata lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit


class ProviderKind(str, Enum):
    OLLAMA = "ollama"
    LM_STUDIO = "lmstudio"
    LLAMA_CPP = "llamacpp"
    OPENAI = "openai"
    OPENROUTER = "openrouter"
    GROQ = "groq"
    GENERIC = "generic"


Probe = str  # a window lookup of budget._Lookup: "ollama", "lmstudio", "listing", "props"


@dataclass(frozen=True)
class ProviderProfile:
    kind: ProviderKind
    name: str
    """How messages name it at the start of a sentence ("Ollama is not reachable ...")."""
    probes: tuple[Probe, ...]
    """Where its context window can be read, in the order to ask (budget.provider_window)."""
    install_hint: str = ""
    """How to get a missing model, with {model} for its name ("" when there is no command)."""

    @property
    def subject(self) -> str:
        """The name in the middle of a sentence: "the provider", not "The provider"."""
        return self.name[0].lower() + self.name[1:] if self.name.startswith("The ") else self.name

    @property
    def named(self) -> bool:
        """Whether the name says which server this is (not just "the provider")."""
        return self.kind is not ProviderKind.GENERIC


PROFILES: dict[ProviderKind, ProviderProfile] = {
    profile.kind: profile
    for profile in (
        ProviderProfile(
            ProviderKind.OLLAMA, "Ollama", ("ollama",), install_hint="ollama pull {model}"
        ),
        ProviderProfile(ProviderKind.LM_STUDIO, "LM Studio", ("lmstudio",)),
        ProviderProfile(ProviderKind.LLAMA_CPP, "The llama.cpp server", ("props", "listing")),
        ProviderProfile(ProviderKind.OPENAI, "OpenAI", ()),  # its /models has no lengths
        ProviderProfile(ProviderKind.OPENROUTER, "OpenRouter", ("listing",)),
        ProviderProfile(ProviderKind.GROQ, "Groq", ("listing",)),
        ProviderProfile(
            ProviderKind.GENERIC, "The provider", ("listing", "props", "ollama", "lmstudio")
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
    if "openrouter.ai" in host:
        return ProviderKind.OPENROUTER
    if host.endswith("openai.com"):
        return ProviderKind.OPENAI
    if "groq.com" in host:
        return ProviderKind.GROQ
    if port == 11434 or "ollama" in host:
        return ProviderKind.OLLAMA
    if port == 1234:
        return ProviderKind.LM_STUDIO
    if port == 8080:
        return ProviderKind.LLAMA_CPP
    return ProviderKind.GENERIC


def profile_for(base_url: str) -> ProviderProfile:
    return PROFILES[kind_of(base_url)]
