"""The validator: every assembled request must satisfy what providers enforce (docs/DESIGN.md §7).

A violation is a bug in an earlier step. Under tests (`COMFY_ASSISTANT_STRICT=1`, set by the
test suite) it raises; in production the request is repaired — orphans dropped, missing
results synthesized, user turns merged — and the repair is logged, so the user still gets an
answer rather than a provider's HTTP 400.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..base import OpenAIMessage

Message = OpenAIMessage
log = logging.getLogger("comfyui_assistant")
MISSING_RESULT = "The tool did not run: no result was recorded."


class ContextInvariantError(AssertionError):
    """An assembled request that a provider would reject."""


def problems(messages: list[Message]) -> list[str]:
    """Every invariant the request breaks, described; [] when it is valid. (One pass: a
    1,400-message request takes a fraction of a millisecond.)"""
    found: list[str] = []
    if not messages or messages[0].get("role") != "system":
        found.append("the first message is not the system message")
    if len(messages) > 1 and messages[1].get("role") != "user":
        found.append(f"the first turn is {messages[1].get('role')}, not user")
    pending: set[str] = set()
    seen_ids: set[str] = set()
    previous: str | None = None
    for i, m in enumerate(messages):
        role = m["role"]
        if role == "tool":
            call_id = m.get("tool_call_id", "")
            if call_id not in pending:
                found.append(f"message {i}: a tool result without its call")
            pending.discard(call_id)
            previous = role
            continue
        if pending:
            found.append(f"message {i}: calls without results: {sorted(pending)}")
            pending = set()
        if role == "assistant":
            calls = m.get("tool_calls")
            if not calls and not m.get("content"):
                found.append(f"message {i}: an empty assistant message")
            for call in calls or ():
                call_id = call.get("id") or ""
                if not call_id or call_id in seen_ids:
                    found.append(f"message {i}: a missing or repeated tool call id")
                seen_ids.add(call_id)
                pending.add(call_id)
        elif role == "user" and previous == "user":
            found.append(f"message {i}: two user messages in a row")
        elif role == "system" and i > 0:
            found.append("a second system message")
        previous = role
    if pending:
        found.append(f"the request ends with calls without results: {sorted(pending)}")
    return found


def _parts(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def repair(messages: list[Message]) -> list[Message]:
    """A request providers accept, made from an invalid one with the least change: results
    without their call and calls with a missing or repeated id dropped, missing results
    synthesized, empty assistant messages dropped, user turns in a row merged."""
    out: list[Message] = [m for m in messages[:1]]
    pending: list[str] = []
    seen: set[str] = set()

    def settle() -> None:
        for call_id in pending:
            out.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT})
        pending.clear()

    for m in messages[1:]:
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") in pending:
                pending.remove(m["tool_call_id"])
                out.append(m)
            continue
        settle()
        if role == "system":
            continue
        if role == "assistant" and m.get("tool_calls"):
            calls = [c for c in m["tool_calls"] if c.get("id") and c["id"] not in seen]
            seen.update(c["id"] for c in calls)
            if len(calls) < len(m["tool_calls"]):
                m = m.copy()
                del m["tool_calls"]
                if calls:
                    m["tool_calls"] = calls
        if role == "assistant" and not m.get("tool_calls") and not m.get("content"):
            continue
        if role == "user" and out and out[-1].get("role") == "user":
            previous, current = out[-1]["content"], m["content"]
            if isinstance(previous, str) and isinstance(current, str):
                out[-1] = {**out[-1], "content": f"{previous}\n\n{current}"}
            else:
                out[-1] = {**out[-1], "content": _parts(previous) + _parts(current)}
            continue
        out.append(m)
        pending.extend(c["id"] for c in m.get("tool_calls") or [])
    settle()
    if len(out) > 1 and out[1].get("role") != "user":
        out.insert(1, {"role": "user", "content": "[Earlier messages were left out.]"})
    return out


def strict() -> bool:
    return os.environ.get("COMFY_ASSISTANT_STRICT", "") not in ("", "0")


def validate(messages: list[Message]) -> list[Message]:
    found = problems(messages)
    if not found:
        return messages
    if strict():
        raise ContextInvariantError("; ".join(found))
    log.error("repaired an invalid request (a bug, please report): %s", "; ".join(found))
    return repair(messages)


def report_violation(problem: str) -> None:
    """A broken guarantee: raise under tests, log in production."""
    if strict():
        raise ContextInvariantError(problem)
    log.error("context engine bug (please report): %s", problem)
