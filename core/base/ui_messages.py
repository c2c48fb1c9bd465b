"""UI messages (AI SDK parts) to OpenAI chat messages.

Lossless for what a model needs and safe for every provider:
- text and images (from `file` parts) are sent; reasoning, `data-*`, `source-*` and
  `step-start` markers are not;
- an assistant message splits at step boundaries and wherever text follows a tool round, so
  each OpenAI assistant message is "text, then its tool calls", like the model produced it;
- every tool call gets exactly one `tool` result right after its assistant message: output,
  error, or a synthesized note when the call never ran, so no provider sees an orphan.
The conversion is deterministic: the same messages always give byte-identical output, which
keeps the provider's prompt cache warm.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote_to_bytes

from .json_text import compact_json
from .repair_notes import repair_line, repair_notes_of
from .wire_types import (
    Content,
    FunctionCall,
    OpenAIMessage,
    ToolCall,
    UIMessage,
    UIPart,
    with_content,
)

Message = OpenAIMessage

NOT_RUN = "The tool did not run: no result was returned (the run was stopped or interrupted)."
INPUT_INCOMPLETE = "The tool did not run: its arguments were still incomplete when the turn ended."
DENIED = "The user denied this tool call; it did not run."
DENIAL_WORDS = 1000
"""The most of the user's words a denial carries (the card takes 500)."""
# The reason earlier panels sent with every denial (issue 26): not words of the user's.
_STOCK_REASON = "The user denied it."
AWAITING = "The tool did not run: it was waiting for the user's approval."
UNFINISHED = "The tool was stopped before it finished (the run was stopped or interrupted)."
TEXT_FILE_LIMIT = 100_000


def tool_name_of(part: UIPart) -> str | None:
    ptype = part.get("type", "")
    if not isinstance(ptype, str):
        return None
    if ptype.startswith("tool-"):
        return ptype[5:]
    if ptype == "dynamic-tool":
        name = part.get("toolName")
        return name if isinstance(name, str) else None
    return None


def text_of(message: UIMessage) -> str:
    """What a message says in words: its text parts, joined by a space."""
    parts = message.get("parts") or []
    return " ".join(str(p.get("text") or "") for p in parts if p.get("type") == "text").strip()


def tool_result_text(part: UIPart) -> str:
    """What the model reads as the result of one tool part, whatever state it ended in (after
    what was read differently in the call, when it was repaired: repair_notes.py)."""
    text = _result_text(part)
    notes = repair_notes_of(part)
    return f"{repair_line(notes)}\n{text}" if notes else text


def _result_text(part: UIPart) -> str:
    state = part.get("state")
    if state == "output-available" and part.get("preliminary"):  # an interim output only
        return UNFINISHED
    if state == "output-available":
        output = part.get("output")
        return output if isinstance(output, str) else compact_json(output)
    if state == "output-error":
        text = f"Error: {part.get('errorText') or 'the tool failed without a message'}"
        raw = part.get("rawInput", part.get("input"))
        if not isinstance(raw, dict) and raw is not None:
            raw_text = raw if isinstance(raw, str) else compact_json(raw)
            text += f"\nThe arguments received were: {raw_text}"
        return text
    approval = part.get("approval")
    refused = isinstance(approval, dict) and approval.get("approved") is False
    if state == "output-denied" or (state == "approval-responded" and refused):
        return denial_text(approval)
    if state == "input-streaming":
        return INPUT_INCOMPLETE
    if state in ("approval-requested", "approval-responded"):
        return AWAITING
    return NOT_RUN


def denial_text(approval: Any) -> str:
    """The result of a call the user denied: DENIED, and the user's words when they gave any
    (the approval's `reason`), quoted as they wrote them."""
    reason = approval.get("reason") if isinstance(approval, dict) else None
    if not isinstance(reason, str) or not reason.strip() or reason == _STOCK_REASON:
        return DENIED
    words = reason.strip()
    if len(words) > DENIAL_WORDS:
        words = words[: DENIAL_WORDS - 1] + "…"
    return f"{DENIED} The user said: {json.dumps(words, ensure_ascii=False)}"


SHOWN = "shown"
"""The key of what a tool part's result shows a model that sees: {"label": text, "url": an
image's data URL} (a run's outputs, added by the server for the turn: `files/run_images.py`)."""


def tool_result_content(part: UIPart) -> Content:
    """`tool_result_text`, followed by the image the result shows (if any) and its label."""
    text = tool_result_text(part)
    shown = part.get(SHOWN)
    if not isinstance(shown, dict) or _result_text(part) in (UNFINISHED, NOT_RUN):
        return text
    return [
        {"type": "text", "text": text},
        {"type": "text", "text": str(shown.get("label") or "")},
        {"type": "image_url", "image_url": {"url": str(shown.get("url") or "")}},
    ]


def content_text(content: Content | None) -> str:
    """What a message's content says in words (its text parts, one per line)."""
    if content is None or isinstance(content, str):
        return content or ""
    return "\n".join(str(p.get("text") or "") for p in content if p.get("type") == "text")


def images_after_results(messages: list[Message]) -> list[Message]:
    """The request as providers take it: a tool result holds text only (OpenAI's chat API
    takes no image there), so the label and image a result shows go, in its order, into a user
    message after the round's last result, or at the head of the user message that follows it
    (no two user messages in a row). The result keeps its text. Nothing to move: `messages`
    itself."""
    if not any(m["role"] == "tool" and isinstance(m.get("content"), list) for m in messages):
        return messages
    out: list[Message] = []
    moved: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message["role"] == "tool" and isinstance(content, list):
            out.append(with_content(message, str(content[0].get("text") or "")))
            moved.extend(content[1:])
            continue
        if moved and message["role"] == "user":
            own = message.get("content")
            rest = [{"type": "text", "text": own}] if isinstance(own, str) else list(own or [])
            out.append(with_content(message, [*moved, *rest]))
            moved = []
            continue
        if moved and message["role"] != "tool":
            out.append({"role": "user", "content": moved})
            moved = []
        out.append(message)
    if moved:
        out.append({"role": "user", "content": moved})
    return out


def _arguments(part: UIPart) -> str:
    value = part.get("input")
    return compact_json(value) if isinstance(value, dict) else "{}"


ResultText = Callable[[UIPart], Content]


def _emit(
    texts: list[str], calls: list[ToolCall], results: list[Message], out: list[Message]
) -> None:
    """One step: "text, then its tool calls", then a result for each call."""
    message: Message = {"role": "assistant", "content": "\n\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    out.append(message)
    out.extend(results)


def _assistant(parts: list[UIPart], out: list[Message], result_text: ResultText) -> None:
    texts: list[str] = []  # (never empty texts: only non-empty ones are kept)
    calls: list[ToolCall] = []
    results: list[Message] = []
    for part in parts:
        ptype = part.get("type")
        if ptype == "step-start":
            if texts or calls:
                _emit(texts, calls, results, out)
                texts, calls, results = [], [], []
        elif ptype == "text":
            text = part["text"]
            if not text:
                continue
            if calls:
                _emit(texts, calls, results, out)
                texts, calls, results = [], [], []
            texts.append(text)
        else:
            name = tool_name_of(part)
            if name is None:
                continue
            call_id = part["toolCallId"]
            function: FunctionCall = {"name": name, "arguments": _arguments(part)}
            calls.append({"id": call_id, "type": "function", "function": function})
            results.append({"role": "tool", "tool_call_id": call_id, "content": result_text(part)})
    if texts or calls:
        _emit(texts, calls, results, out)


def _decode_text_file(url: str) -> str | None:
    if not url.startswith("data:") or "," not in url:
        return None
    header, data = url[5:].split(",", 1)
    try:
        if header.endswith(";base64"):
            raw = base64.b64decode(data, validate=True)
        else:
            raw = unquote_to_bytes(data)
        return raw.decode("utf-8")[:TEXT_FILE_LIMIT]
    except (binascii.Error, UnicodeDecodeError):
        return None


def _file_content(part: UIPart) -> dict[str, Any]:
    media = part["mediaType"]
    name = part.get("filename") or "attachment"
    if media.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": part["url"]}}
    if media.startswith("text/") or media in ("application/json", "application/x-yaml"):
        text = _decode_text_file(part["url"])
        if text is not None:
            return {"type": "text", "text": f"[file {name}]\n{text}"}
    return {"type": "text", "text": f"[file {name} ({media}) was attached but cannot be sent]"}


def _user(parts: list[UIPart], out: list[Message]) -> None:
    content: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "text" and part["text"]:
            content.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "file":
            content.append(_file_content(part))
    if not content:
        return
    if all(c["type"] == "text" for c in content):
        out.append({"role": "user", "content": "\n\n".join(c["text"] for c in content)})
    else:
        out.append({"role": "user", "content": content})


def system_texts(messages: Sequence[UIMessage]) -> list[str]:
    """Text of UI `system` messages; the prompt builder folds them into the system message."""
    return [
        part["text"]
        for message in messages
        if message.get("role") == "system"
        for part in message.get("parts", [])
        if part.get("type") == "text" and part["text"]
    ]


def to_openai_messages(
    messages: Sequence[UIMessage], result_text: ResultText = tool_result_text
) -> list[Message]:
    """Convert validated UI messages (see chat_request) to OpenAI chat messages. `result_text`
    renders each tool part's result (the context engine defers it: an old result is only ever
    sent as a digest, so its full text need not be built)."""
    out: list[Message] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            _user(message["parts"], out)
        elif role == "assistant":
            _assistant(message["parts"], out, result_text)
    return out
