"""Tool calls read as the model meant them, for one step (issue 40): names and arguments
repaired (`stream/call_repair.py`), calls written as text recovered (`stream/call_text.py`).
Every reading is kept as a note on the call (`base/repair_notes.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from ..base import compact_json
from .call_repair import Schema, repair_arguments, resolve_name
from .call_text import Found

FORMS = {
    "hermes": "<tool_call>",
    "function-tag": "<function=…>",
    "llama-python-tag": "<|python_tag|> JSON",
    "mistral": "[TOOL_CALLS]",
    "deepseek": "DeepSeek's tool-call markers",
    "json": "JSON",
    "prose-call": "name(…)",
    "gemma": "<|tool_call>call:…",
    "lfm": "<|tool_call_start|>",
    "minimax": "[TOOL_CALL]",
    "lmstudio": "[END_TOOL_REQUEST]",
    "harmony": "<|channel|>commentary to=functions.…",
}


class Named(Protocol):
    name: str
    notes: list[str]


@dataclass
class TextCallPiece:
    """A recovered call, for the translator to make a ToolCall of."""

    name: str
    arguments: str
    notes: list[str]


class Recovery:
    """The offered tools' schemas, and what is read by them."""

    def __init__(self, schemas: dict[str, Schema]) -> None:
        self.schemas = schemas

    def name(self, call: Named) -> None:
        """A name written otherwise (`add_node`) read as the offered tool it means."""
        if not self.schemas or call.name in self.schemas:
            return
        resolved, note = resolve_name(call.name, self.schemas)
        if resolved is not None and note is not None:
            call.name = resolved
            call.notes.append(note)


def form_of(found: Found) -> str:
    form = FORMS.get(found.form)
    if form is None:  # a fence: ```json, ```tool_code, …
        form = "a ```" + found.form.removeprefix("fence-").replace("plain", "") + " block"
    return form


def recovered_calls(found: Found, recovery: Recovery) -> list[TextCallPiece]:
    """The calls found in the text, each noted as recovered from it."""
    out = []
    for call in found.calls:
        args = call.arguments
        text = args if isinstance(args, str) else compact_json(args)
        note = f"took the call you wrote as text ({form_of(found)}) as a call of {call.name}"
        piece = TextCallPiece(call.name, text, [note, *call.notes])
        recovery.name(piece)
        out.append(piece)
    return out


def settle_arguments(
    call: Named, raw: str, schema: Schema | None, cut: bool
) -> tuple[dict[str, Any] | None, str | None]:
    """The call's arguments as meant, or None and why not (for the model)."""
    repaired = repair_arguments(call.name, raw or "{}", schema)
    if repaired.error is not None:
        if cut:
            return None, (
                f"The answer reached the output token limit before the arguments of "
                f"{call.name} were complete. Call the tool again with shorter arguments."
            )
        try:
            json.loads(raw)
            detail = repaired.error
        except json.JSONDecodeError as exc:
            detail = f"{exc.msg} at character {exc.pos}"
        return None, (
            f"The arguments for {call.name} are not valid JSON ({detail}). Call the tool "
            f"again with one JSON object matching its schema."
        )
    value = repaired.value
    if not isinstance(value, dict):
        return None, (
            f"The arguments for {call.name} must be a JSON object, "
            f"not {type(value).__name__}. Call the tool again with an object."
        )
    call.notes.extend(repaired.notes)
    return value, None
