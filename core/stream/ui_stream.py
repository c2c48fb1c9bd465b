"""The AI SDK UI Message Stream (protocol v1): one class per chunk type, one encoder.

The browser's parser (`ai`'s `uiMessageChunkSchema` + `processUIMessageStream`) rejects a
stream whose chunks break its order rules, and older clients die on unknown chunk types, so
only the chunk types below are ever written. Field names are the snake_case form of the wire's
camelCase; `payload()` converts them and drops unset optional fields.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from ..base import compact_json

SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}

KEEPALIVE = b": ping\n\n"
DONE = b"data: [DONE]\n\n"

# Safe across ai 5, 6 and 7 (`unknown` breaks 6 and 7, `interrupted` breaks 5 and 6).
FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


@dataclass(frozen=True)
class Chunk:
    TYPE: ClassVar[str] = ""

    @property
    def type(self) -> str:
        return self.TYPE

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[_camel(f.name)] = value
        return out

    def encode(self) -> bytes:
        return encode(self.payload())


def encode(payload: dict[str, Any]) -> bytes:
    text = compact_json(payload)
    return b"data: " + text.encode("utf-8") + b"\n\n"


@dataclass(frozen=True)
class Start(Chunk):
    TYPE = "start"
    message_id: str | None = None
    message_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class StartStep(Chunk):
    TYPE = "start-step"


@dataclass(frozen=True)
class FinishStep(Chunk):
    TYPE = "finish-step"


@dataclass(frozen=True)
class TextStart(Chunk):
    TYPE = "text-start"
    id: str


@dataclass(frozen=True)
class TextDelta(Chunk):
    TYPE = "text-delta"
    id: str
    delta: str


@dataclass(frozen=True)
class TextEnd(Chunk):
    TYPE = "text-end"
    id: str


@dataclass(frozen=True)
class ReasoningStart(Chunk):
    TYPE = "reasoning-start"
    id: str


@dataclass(frozen=True)
class ReasoningDelta(Chunk):
    TYPE = "reasoning-delta"
    id: str
    delta: str


@dataclass(frozen=True)
class ReasoningEnd(Chunk):
    TYPE = "reasoning-end"
    id: str


@dataclass(frozen=True)
class ToolInputStart(Chunk):
    TYPE = "tool-input-start"
    tool_call_id: str
    tool_name: str
    provider_executed: bool | None = None


@dataclass(frozen=True)
class ToolInputDelta(Chunk):
    TYPE = "tool-input-delta"
    tool_call_id: str
    input_text_delta: str


@dataclass(frozen=True)
class ToolInputAvailable(Chunk):
    TYPE = "tool-input-available"
    tool_call_id: str
    tool_name: str
    input: dict[str, Any]
    provider_executed: bool | None = None
    provider_metadata: dict[str, Any] | None = None  # a repaired call's notes (repair_notes.py)


@dataclass(frozen=True)
class ToolInputError(Chunk):
    TYPE = "tool-input-error"
    tool_call_id: str
    tool_name: str
    input: Any
    error_text: str
    provider_executed: bool | None = None


@dataclass(frozen=True)
class ToolOutputAvailable(Chunk):
    """`preliminary`: an interim output of a tool still running (a later one replaces it)."""

    TYPE = "tool-output-available"
    tool_call_id: str
    output: Any
    provider_executed: bool | None = None
    preliminary: bool | None = None


@dataclass(frozen=True)
class ToolOutputError(Chunk):
    TYPE = "tool-output-error"
    tool_call_id: str
    error_text: str
    provider_executed: bool | None = None


@dataclass(frozen=True)
class ToolApprovalRequest(Chunk):
    """A server tool waits for the user's Allow or Deny (the AI SDK's approval parts);
    `reason` says what it will do."""

    TYPE = "tool-approval-request"
    approval_id: str
    tool_call_id: str
    reason: str | None = None


@dataclass(frozen=True)
class ToolOutputDenied(Chunk):
    """The user denied the call: it did not run."""

    TYPE = "tool-output-denied"
    tool_call_id: str


@dataclass(frozen=True)
class MessageMetadata(Chunk):
    TYPE = "message-metadata"
    message_metadata: dict[str, Any]


@dataclass(frozen=True)
class Data(Chunk):
    """A `data-<name>` part: same `id` replaces, `transient` goes only to `onData`."""

    name: str
    data: Any
    id: str | None = None
    transient: bool | None = None

    @property
    def type(self) -> str:
        return f"data-{self.name}"

    def payload(self) -> dict[str, Any]:
        out = super().payload()
        del out["name"]
        return out


@dataclass(frozen=True)
class Error(Chunk):
    TYPE = "error"
    error_text: str


@dataclass(frozen=True)
class Finish(Chunk):
    TYPE = "finish"
    finish_reason: FinishReason | None = None
    message_metadata: dict[str, Any] | None = None
