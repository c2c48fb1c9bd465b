"""The validator: every assembled request must satisfy what providers enforce (docs/DESIGN.md §7).

A violation is a bug in an earlier step. Under tests (`COMFY_ASSISTANT_STRICT=1`, set by the
test suite) it raises; in production the request is repaired — orphans dropped, missing
results synthesized, user turns merged — and the repair is logged, so the user still gets an
answer rather than a provider's HTTP 400.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]
log = logging.getLogger("comfyui_assistant")
MISSING_RESULT = "The tool did not run: no result was recorded."


class ContextInvariantError(AssertionError):
    """An assembled request that a provider would reject."""


@dataclass
class _Scan:
    """The validator's state after some messages: a left fold, so it can resume."""

    found: list[str] = field(default_factory=list)
    pending: set[str] = field(default_factory=set)
    seen_ids: set[str] = field(default_factory=set)
    previous: str | None = None


def _scan(messages: list[Message], start: int, state: _Scan) -> _Scan:
    found, pending, seen_ids, previous = state.found, state.pending, state.seen_ids, state.previous
    for i in range(start, len(messages)):
        m = messages[i]
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
    return _Scan(found, pending, seen_ids, previous)


def _verdict(messages: list[Message], state: _Scan) -> list[str]:
    found: list[str] = []
    if not messages or messages[0].get("role") != "system":
        found.append("the first message is not the system message")
    if len(messages) > 1 and messages[1].get("role") != "user":
        found.append(f"the first turn is {messages[1].get('role')}, not user")
    found += state.found
    if state.pending:
        found.append(f"the request ends with calls without results: {sorted(state.pending)}")
    return found


def problems(messages: list[Message]) -> list[str]:
    """Every invariant the request breaks, described; [] when it is valid."""
    return _verdict(messages, _scan(messages, 0, _Scan()))


class Checkpoint:
    """`problems` for a conversation's successive requests, scanning only what is new.

    Requests of one thread grow at the end, and the engine's cached blocks hand out the same
    message objects every time; so the scan's state is kept after all but the last two
    messages (the last user message changes: reminders are merged into it), and the next
    request resumes from there when its messages up to that point are the same objects (or
    equal ones: a list comparison tries identity first, in C) — all but the system message,
    which is rebuilt each time and leaves nothing but its role in the state. The result is
    exactly `problems(messages)`."""

    def __init__(self) -> None:
        self._prefix: list[Message] = []
        self._state = _Scan()

    def problems(self, messages: list[Message]) -> list[str]:
        k, prefix = len(self._prefix), self._prefix
        same = (
            1 < k <= len(messages)
            and messages[1:k] == prefix[1:]
            # a first message leaves only its role in the state, if it is the system message
            and (
                messages[0].get("role") == prefix[0].get("role") == "system"
                or messages[0] == prefix[0]
            )
        )
        # (the kept state is resumed in place, so it is forgotten until the scan is done)
        state, self._prefix, self._state = (self._state if same else _Scan()), [], _Scan()
        k = k if same else 0
        end = max(k, len(messages) - 2)
        state = _scan(messages[:end], k, state)
        self._prefix, self._state = messages[:end], state
        # the last messages are scanned on a view of the state that leaves it as it is
        tail = _Scan(
            list(state.found), set(state.pending), _SeenSince(state.seen_ids), state.previous
        )
        return _verdict(messages, _scan(messages, end, tail))


class _SeenSince(set[str]):
    """The ids in `base` and the ones added since, without copying `base` (left as it is)."""

    def __init__(self, base: set[str]) -> None:
        super().__init__()
        self.base = base

    def __contains__(self, item: object) -> bool:
        return item in self.base or super().__contains__(item)


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
                m = {k: v for k, v in m.items() if k != "tool_calls"}
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


def validate(messages: list[Message], checkpoint: Checkpoint | None = None) -> list[Message]:
    found = problems(messages) if checkpoint is None else checkpoint.problems(messages)
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
