"""The answer's output limit, kept even by a provider that ignores it.

Each model call asks for at most the answer's reserve (`max_tokens`, which the budget keeps
free in the window). A provider that ignores it and streams on (a server that never stops
would stream until the client leaves) is cut off at twice that, measured on the text it
streams (answer, reasoning, tool calls): the factor covers the difference between our token
estimate and the model's own tokenizer, so an answer within its limit is never cut.
"""

from __future__ import annotations

import json
from typing import Any

from ..tokens import estimate_tokens

OVERRUN = 2.0  # cut at this multiple of the limit (plus SLACK tokens)
SLACK = 64
SEGMENT_CHARS = 256  # streamed text is estimated in pieces this long (a token split across
# two chunks then counts once, however finely a server or proxy splits its chunks)


def streamed_text(chunk: Any) -> str:
    """The text a raw chat completion chunk adds, whatever the choice: content, reasoning,
    tool names and arguments."""
    out: list[str] = []
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        for key in ("content", "reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                out.append(delta[key])
        calls = delta.get("tool_calls")
        for piece in calls if isinstance(calls, list) else ():
            function = piece.get("function") if isinstance(piece, dict) else None
            if isinstance(function, dict):
                for value in (function.get("name"), function.get("arguments")):
                    if value is not None:
                        out.append(value if isinstance(value, str) else json.dumps(value))
    return "".join(out)


class OutputMeter:
    """Counts one model call's streamed output against its limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cut_at = int(limit * OVERRUN) + SLACK
        self.tokens = 0
        self._pending = ""

    def over(self, chunk: Any) -> bool:
        """Add a raw chunk; True once the output is past the point where it is cut."""
        self._pending += streamed_text(chunk)
        if len(self._pending) >= SEGMENT_CHARS:
            self.tokens += estimate_tokens(self._pending)
            self._pending = ""
        return self.tokens > self.cut_at


def cut_note(limit: int) -> str:
    """The answer's last words after a cut (in a text step of its own)."""
    return (
        f"I stopped here: the model went on writing far past this answer's limit of "
        f"{limit:,} tokens (the provider did not stop at it), so the rest was cut off. Say "
        f'"continue" to let it go on; the limit is "Output reserve" in Settings '
        f"(LLM_MAX_OUTPUT_TOKENS)."
    )
