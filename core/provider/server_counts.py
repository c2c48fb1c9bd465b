"""Exact counts from the server's own tokenizer, for calibrating the correction.

llama.cpp's llama-server renders a chat request with its chat template (`POST /apply-template`:
the body of a chat completion -> `{"prompt": text}`) and tokenizes text (`POST /tokenize`:
`{"content", "add_special": true}` -> `{"tokens": [...]}`, with the BOS token, as it tokenizes a
chat prompt). Rendering one request three ways -- whole, without the tools, without the system
message either -- gives the server's count of each component: tools = whole - without tools,
system = without tools - without system, messages = the rest (template tokens and the reply's
priming included). A template that renders no tools gives tools = 0: the server drops them.

The request path stays a plain computation: this runs once per (base URL, model) every
CALIBRATE_SECONDS, on the first request of a chat, and its counts calibrate the per-component
correction (`Correction.calibrate`), which then sizes every request without asking the server.
Never raises: a server that does not answer is asked again only after CALIBRATE_SECONDS, and
the learned or estimated factors stand meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from ..base import PROVIDER, OpenAIMessage, client_session
from ..tokens import Parts
from .provider_config import ProviderSettings
from .provider_probes import Lookup

log = logging.getLogger("comfyui_assistant")

SOURCE = "llama.cpp /tokenize"  # what the report names as the counts' source
CALIBRATE_SECONDS = 600.0

_next: dict[tuple[str, str], float] = {}  # (base URL, model) -> when to measure again


def clear_calibrations() -> None:
    _next.clear()


def calibration_due(settings: ProviderSettings, model: str) -> bool:
    """Whether this server's counts for `model` should be measured now (not measured, or
    measured more than CALIBRATE_SECONDS ago)."""
    return _next.get((settings.base_url.rstrip("/"), model), 0.0) <= time.monotonic()


async def server_parts(
    settings: ProviderSettings,
    model: str,
    messages: Sequence[OpenAIMessage],
    tools: Sequence[dict[str, Any]],
) -> Parts | None:
    """The server's token counts of a request's system message (the first), tools and other
    messages; None when it does not answer. Marks the calibration done either way."""
    _next[(settings.base_url.rstrip("/"), model)] = time.monotonic() + CALIBRATE_SECONDS
    if not messages or messages[0].get("role") != "system":
        return None
    variants: list[dict[str, Any]] = [{"messages": messages[1:]}, {"messages": messages}]
    if tools:
        variants.append({"messages": messages, "tools": tools})
    try:
        async with client_session(PROVIDER) as session:
            lookup = Lookup(settings, model, session)
            counts = await asyncio.gather(
                *(_count(lookup, {**v, "model": model}) for v in variants)
            )
    except Exception as exc:  # unreachable, or an answer of another shape
        log.debug("token calibration: none from %s for %s: %r", settings.base_url, model, exc)
        return None
    if any(n is None for n in counts):
        return None
    rest, system, *whole = [n for n in counts if n is not None]
    return Parts(system - rest, whole[0] - system if whole else 0, rest)


async def _count(lookup: Lookup, body: dict[str, Any]) -> int | None:
    """Tokens of a chat request as the server renders it."""
    rendered = await lookup.fetch(f"{lookup.root}/apply-template", body)
    prompt = rendered.get("prompt") if isinstance(rendered, dict) else None
    if not isinstance(prompt, str):
        return None
    request = {"content": prompt, "add_special": True, "with_pieces": False}
    tokens = await lookup.fetch(f"{lookup.root}/tokenize", request)
    found = tokens.get("tokens") if isinstance(tokens, dict) else None
    return len(found) if isinstance(found, list) else None
