"""Provider settings: environment variables, the stored settings that override them, and the
masked view the panel may see (the API key is never returned, only whether one is set).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .chat_request import RequestError

log = logging.getLogger("comfyui_assistant")

DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"
DEFAULT_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class Field:
    key: str  # the API's camelCase name, also the stored key
    env: str
    kind: type
    low: float = 0
    high: float = 0


FIELDS = (
    Field("baseUrl", "LLM_BASE_URL", str),
    Field("apiKey", "LLM_API_KEY", str),
    Field("model", "LLM_MODEL", str),
    Field("contextWindow", "LLM_CONTEXT_WINDOW", int, 512, 10_000_000),
    Field("maxOutputTokens", "LLM_MAX_OUTPUT_TOKENS", int, 16, 1_000_000),
    Field("timeoutSeconds", "LLM_TIMEOUT_SECONDS", float, 1, 3600),
)
BY_KEY = {f.key: f for f in FIELDS}


@dataclass(frozen=True)
class ProviderSettings:
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    model: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def label(self) -> str:
        return provider_label(self.base_url)

    def public(self) -> dict[str, Any]:
        """What the panel may see: everything but the key itself."""
        return {
            "baseUrl": self.base_url,
            "model": self.model,
            "contextWindow": self.context_window,
            "maxOutputTokens": self.max_output_tokens,
            "timeoutSeconds": self.timeout_seconds,
            "apiKeySet": bool(self.api_key),
            "provider": self.label,
            "sources": dict(self.sources),
        }


def provider_label(base_url: str) -> str:
    """A human name for error messages ("Ollama is not reachable at ...")."""
    parts = urlsplit(base_url)
    host, port = (parts.hostname or "").lower(), parts.port
    if "openrouter.ai" in host:
        return "OpenRouter"
    if host.endswith("openai.com"):
        return "OpenAI"
    if "groq.com" in host:
        return "Groq"
    if port == 11434 or "ollama" in host:
        return "Ollama"
    if port == 1234:
        return "LM Studio"
    if port == 8080:
        return "The llama.cpp server"
    return "The provider"


def _check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RequestError(
            f"baseUrl must be an http(s) URL such as {DEFAULT_BASE_URL} (got {value!r})"
        )
    return value.rstrip("/")


def coerce(key: str, value: Any) -> Any:
    """Check one setting's value; raise RequestError with what to fix."""
    spec = BY_KEY[key]
    if value is None:
        return None
    if spec.kind is str:
        if not isinstance(value, str) or len(value) > 2000:
            raise RequestError(f"{key} must be a string of at most 2000 characters")
        value = value.strip()
        if key == "baseUrl" and value:
            value = _check_url(value)
        return value or None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(f"{key} must be a number")
    if spec.kind is int and value != int(value):
        raise RequestError(f"{key} must be a whole number")
    if not spec.low <= value <= spec.high:
        raise RequestError(f"{key} must be between {spec.low:g} and {spec.high:g} (got {value})")
    return spec.kind(value)


def validate_update(body: Any) -> dict[str, Any]:
    """A PUT body: known keys are checked; null resets a setting to the environment's value."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object of provider settings")
    update = {key: coerce(key, body[key]) for key in BY_KEY if key in body}
    if not update:
        raise RequestError(f"nothing to update: send one or more of {', '.join(BY_KEY)}")
    return update


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for spec in FIELDS:
        raw = environ.get(spec.env, "").strip()
        if not raw:
            continue
        try:
            values[spec.key] = coerce(spec.key, raw if spec.kind is str else float(raw))
        except (RequestError, ValueError) as exc:
            log.warning("ignoring %s: %s", spec.env, exc)
    return values


def resolve(stored: Mapping[str, Any], environ: Mapping[str, str]) -> ProviderSettings:
    """Stored settings win over the environment, which wins over the defaults."""
    env = from_environment(environ)
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in FIELDS:
        if stored.get(spec.key) is not None:
            merged[spec.key], sources[spec.key] = stored[spec.key], "settings"
        elif env.get(spec.key) is not None:
            merged[spec.key], sources[spec.key] = env[spec.key], "environment"
    return ProviderSettings(
        base_url=merged.get("baseUrl", DEFAULT_BASE_URL),
        api_key=merged.get("apiKey"),
        model=merged.get("model"),
        context_window=merged.get("contextWindow"),
        max_output_tokens=merged.get("maxOutputTokens"),
        timeout_seconds=merged.get("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS),
        sources=sources,
    )
