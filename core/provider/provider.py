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

from ..base import PROVIDER, CodedError, Message, OpenAIMessage, Request, coded, message_of, named
from ..stream import redact, remember_secret
from .budget import ContextBudgetError
from .provider_config import ProviderSettings, origin

# Local servers ignore the key but the client insists on one.
PLACEHOLDER_KEY = "not-needed"


@dataclass(frozen=True)
class Completed:
    text: str
    finish_reason: str | None  # "stop", "length" (cut at max_tokens), ... or None if not said


class ProviderError(CodedError):
    """A provider failure with a message safe to show the user (no secrets, no traceback)."""

    def __init__(self, message: Message, kind: str, status: int | None = None) -> None:
        super().__init__(message)
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
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, ContextBudgetError):  # (e.g. the retry after an overflow cannot fit)
        return ProviderError(message_of(exc), "context_budget")
    name, url = settings.label, settings.base_url
    if isinstance(exc, openai.APITimeoutError) and not _failed_to_connect(exc):
        seconds = settings.timeout_seconds
        return ProviderError(
            coded("provider.timeout", name=name, url=url, seconds=seconds), "timeout"
        )
    if isinstance(exc, openai.APIConnectionError):
        if started:
            subject = settings.profile.subject
            return ProviderError(coded("provider.broken_stream", subject=subject), "broken_stream")
        return ProviderError(coded("provider.unreachable", name=name, url=url), "unreachable")
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, settings, model)
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        detail = redact(" ".join(str(exc.message).split())[:300], (settings.api_key,))
        return ProviderError(
            coded("provider.stream_error", name=name, detail=detail), "stream_error"
        )
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return ProviderError(coded("provider.malformed", name=name), "malformed")
    error = type(exc).__name__
    return ProviderError(coded("provider.unknown", name=name, error=error), "unknown")


def is_provider_error(exc: BaseException) -> bool:
    """Whether a failure is the provider's: the client's errors (HTTP, connection, timeout, an
    error event in the stream), ours that say so (ProviderError, a request that cannot fit),
    a probe's HTTP failure, or data the client could not decode (raised inside it). Anything
    else is a bug of ours, never told as the provider's."""
    owned = (ProviderError, ContextBudgetError, openai.APIError, aiohttp.ClientError)
    if isinstance(exc, (*owned, asyncio.TimeoutError)):
        return True
    return isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)) and _in_client(exc)


def _in_client(exc: BaseException) -> bool:
    """Raised inside the `openai` client (its SSE decoding of the provider's bytes)."""
    tb = exc.__traceback__
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith("openai."):
            return True
        tb = tb.tb_next
    return False


def _status_error(
    exc: openai.APIStatusError, settings: ProviderSettings, model: str | None
) -> ProviderError:
    """An HTTP error status from the provider, by what it means for the user."""
    name, url, status = settings.label, settings.base_url, exc.status_code
    detail = redact(_provider_detail(exc), (settings.api_key,))
    if status in (401, 403):
        moved = _redirected_away(exc, settings)
        if moved:
            why = coded("provider.auth_redirected", name=name, status=str(status), moved=moved)
        else:
            why = coded("provider.auth", name=name, status=str(status))
        return ProviderError(why, "auth", status)
    if status == 404:
        hint = settings.profile.install_hint
        if not model:
            why = coded("provider.endpoint_not_found", name=name, url=url, detail=detail)
        elif hint:
            command = hint.format(model=model)
            why = coded(
                "provider.model_not_found_pull",
                name=name, url=url, model=model, detail=detail, command=command,
            )  # fmt: skip
        else:
            why = coded("provider.model_not_found", name=name, url=url, model=model, detail=detail)
        return ProviderError(why, "not_found", status)
    if status == 429:
        return ProviderError(
            coded("provider.rate_limit", name=name, detail=detail), "rate_limit", status
        )
    if status >= 500:
        why = coded("provider.server", name=name, status=str(status), detail=detail)
        return ProviderError(why, "server", status)
    kind = "context_length" if "context" in detail.lower() else "bad_request"
    why = coded(f"provider.{kind}", name=name, status=str(status), detail=detail)
    return ProviderError(why, kind, status)


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
            return named(PROVIDER, aiohttp_client(event_hooks=hooks))
        except RuntimeError:  # the SDK has the class but not the package behind it
            pass
    return named(PROVIDER, openai.DefaultAsyncHttpxClient(event_hooks=hooks))


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
            settings = self.settings
            none = coded("provider.no_model", name=settings.label, url=settings.base_url)
            raise ProviderError(none, "no_model")
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
