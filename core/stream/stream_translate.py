"""One model call's OpenAI stream chunks to UI Message Stream chunks.

Pure and synchronous: `feed()` takes each chunk as decoded JSON (a dict shaped like
`ChatCompletionChunk`), `finish()` closes what is open and settles the tool calls. Handles what
differs between OpenAI-compatible servers: tool calls in pieces keyed by `index` or whole in one
chunk, servers that reuse index 0 for parallel calls, missing call ids, reasoning as
`reasoning_content`, `reasoning` or `<think>` tags, usage in the last chunk. Every text the
provider streams passes a `StreamCleaner` first: the API key never comes back out, and a
character split across two chunks is joined (redact.py).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ..base import OVER_LIMIT, notes_metadata
from . import ui_stream as ui
from .call_hold import CallHold
from .call_recovery import Recovery, recovered_calls, settle_arguments
from .redact import StreamCleaner
from .think_tags import Kind, ThinkTagSplitter

# Tool calls one step may make (a model that calls a tool 1,000 times in one step had them all
# run, in each of its 8 steps): the calls after these are answered "not run", with the limit,
# so every call still has a result; a real step rarely makes more than a dozen.
MAX_TOOL_CALLS_PER_STEP = 32
PROGRESS_AFTER = 2.0  # seconds of reading the prompt before its progress is shown
PROGRESS_EVERY = 2.0  # seconds between progress updates
# a long hold (call_hold.py): what it holds may still turn out to be words
WRITING_CALL = "The model is writing what may be a tool call…"

FINISH_REASONS: dict[str, ui.FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


@dataclass
class Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int | None = None

    def as_metadata(self) -> dict[str, int]:
        out = {
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "totalTokens": self.total_tokens,
        }
        if self.cached_tokens is not None:
            out["cachedPromptTokens"] = self.cached_tokens
        return out


@dataclass
class ToolCall:
    index: int
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False
    input: dict[str, Any] | None = None
    error: str | None = None
    clean: StreamCleaner = field(default_factory=StreamCleaner)
    notes: list[str] = field(default_factory=list)  # what was read as meant (call_repair.py)

    @property
    def arguments_text(self) -> str:
        return "".join(self.arguments)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict) or _int(raw.get("prompt_tokens")) is None:
        return None
    details = raw.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else None
    prompt = int(raw["prompt_tokens"])
    completion = _int(raw.get("completion_tokens")) or 0
    total = _int(raw.get("total_tokens")) or prompt + completion
    return Usage(prompt, completion, total, cached)


class StepTranslator:
    def __init__(
        self,
        tool_names: Collection[str],
        server_tools: Collection[str] = frozenset(),
        secrets: Collection[str | None] = (),
        unoffered: str | None = None,
        max_calls: int = MAX_TOOL_CALLS_PER_STEP,
        not_offered: Callable[[str], str | None] | None = None,
        schemas: dict[str, Any] | None = None,
    ) -> None:
        self.tool_names = tool_names
        # the offered tools' parameter schemas: nearly-right calls are read by them, and calls
        # written as text are recovered (text_calls.py)
        self.recovery = Recovery({k: v for k, v in (schemas or {}).items() if k in tool_names})
        self._hold = CallHold(self.recovery.schemas)
        self.unoffered = unoffered  # why a call of a tool not offered did not run, if known
        self.not_offered = not_offered  # a known tool this window lacks: which windows have it
        self.max_calls = max_calls
        self.secrets = secrets
        self._content = StreamCleaner(secrets)
        self._reasoning = StreamCleaner(secrets)
        self.server_tools = server_tools
        self.tool_calls: list[ToolCall] = []
        self.usage: Usage | None = None
        self.provider_finish: str | None = None
        self.text: list[str] = []
        self._open: tuple[Kind, str] | None = None
        self._splitter = ThinkTagSplitter()
        self._by_index: dict[int, ToolCall] = {}
        self._started = time.monotonic()
        self._progress_at = 0.0  # when progress was last shown

    @property
    def finish_reason(self) -> ui.FinishReason:
        if self.tool_calls:
            return "tool-calls"
        return FINISH_REASONS.get(self.provider_finish or "", "other")

    def _close(self, out: list[ui.Chunk]) -> None:
        if self._open is not None:
            kind, pid = self._open
            out.append(ui.TextEnd(pid) if kind == "text" else ui.ReasoningEnd(pid))
            self._open = None

    def _write(self, kind: Kind, delta: str, out: list[ui.Chunk]) -> None:
        if not delta:
            return
        if self._open is None or self._open[0] != kind:
            self._close(out)
            pid = new_id("txt" if kind == "text" else "rsn")
            self._open = (kind, pid)
            out.append(ui.TextStart(pid) if kind == "text" else ui.ReasoningStart(pid))
        pid = self._open[1]
        if kind == "text":
            self.text.append(delta)
            out.append(ui.TextDelta(pid, delta))
        else:
            out.append(ui.ReasoningDelta(pid, delta))

    def _call_for(self, piece: dict[str, Any]) -> ToolCall:
        index = _int(piece.get("index"))
        piece_id = piece.get("id") or None
        if index is None:  # servers that omit the index: a new id means a new call
            last = self.tool_calls[-1] if self.tool_calls else None
            index = last.index if last and not (piece_id and piece_id != last.id) else -1
        call = self._by_index.get(index)
        reused = call is not None and piece_id and call.id and piece_id != call.id
        if call is None or reused:
            call = ToolCall(
                index=index if index >= 0 else len(self.tool_calls),
                clean=StreamCleaner(self.secrets),
            )
            self._by_index[call.index] = call
            self.tool_calls.append(call)
        return call

    def _tool_piece(self, piece: dict[str, Any], out: list[ui.Chunk]) -> None:
        call = self._call_for(piece)
        function = piece.get("function")
        function = function if isinstance(function, dict) else {}
        name, args = function.get("name"), function.get("arguments")
        name = name if isinstance(name, str) else None
        if isinstance(args, dict):  # a few servers send the arguments already parsed
            args = json.dumps(args, ensure_ascii=False)
        args = call.clean.feed(args) if isinstance(args, str) else None
        if isinstance(piece.get("id"), str) and piece["id"] and not call.id:
            call.id = piece["id"]
        if name and not call.started:
            call.name += name
        if args:
            call.arguments.append(args)
        if not call.started and call.name:
            self._close(out)
            self.recovery.name(call)
            call.id = call.id or new_id("call")
            call.started = True
            out.append(ui.ToolInputStart(call.id, call.name, self._server(call)))
            if call.arguments:
                out.append(ui.ToolInputDelta(call.id, call.arguments_text))
        elif call.started and args:
            assert call.id is not None
            out.append(ui.ToolInputDelta(call.id, args))

    def _progress(self, value: Any, out: list[ui.Chunk]) -> None:
        """llama.cpp's prompt progress, shown when reading the prompt takes a while (a long
        prompt on a local model: seconds with nothing else to show); cleared when done."""
        if not isinstance(value, dict):
            return
        total, done = value.get("total"), value.get("processed")
        if not isinstance(total, int) or not isinstance(done, int) or total <= 0:
            return
        now = time.monotonic()
        if done >= total:
            if self._progress_at:  # (shown before: now cleared)
                out.append(ui.Data("status", {"text": "", "done": True}, id="status"))
            return
        if now - self._started < PROGRESS_AFTER or now - self._progress_at < PROGRESS_EVERY:
            return
        self._progress_at = now
        text = f"Reading the conversation… {done * 100 // total}% of {total:,} tokens"
        out.append(ui.Data("status", {"text": text, "done": False}, id="status"))

    def feed(self, chunk: Any) -> list[ui.Chunk]:
        out: list[ui.Chunk] = []
        if not isinstance(chunk, dict):
            return out
        if "prompt_progress" in chunk:
            self._progress(chunk["prompt_progress"], out)
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self.usage = usage
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                for key in ("reasoning_content", "reasoning"):
                    value = delta.get(key)
                    if isinstance(value, str):
                        self._write("reasoning", self._reasoning.feed(value), out)
                content = delta.get("content")
                if isinstance(content, str) and content:
                    for kind, text in self._splitter.feed(self._content.feed(content)):
                        self._write(kind, self._hold.feed(text) if kind == "text" else text, out)
                    if self._hold.overdue():
                        note = {"text": WRITING_CALL, "done": False}
                        out.append(ui.Data("status", note, id="status"))
                for piece in delta.get("tool_calls") or ():
                    if isinstance(piece, dict):
                        self._tool_piece(piece, out)
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                self.provider_finish = finish
        return out

    def _settle(self, call: ToolCall, position: int) -> ui.Chunk:
        assert call.id is not None
        raw = call.arguments_text.strip()
        if position >= self.max_calls:
            call.error = OVER_LIMIT.format(limit=self.max_calls, position=position + 1)
        elif call.name not in self.tool_names:
            call.error = (
                self.unoffered
                or (self.not_offered and self.not_offered(call.name))
                or f"There is no tool named '{call.name}'. "
                f"Available tools: {', '.join(sorted(self.tool_names)) or 'none'}."
            )
        else:
            cut = self.provider_finish == "length"
            schema = self.recovery.schemas.get(call.name)
            call.input, call.error = settle_arguments(call, raw, schema, cut)
        server = self._server(call)
        if call.input is not None:
            meta = notes_metadata(call.notes)
            return ui.ToolInputAvailable(call.id, call.name, call.input, server, meta)
        return ui.ToolInputError(call.id, call.name, call.arguments_text, call.error or "", server)

    def _server(self, call: ToolCall) -> bool | None:
        """Server tools are marked provider-executed, so the panel never tries to run them."""
        return True if call.name in self.server_tools else None

    def _flush_text(self, out: list[ui.Chunk], recover: bool = False) -> str:
        """The text the cleaners, the think-tag splitter and the call hold still hold, then
        close the part. `recover`: calls written in the held text become the step's tool calls
        (when the provider sent none); the text after them is returned, to follow them."""
        self._write("reasoning", self._reasoning.flush(), out)
        for kind, text in [*self._splitter.feed(self._content.flush()), *self._splitter.flush()]:
            self._write(kind, self._hold.feed(text) if kind == "text" else text, out)
        before, found, after = self._hold.finish(recover and not self.tool_calls)
        if self._hold.noted:  # (the long hold's note is done with)
            out.append(ui.Data("status", {"text": "", "done": True}, id="status"))
            self._hold.noted = False
        self._write("text", before, out)
        self._close(out)
        if found is not None:
            self.tool_calls = [
                ToolCall(i, name=p.name, arguments=[p.arguments], notes=p.notes)
                for i, p in enumerate(recovered_calls(found, self.recovery))
            ]
        for call in self.tool_calls:
            rest = call.clean.flush()
            if rest:
                call.arguments.append(rest)
                if call.started and call.id is not None:
                    out.append(ui.ToolInputDelta(call.id, rest))
        return after

    def finish(self) -> list[ui.Chunk]:
        out: list[ui.Chunk] = []
        after = self._flush_text(out, recover=True)
        for position, call in enumerate(self.tool_calls):
            if not call.started:  # arguments arrived but never a name
                call.id = call.id or new_id("call")
                call.name = call.name or "unnamed_tool"
                call.started = True
                out.append(ui.ToolInputStart(call.id, call.name, self._server(call)))
            out.append(self._settle(call, position))
        self._write("text", after, out)
        self._close(out)
        return out

    def finish_partial(self) -> list[ui.Chunk]:
        """Close what is open after a failure; started tool calls end as errors, unrun."""
        out: list[ui.Chunk] = []
        self._flush_text(out)
        for call in self.tool_calls:
            if call.started and call.input is None and call.error is None:
                assert call.id is not None
                call.error = "The answer broke off before this call was complete; it did not run."
                out.append(
                    ui.ToolInputError(
                        call.id, call.name, call.arguments_text, call.error, self._server(call)
                    )
                )
        return out
