"""The Settings view's "Test" button: is the provider reachable, is the key accepted, is the
model there? One clear verdict, with the models the provider lists.
"""

from __future__ import annotations

from typing import Any

import openai

from .provider import Provider, describe_error

MAX_LISTED = 200


async def _try_completion(provider: Provider, model: str) -> None:
    await provider.complete(model, [{"role": "user", "content": "ping"}], max_tokens=1)


async def check_provider(provider: Provider) -> dict[str, Any]:
    settings = provider.settings
    verdict: dict[str, Any] = {
        "ok": False,
        "provider": settings.label,
        "baseUrl": settings.base_url,
        "reachable": False,
        "auth": "unknown",
        "model": settings.model,
        "modelFound": None,
        "models": [],
        "message": "",
    }
    try:
        models = await provider.list_models(refresh=True)
    except openai.APIStatusError as exc:
        verdict["reachable"] = True
        if exc.status_code in (401, 403):
            verdict["auth"] = "failed"
            verdict["message"] = describe_error(exc, settings, settings.model).message
            return verdict
        models = []  # some servers have no /models; a one-token completion decides below
    except Exception as exc:
        verdict["message"] = describe_error(exc, settings, settings.model).message
        return verdict
    verdict["reachable"] = True
    verdict["models"] = models[:MAX_LISTED]
    model = settings.model or (models[0] if models else None)
    if model is None:
        verdict["message"] = (
            f"{settings.label} is reachable at {settings.base_url} but lists no models — "
            f"set a model name in Settings."
        )
        return verdict
    if models:
        verdict["auth"] = "ok"
        verdict["modelFound"] = model in models
    if not models or model not in models:
        try:
            await _try_completion(provider, model)
        except Exception as exc:
            error = describe_error(exc, settings, model)
            verdict["auth"] = "failed" if error.kind == "auth" else verdict["auth"]
            listed_elsewhere = bool(models) or error.kind == "not_found"
            verdict["modelFound"] = False if listed_elsewhere else None
            verdict["message"] = error.message
            return verdict
        verdict["auth"], verdict["modelFound"] = "ok", True
    verdict["ok"] = True
    verdict["model"] = model
    chosen = "" if settings.model else f" No model is set, so the first listed, {model}, is used."
    verdict["message"] = f"{settings.label} at {settings.base_url} works with {model}.{chosen}"
    return verdict
