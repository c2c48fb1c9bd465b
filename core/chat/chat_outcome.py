"""What one answer's run returns (`ChatOutcome`): the answer as it streams, its usage, its
last request and how it ended, for the stored answer, the context report and the log line."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from ..base import ContextReport, UIMessage, repairs_in
from ..context import Assembled
from ..stream import MessageAssembler, Usage
from ..stream import ui_stream as ui

log = logging.getLogger("comfyui_assistant")


@dataclass
class ChatOutcome:
    """What happened: for the log line, the stored answer and the context report."""

    message: UIMessage | None = None  # the answer as it streams
    model: str | None = None
    finish_reason: str = "other"
    usage: Usage | None = None
    last_usage: Usage | None = None  # the last step's: its prompt is the largest one
    assembled: Assembled | None = None
    steps: int = 0
    error: str | None = None
    error_kind: str | None = None
    started_at: float = field(default_factory=time.monotonic)
    correction: Any = None  # the learned token correction: observes each step's usage
    revision: int = 0  # chunks applied to `message` so far (the partial saver watches it)
    # the window a provider's overflow error stated, and ours it replaced (to remember)
    overflow_window: tuple[int, int] | None = None
    limited: bool = False  # the last step still wanted tools, which did not run
    assembler: MessageAssembler | None = None  # builds `message` from the chunks
    waiting_since: float | None = None  # a model call is out and has shown nothing yet
    waiting_shown: bool = False  # ... and the user was told we wait for it

    def apply(self, chunk: ui.Chunk) -> ui.Chunk:
        """A chunk of the answer, applied to `message` (the stored answer matches the stream)."""
        if self.assembler is not None:
            self.assembler.apply(chunk)
        self.revision += 1
        return chunk

    def waiting_note(self) -> ui.Chunk | None:
        """While a model call is silent (the pump asks, sse.py): how long it has been waited
        for. A local model reading a long prompt can take a minute before its first token,
        and only llama.cpp reports its progress."""
        if self.waiting_since is None:
            return None
        took = time.monotonic() - self.waiting_since
        self.waiting_shown = True
        text = f"Waiting for the model… ({took:.0f} s)"
        return self.apply(ui.Data("status", {"text": text, "done": False}, id="status"))

    def model_spoke(self) -> ui.Chunk | None:
        """The model answered: the waiting note, if shown, is cleared."""
        self.waiting_since = None
        if not self.waiting_shown:
            return None
        self.waiting_shown = False
        return self.apply(ui.Data("status", {"text": "", "done": True}, id="status"))

    def observe(self, assembled: Assembled, usage: Usage) -> None:
        self.usage = _add_usage(self.usage, usage)
        self.last_usage = usage
        if self.correction is not None:
            self.correction.observe(self.model or "", assembled.parts, usage.prompt_tokens)

    def report(self) -> ContextReport | None:
        """The last step's context report, with what the provider reported for it."""
        if self.assembled is None:
            return None
        report = self.assembled.report.copy()
        if self.last_usage is not None:
            report["reported"] = self.last_usage.prompt_tokens
            report["cachedTokens"] = self.last_usage.cached_tokens
        report["repairs"] = repairs_in(self.message)
        return report


def _add_usage(total: Usage | None, step: Usage) -> Usage:
    if total is None:
        return step
    cached = (total.cached_tokens or 0) + (step.cached_tokens or 0)
    return Usage(
        total.prompt_tokens + step.prompt_tokens,
        total.completion_tokens + step.completion_tokens,
        total.total_tokens + step.total_tokens,
        cached if total.cached_tokens is not None or step.cached_tokens is not None else None,
    )


def log_outcome(thread_id: str, outcome: ChatOutcome, status: str) -> None:
    """One line per request, with the context report's figures."""
    usage = outcome.usage
    tokens = f"{usage.prompt_tokens}+{usage.completion_tokens}" if usage else "n/a"
    report = outcome.report()
    context = "context=n/a"
    if report is not None:
        counts = report["counts"]
        context = (
            f"context={report['estimated']}/{report['budget']} window={report['window']['tokens']}"
            f"({report['window']['source']}) kept={counts['kept']} digested={counts['digested']}"
            f" summarized={counts['summarized']} dropped={counts['dropped']}"
        )
    log.info(
        "chat thread=%s message=%s model=%s finish=%s steps=%d tokens=%s %s %s in %.2fs",
        thread_id,
        outcome.message and outcome.message.get("id"),
        outcome.model,
        outcome.finish_reason if outcome.error is None else f"error:{outcome.error_kind}",
        outcome.steps,
        tokens,
        context,
        status,
        time.monotonic() - outcome.started_at,
    )
