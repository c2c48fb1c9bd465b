"""Build the UI message our stream describes, the way the AI SDK client builds it.

The server stores each answer as it completes (or as far as it got), in exactly the shape the
panel holds, so a reloaded thread looks like the live one. Tests check this against the real
client's `readUIMessageStream` for every stream they produce.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from ..base import UIMessage
from . import ui_stream as ui


class MessageAssembler:
    def __init__(self, base: UIMessage | None = None) -> None:
        """`base` is the assistant message a continuation appends to."""
        # (built from stream chunks, part by part: a plain dict while it grows)
        self._message: dict[str, Any] = (
            copy.deepcopy(dict(base)) if base else {"id": "", "role": "assistant", "parts": []}
        )
        self._open: dict[str, dict[str, Any]] = {}
        self._tools: dict[str, dict[str, Any]] = {
            p["toolCallId"]: p for p in self._message["parts"] if "toolCallId" in p
        }

    @property
    def message(self) -> UIMessage:
        """The message so far (the same object as it grows)."""
        return cast(UIMessage, self._message)

    def _metadata(self, value: dict[str, Any] | None) -> None:
        if value:
            self._message["metadata"] = {**self._message.get("metadata", {}), **value}

    def _tool(self, chunk: Any, **fields: Any) -> None:
        part = self._tools.get(chunk.tool_call_id)
        if part is None:
            part = {"type": f"tool-{chunk.tool_name}", "toolCallId": chunk.tool_call_id}
            self._tools[chunk.tool_call_id] = part
            self._message["parts"].append(part)
        part.update({k: v for k, v in fields.items() if v is not None})
        for key in [k for k, v in fields.items() if v is None]:
            part.pop(key, None)
        if getattr(chunk, "provider_executed", None):
            part["providerExecuted"] = True

    def apply(self, chunk: ui.Chunk) -> None:
        parts: list[dict[str, Any]] = self._message["parts"]
        if isinstance(chunk, ui.Start):
            if chunk.message_id:
                self._message["id"] = chunk.message_id
            self._metadata(chunk.message_metadata)
        elif isinstance(chunk, (ui.MessageMetadata, ui.Finish)):
            self._metadata(chunk.message_metadata)
        elif isinstance(chunk, ui.StartStep):
            parts.append({"type": "step-start"})
        elif isinstance(chunk, ui.FinishStep):
            self._open.clear()
        elif isinstance(chunk, (ui.TextStart, ui.ReasoningStart)):
            part = (
                {"type": "text", "text": "", "state": "streaming"}
                if isinstance(chunk, ui.TextStart)
                else {"type": "reasoning", "id": chunk.id, "text": "", "state": "streaming"}
            )
            self._open[chunk.id] = part
            parts.append(part)
        elif isinstance(chunk, (ui.TextDelta, ui.ReasoningDelta)):
            self._open[chunk.id]["text"] += chunk.delta
        elif isinstance(chunk, (ui.TextEnd, ui.ReasoningEnd)):
            self._open.pop(chunk.id)["state"] = "done"
        elif isinstance(chunk, ui.ToolInputStart):
            self._tool(chunk, state="input-streaming", input=None)
        elif isinstance(chunk, ui.ToolInputAvailable):
            self._tool(
                chunk,
                state="input-available",
                input=chunk.input,
                callProviderMetadata=chunk.provider_metadata,
            )
        elif isinstance(chunk, ui.ToolInputError):
            self._tool(chunk, state="output-error", input=chunk.input, errorText=chunk.error_text)
        elif isinstance(chunk, (ui.ToolOutputAvailable, ui.ToolOutputError)):
            tool = self._tools[chunk.tool_call_id]
            tool.pop("preliminary", None)  # (the client sets the flag from each chunk)
            if isinstance(chunk, ui.ToolOutputAvailable):
                tool.update(state="output-available", output=chunk.output)
                if chunk.preliminary:  # an interim output: a later one replaces it
                    tool["preliminary"] = True
            else:
                tool.update(state="output-error", errorText=chunk.error_text)
        elif isinstance(chunk, ui.ToolApprovalRequest):
            approval = {"id": chunk.approval_id}
            if chunk.reason is not None:
                approval["requestReason"] = chunk.reason
            self._tools[chunk.tool_call_id].update(state="approval-requested", approval=approval)
        elif isinstance(chunk, ui.ToolOutputDenied):
            self._tools[chunk.tool_call_id]["state"] = "output-denied"
        elif isinstance(chunk, ui.Data) and not chunk.transient:
            same = [p for p in parts if p["type"] == chunk.type and p.get("id") == chunk.id]
            if chunk.id is not None and same:
                same[0]["data"] = chunk.data
            else:
                part = {"type": chunk.type, "data": chunk.data}
                if chunk.id is not None:
                    part["id"] = chunk.id
                parts.append(part)
