"""Provider settings: environment variables, the stored settings that override them, and the
masked view the panel may see (the API key is never returned, only whether one is set).

A key is bound to the origin (scheme, host, port) of the base URL it was given for, and is
sent nowhere else: the stored key to the origin it was saved with (`apiKeyOrigin`), the
environment's `LLM_API_KEY` to the origin of `LLM_BASE_URL` (or the default). Pointing the base
URL at another origin without giving a key there leaves the request without a key, so nobody
who can reach the server can make it send the user's key to an address of their choosing.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..base import URL, InvalidURL, RequestError, coded
from .provider_profiles import ProviderProfile, profile_for, retries_for

log = logging.getLogger("comfyui_assistant")

DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"
DEFAULT_TIMEOUT_SECONDS = 300.0
MAX_RETRIES = 10


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
    problems: tuple[str, ...] = field(default=(), compare=False)  # environment_problems
    max_retries: int | None = None  # LLM_MAX_RETRIES; None: the provider profile's policy

    @property
    def retries(self) -> int:
        """How often a failed call is tried again before anything was shown (profile policy:
        hosted 2, local 0; LLM_MAX_RETRIES overrides)."""
        return self.max_retries if self.max_retries is not None else retries_for(self.base_url)

    @property
    def profile(self) -> ProviderProfile:
        return profile_for(self.base_url)

    @property
    def label(self) -> str:
        """The provider's name at the start of a sentence (its profile's)."""
        return self.profile.name

    def describe(self) -> str:
        """One line for a console: the provider, its origin (never the base URL's path, which
        may hold a key; never the key) and the model."""
        model = self.model or "the first model the provider lists"
        key = ", with an API key" if self.api_key else ""
        return f"{self.label} at {origin(self.base_url)}, model: {model}{key}"

    def public(self) -> dict[str, Any]:
        """What the panel may see: everything but the key itself; `origin` is where every
        request to the provider goes (Settings shows it, never the base URL's path)."""
        return {
            "baseUrl": self.base_url,
            "origin": origin(self.base_url),
            "model": self.model,
            "contextWindow": self.context_window,
            "maxOutputTokens": self.max_output_tokens,
            "timeoutSeconds": self.timeout_seconds,
            "apiKeySet": bool(self.api_key),
            "provider": self.label,
            "sources": dict(self.sources),
            "problems": list(self.problems),
        }


KEY_ORIGIN = "apiKeyOrigin"  # stored beside the key: where it may be sent
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """scheme://host:port of a checked base URL (the default port written out), as the HTTP
    client that sends the key reads it."""
    parsed = URL(url)
    host = parsed.host.lower()
    port = parsed.port or DEFAULT_PORTS.get(parsed.scheme, 0)
    return f"{parsed.scheme}://{f'[{host}]' if ':' in host else host}:{port}"


_NAMED = {" ": "a space", "\t": "a tab"}


def _odd_character(value: str) -> str | None:
    """What no base URL has: whitespace, a control character or a backslash (which parsers
    read differently: a tab before the port is dropped by one and refused by another)."""
    for position, char in enumerate(value):
        if char.isspace() or not char.isprintable() or char == "\\":
            name = _NAMED.get(char) or unicodedata.name(char, "a control character")
            return f"{name} (U+{ord(char):04X}) at position {position + 1}"
    return None


def _check_url(value: str) -> str:
    """A base URL the HTTP client accepts as it is (the openai SDK's httpx: checked with its
    own parser, so what is saved is what requests go to), refused with what to fix."""
    example = DEFAULT_BASE_URL
    authority = (value.split("//", 1)[1] if "//" in value else value).split("/", 1)[0]
    if "@" in authority:  # never echo it: it holds a password
        raise RequestError(coded("settings.url_credentials"))
    odd = _odd_character(value)
    if odd is not None:
        raise RequestError(coded("settings.url_character", character=odd))
    if "?" in value or "#" in value:
        raise RequestError(coded("settings.url_query", example=example))
    try:
        url = URL(value)
    except InvalidURL as exc:  # the parser's words; a port is not quoted (a key may be there)
        reason = "Invalid port" if str(exc).startswith("Invalid port") else str(exc)
        raise RequestError(coded("settings.url_invalid", reason=reason, example=example)) from None
    if "://" not in value:
        raise RequestError(coded("settings.url_no_scheme", example=example))
    if url.scheme not in DEFAULT_PORTS or not url.host or url.userinfo:
        got = f"{url.scheme}://{url.host}"  # (never the path, which may hold a key)
        raise RequestError(coded("settings.url_scheme", example=example, got=got))
    if url.port is not None and not 0 < url.port < 65536:
        raise RequestError(coded("settings.url_port", got=str(url.port)))
    if not url.host.isascii():
        raise RequestError(coded("settings.url_ascii"))
    return value.rstrip("/")


def _check_key(value: str) -> str:
    """An HTTP header carries the key: printable ASCII only. Never echo the key itself."""
    for position, char in enumerate(value):
        if not "!" <= char <= "~":
            name = unicodedata.name(char, "a control character") if char != " " else "a space"
            raise RequestError(
                coded(
                    "settings.key_character",
                    character=name,
                    codepoint=f"{ord(char):04X}",
                    position=str(position + 1),
                )
            )
    return value


def coerce(key: str, value: Any) -> Any:
    """Check one setting's value; raise RequestError with what to fix."""
    spec = BY_KEY[key]
    if value is None:
        return None
    if spec.kind is str:
        if not isinstance(value, str) or len(value) > 2000:
            raise RequestError(coded("settings.too_long", key=key))
        value = value.strip()
        if key == "baseUrl" and value:
            value = _check_url(value)
        if key == "apiKey" and value:
            value = _check_key(value)
        return value or None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(coded("settings.not_number", key=key))
    if spec.kind is int and value != int(value):
        raise RequestError(coded("settings.not_whole", key=key))
    if not spec.low <= value <= spec.high:
        low, high = f"{spec.low:g}", f"{spec.high:g}"
        raise RequestError(
            coded("settings.out_of_range", key=key, low=low, high=high, value=str(value))
        )
    return spec.kind(value)


def validate_update(body: Any) -> dict[str, Any]:
    """A PUT body: known keys are checked; null resets a setting to the environment's value."""
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object of provider settings")
    update = {key: coerce(key, body[key]) for key in BY_KEY if key in body}
    if not update:
        raise RequestError(f"nothing to update: send one or more of {', '.join(BY_KEY)}")
    return update


def _environment(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The environment's settings that pass the checks, and why each other one was refused
    (the message never repeats a value that may hold a password)."""
    values: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for spec in FIELDS:
        raw = environ.get(spec.env, "").strip()
        if not raw:
            continue
        try:
            values[spec.key] = coerce(spec.key, raw if spec.kind is str else float(raw))
        except RequestError as exc:
            refused[spec.env] = "the value" + str(exc).removeprefix(spec.key)
        except ValueError:
            refused[spec.env] = "the value must be a number"
    return values, refused


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    return _environment(environ)[0]


def environment_problems(environ: Mapping[str, str]) -> list[str]:
    """What the environment sets but is not used, one sentence each (the log line at start and
    the Settings view say them). A refused LLM_BASE_URL leaves LLM_API_KEY unused: the key was
    given for that address, not for the default one."""
    _values, refused = _environment(environ)
    problems = {env: f"{env} is ignored: {why}" for env, why in refused.items()}
    if environ.get("LLM_MAX_RETRIES", "").strip() and _retries_from(environ) is None:
        problems["LLM_MAX_RETRIES"] = (
            f"LLM_MAX_RETRIES is ignored: it must be a whole number from 0 to {MAX_RETRIES}"
        )
    if "LLM_BASE_URL" in refused and environ.get("LLM_API_KEY", "").strip():
        problems["LLM_BASE_URL"] += (
            "; LLM_API_KEY, given for that address, is sent nowhere until LLM_BASE_URL is "
            "fixed and the server restarted (or enter the provider and its key in Settings)"
        )
    return [f"{problem}." for problem in problems.values()]


def env_key_origin(env: Mapping[str, Any], environ: Mapping[str, str]) -> str | None:
    """Where LLM_API_KEY may go: the origin of LLM_BASE_URL, the default's when it is unset,
    nowhere when it is set but refused."""
    if env.get("baseUrl"):
        return origin(env["baseUrl"])
    return None if environ.get("LLM_BASE_URL", "").strip() else origin(DEFAULT_BASE_URL)


def resolve(stored: Mapping[str, Any], environ: Mapping[str, str]) -> ProviderSettings:
    """Stored settings win over the environment, which wins over the defaults; a key only
    where its origin is the base URL's (see the module docstring)."""
    env = from_environment(environ)
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in FIELDS:
        if spec.key == "apiKey":
            continue
        if stored.get(spec.key) is not None:
            merged[spec.key], sources[spec.key] = stored[spec.key], "settings"
        elif env.get(spec.key) is not None:
            merged[spec.key], sources[spec.key] = env[spec.key], "environment"
    base_url = merged.get("baseUrl", DEFAULT_BASE_URL)
    api_key = None
    if stored.get("apiKey") and stored.get(KEY_ORIGIN) == origin(base_url):
        api_key, sources["apiKey"] = stored["apiKey"], "settings"
    elif env.get("apiKey") and env_key_origin(env, environ) == origin(base_url):
        api_key, sources["apiKey"] = env["apiKey"], "environment"
    return ProviderSettings(
        base_url=base_url,
        api_key=api_key,
        model=merged.get("model"),
        context_window=merged.get("contextWindow"),
        max_output_tokens=merged.get("maxOutputTokens"),
        timeout_seconds=merged.get("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS),
        sources=sources,
        problems=tuple(environment_problems(environ)),
        max_retries=_retries_from(environ),
    )


def _retries_from(environ: Mapping[str, str]) -> int | None:
    """LLM_MAX_RETRIES, 0-10; None when unset or not such a number (environment_problems)."""
    value = environ.get("LLM_MAX_RETRIES", "").strip()
    if not value:
        return None
    return int(value) if value.isdigit() and int(value) <= MAX_RETRIES else None


def _base_url(stored: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    return resolve({k: v for k, v in stored.items() if k != "apiKey"}, environ).base_url


def still_valid(stored: Mapping[str, Any]) -> dict[str, Any]:
    """Stored settings that today's checks accept (a base URL saved with a password, from
    before those were refused, would otherwise show on every page); the others are dropped
    with a warning that does not repeat them."""
    out = dict(stored)
    for spec in FIELDS:
        if out.get(spec.key) is None:
            continue
        try:
            coerce(spec.key, out[spec.key])
        except RequestError as exc:
            log.warning("dropping the stored %s: %s", spec.key, exc)
            out[spec.key] = None
            if spec.key in ("baseUrl", "apiKey"):
                out["apiKey"] = out[KEY_ORIGIN] = None
    return out


def with_key_bound(values: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings whose key (if any) is bound to the base URL they resolve to: for a key just
    given, and for a key stored before keys were bound (it was being sent there)."""
    out = dict(values)
    if out.get("apiKey") and not out.get(KEY_ORIGIN):
        out[KEY_ORIGIN] = origin(_base_url(out, environ))
    return out


def apply_update(
    stored: Mapping[str, Any], update: Mapping[str, Any], environ: Mapping[str, str]
) -> tuple[dict[str, Any], str | None]:
    """The stored values to write for a PUT (None deletes), and a notice for the user when the
    key no longer applies. A key given with the update is bound to the new base URL; a base
    URL moved to another origin without a key clears the stored key."""
    changes = dict(update)
    after = {k: v for k, v in {**stored, **changes}.items() if v is not None}
    new_origin = origin(_base_url(after, environ))
    notice = None
    if "apiKey" in update:
        changes[KEY_ORIGIN] = new_origin if update["apiKey"] else None
    elif stored.get("apiKey") and stored.get(KEY_ORIGIN) != new_origin:
        changes["apiKey"] = changes[KEY_ORIGIN] = None
        notice = (
            f"The stored API key was for {stored.get(KEY_ORIGIN)} and has been removed: a key is "
            f"only sent where it was given. Enter the key for {new_origin}."
        )
    env = from_environment(environ)
    if notice is None and "apiKey" not in update and env.get("apiKey"):
        env_origin = env_key_origin(env, environ)
        if env_origin is not None and env_origin != new_origin and not after.get("apiKey"):
            notice = (
                f"LLM_API_KEY is only sent to {env_origin}; enter a key for {new_origin} if "
                f"it needs one."
            )
    return changes, notice


def with_overrides(
    stored: Mapping[str, Any], overrides: Mapping[str, Any], environ: Mapping[str, str]
) -> dict[str, Any]:
    """The settings a Test button tries: stored values with the form's changes on top; a key
    in the form is bound to the base URL tested, the stored key only applies where it was
    given."""
    merged = {**stored, **overrides}
    if "apiKey" in overrides:
        merged[KEY_ORIGIN] = None
    return with_key_bound(merged, environ)


def settings_of(
    stored: Mapping[str, Any],
    environ: Mapping[str, str],
    overrides: Mapping[str, Any] | None = None,
) -> ProviderSettings:
    """The settings in force: the stored ones (with a Test button's form on top, if given)."""
    return resolve(with_overrides(stored, overrides, environ) if overrides else stored, environ)


def stored_bound(stored: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """Stored settings that today's checks accept, a key bound to where it was being sent."""
    return with_key_bound(still_valid(stored), environ)
