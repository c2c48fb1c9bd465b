from __future__ import annotations

import json
from typing import Any


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def chat_body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "thread-1", "messages": list(messages), "trigger": "submit-message", **extra}


def sse_events(body: str) -> list[dict[str, Any]]:
    """Split an SSE body into chunks, checking the framing our protocol promises."""
    events = [e for e in body.split("\n\n") if e]
    assert events and events[-1] == "data: [DONE]", f"stream must end with [DONE]: {body[-200:]}"
    out = []
    for event in events[:-1]:
        if event.startswith(":"):
            continue  # keep-alive comment
        assert event.startswith("data: ") and "\n" not in event, event
        out.append(json.loads(event[6:]))
    return out


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]
