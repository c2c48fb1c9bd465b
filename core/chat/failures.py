"""Who a failure during a turn belongs to. The provider's (core/provider/provider.py
`is_provider_error`) are told as the provider's, with what to do; anything else is ours: logged
with its traceback and told as a bug in the assistant, never as the provider's failing."""

from __future__ import annotations

import logging

from ..base import Message, coded, message_of
from ..provider import Provider, describe_error, is_provider_error

log = logging.getLogger("comfyui_assistant")

BUG = "bug"  # the error kind of ours (the provider's: ProviderError.kind)


def owned_error(
    exc: BaseException, provider: Provider, model: str | None, started: bool = False
) -> tuple[Message, str]:
    """What to answer with, and the error's kind: the provider's own message, or ours
    (logged here with its traceback)."""
    if is_provider_error(exc):
        error = describe_error(exc, provider.settings, model, started)
        return message_of(error), error.kind
    log.error("a chat turn failed on a bug of ours", exc_info=exc)
    return coded("stream.bug", error=type(exc).__name__), BUG
