"""The OpenAI-compatible provider: one cached `AsyncOpenAI` client per settings, model choice,
the connection check, and failures turned into messages that say what to do.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import openai

from ..base.http_client import Request
from ..base.wire_types import OpenAIMessage
from ..stream.redact import redact, remember_secret
from .budget import ContextBudgetError
from .provider_config import ProviderSettings, origin

# Local servers ignore the key but the client insists on one.
PLACEHOLDER_KEY = "not-needed"
SETTINGS_HINT = "set the provider in Settings"


@dataclass(frozen=True)
class Completed:
    text: str
    finish_reason: str | None  # "stop", "length" (cut at max_tokens), ... or None if not said


class ProviderError(Exception):
    """A provider failure with a message safe to show the user (no secrets, no traceback)."""

    def __init__(self, message: str, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status


def _provider_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) or not message.strip():
        message = exc.message
    return " ".join(str(message).split())[:300]


def _failed_to_connect(exc: BaseException) -> bool:
    """A connection that failed rather than timed out: the SDK's aiohttp transport reports
    every aiohttp connection error (a refused port, a dropped connection) as a timeout."""
    cause = exc.__cause__
    for _ in range(8):  # the chain is short: SDK error, httpx error, aiohttp error
        if cause is None:
            return False
        if isinstance(cause, aiohttp.ClientConnectionError):
            return not isinstance(cause, asyncio.TimeoutError)
        cause = cause.__cause__
    return False


def _redirected_away(exc: openai.APIStatusError, settings: ProviderSettings) -> str | None:
    """The origin a redirect took a keyed request to (without its key), if it did."""
    final = origin(str(exc.response.request.url))
    return final if settings.api_key and final != origin(settings.base_url) else None


def describe_error(
    exc: BaseException, settings: ProviderSettings, model: str | None, started: bool = False
) -> ProviderError:
    """Turn any failure of a provider call into a ProviderError that says what to do."""
    name, url = settings.label, settings.base_url
    secrets = (settings.api_key,)
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, ContextBudgetError):  # (e.g. the retry after an overflow cannot fit)
        return ProviderError(exc.message, "context_budget")
    if isinstance(exc, openai.APITimeoutError) and not _failed_to_connect(exc):
        return ProviderError(
            f"{name} at {url} did not answer within {settings.timeout_seconds:g} s — it may "
            f"still be loading the model or be overloaded; try again, or raise timeoutSeconds "
            f"in Settings.",
            "timeout",
        )
    if isinstance(exc, openai.APIConnectionError):
        if started:
            return ProviderError(
                f"The connection to {settings.profile.subject} broke off in the middle of the "
                f"answer — the part already shown is kept; try again.",
                "broken_stream",
            )
        return ProviderError(
            f"{name} is not reachable at {url} — start it or {SETTINGS_HINT}.", "unreachable"
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = redact(_provider_detail(exc), secrets)
        if status in (401, 403):
            hint = "set a valid API key in Settings or LLM_API_KEY"
            moved = _redirected_away(exc, settings)
            if moved:
                hint = (
                    f"it redirected the request to {moved}, where the key is not sent (a key "
                    f"goes only to the address it was given for): set the base URL to the "
                    f"address it redirects to"
                )
            return ProviderError(
                f"{name} rejected the request as unauthorized (HTTP {status}) — {hint}.",
                "auth",
                status,
            )
        if status == 404:
            what = f"model '{model}'" if model else "the endpoint"
            hint = settings.profile.install_hint
            pull = f" (for {name}: {hint.format(model=model)})" if hint and model else ""
            return ProviderError(
                f"{name} at {url} does not know {what} (HTTP 404: {detail}) — choose an "
                f"installed model or check the base URL in Settings{pull}.",
                "not_found",
                status,
            )
        if status == 429:
            return ProviderError(
                f"{name} is rate-limiting requests (HTTP 429: {detail}) — wait a moment and "
                f"try again, or check your plan's limits.",
                "rate_limit",
                status,
            )
        if status >= 500:
            return ProviderError(
                f"{name} failed with HTTP {status} ({detail}) — try again; if it keeps "
                f"failing, look at the server's log.",
                "server",
                status,
            )
        kind = "context_length" if "context" in detail.lower() else "bad_request"
        return ProviderError(f"{name} refused the request (HTTP {status}: {detail}).", kind, status)
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        detail = redact(" ".join(str(exc.message).split())[:300], secrets)
        return ProviderError(f"{name} reported an error mid-answer: {detail}", "stream_error")
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return ProviderError(
            f"{name} sent a malformed stream chunk that is not JSON — the answer stopped "
            f"there; try again, and if it repeats, check that the base URL points at an "
            f"OpenAI-compatible /v1 endpoint.",
            "malformed",
        )
    return ProviderError(
        f"The request to {name} failed unexpectedly ({type(exc).__name__}) — try again.",
        "unknown",
    )


def _keep_key_home(base_url: str) -> Callable[[Request], Awaitable[None]]:
    """A hook on every request the client sends, redirects included: the key goes only to the
    origin (scheme, host, port) it is bound to. The HTTP library drops it on a redirect to
    another origin, except from http://host to https://host, which keeps it."""
    home = origin(base_url)

    async def hook(request: Request) -> None:
        if origin(str(request.url)) != home:
            request.headers.pop("Authorization", None)

    return hook


def _http_client(base_url: str) -> Any:
    """The SDK's aiohttp transport where it has one (`openai[aiohttp]`, vendored in newer
    releases): it delivers a request sooner and relays chunks with less overhead than the
    default httpx transport; else the SDK's default client. Both follow redirects (a local
    server behind an http→https redirect keeps working without a key), never with the key to
    another origin."""
    hooks = {"request": [_keep_key_home(base_url)]}
    aiohttp_client = getattr(openai, "DefaultAioHttpClient", None)
    if aiohttp_client is not None:
        try:
            return aiohttp_client(event_hooks=hooks)
        except RuntimeError:  # the SDK has the class but not the package behind it
            pass
    return openai.DefaultAsyncHttpxClient(event_hooks=hooks)


_OUR_BASE_URLS: set[str] = set()


class _QuietModelCalls(logging.Filter):
    """The HTTP library logs every request at INFO: one line per model call in ComfyUI's
    console. Ours are dropped (our own log line per answer says more); others' are kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.INFO:
            return True
        message = record.getMessage()
        return not (
            message.startswith("HTTP Request:") and any(u in message for u in _OUR_BASE_URLS)
        )


def _quiet_http_logs(base_url: str) -> None:
    _OUR_BASE_URLS.add(base_url)
    for name in ("httpx", "httpx2"):  # the openai SDK's HTTP library, by release
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietModelCalls) for f in logger.filters):
            logger.addFilter(_QuietModelCalls())


class Provider:
    """An `AsyncOpenAI` client for one settings snapshot (it keeps its connection pool)."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        remember_secret(settings.api_key)  # scrubbed from every log line and provider text
        _quiet_http_logs(settings.base_url)
        self.client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or PLACEHOLDER_KEY,
            timeout=openai.Timeout(settings.timeout_seconds, connect=10.0),
            max_retries=settings.retries,  # the profile's policy (provider_profiles)
            http_client=_http_client(settings.base_url),
        )
        self._models: list[str] | None = None
        self.active = 0  # streams in flight; a replaced client is closed once this is 0

    async def close(self) -> None:
        await self.client.close()

    async def list_models(self, refresh: bool = False) -> list[str]:
        if self._models is None or refresh:
            page = await self.client.models.list()
            ids = [m.id for m in page.data if isinstance(getattr(m, "id", None), str) and m.id]
            self._models = [redact(i, (self.settings.api_key,)) for i in ids]
        return self._models

    async def choose_model(self) -> tuple[str, str]:
        """The model to use and where it came from ("settings", "environment" or "auto")."""
        if self.settings.model:
            return self.settings.model, self.settings.sources.get("model", "settings")
        try:
            models = await self.list_models()
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise
            models = []
        if not models:
            raise ProviderError(
                f"{self.settings.label} at {self.settings.base_url} lists no models and none is "
                f"configured — set LLM_MODEL or choose a model in Settings.",
                "no_model",
            )
        return models[0], "auto"

    async def complete(
        self,
        model: str,
        messages: Sequence[OpenAIMessage],
        max_tokens: int,
        temperature: float | None = None,
        tools: Sequence[dict[str, Any]] = (),
        slot: int | None = None,
    ) -> Completed:
        """One chat completion, not streamed: its text (redacted) and why it ended. `tools`
        are offered but not to be called (`tool_choice: none`): a request that shares a chat
        request's system message and tools shares its cached prefix on a local server."""
        body: dict[str, Any] = {"model": model, "messages": messages}
        body[self.settings.profile.output_limit] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if tools:
            body["tools"], body["tool_choice"] = list(tools), "none"
        if slot is not None:  # (llama.cpp: the server slot whose cache to use)
            body["id_slot"] = slot
        response: Any = await self.client.post("/chat/completions", cast_to=object, body=body)
        choices = response.get("choices") if isinstance(response, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else {}
        message = choice.get("message") if isinstance(choice, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        return Completed(
            redact(str(text or ""), (self.settings.api_key,)),
            finish if isinstance(finish, str) else None,
        )

    async def stream(
        self,
        model: str,
        messages: Sequence[OpenAIMessage],
        tools: list[dict[str, Any]],
        max_tokens: int,
        progress: bool = False,
        slot: int | None = None,
    ) -> openai.AsyncStream[Any]:
        """Open a streamed chat completion of raw chunk dicts, of at most `max_tokens` (the
        answer's reserve); the caller must close it.

        The client's low-level `post` keeps its request building, error types and SSE decoding
        but skips re-validating the whole history on every request and building a pydantic
        model per chunk, which cost more than everything else on this path together.
        """
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = tools
        body[self.settings.profile.output_limit] = max_tokens
        if progress:  # (llama.cpp: prompt-processing progress in the stream)
            body["return_progress"] = True
        if slot is not None:  # (llama.cpp: the server slot whose cache to use)
            body["id_slot"] = slot
        return await self.client.post(
            "/chat/completions",
            cast_to=object,
            body=body,
            stream=True,
            stream_cls=openai.AsyncStream[Any],
        )
