"""What the context engine is given (`ContextInputs`, its `ContextSettings`, the thread's
running `Summary`) and what it gives back (`Assembled`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..base import ContextReport, OpenAIMessage, UIMessage
from ..files import ProjectContext
from ..provider import Budget, Window
from ..store import SentTurn
from ..tokens import Factors, Parts

Message = OpenAIMessage


def _env_float(environ: Mapping[str, str], name: str, default: float) -> float:
    try:
        value = float(environ.get(name, default))
    except ValueError:
        return default
    return value if 0 < value <= 1 else default


def _env_int(environ: Mapping[str, str], name: str, default: int | None) -> int | None:
    raw = environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


@dataclass(frozen=True)
class ContextSettings:
    keep_last_rounds: int = 2
    """LLM_TOOL_RESULT_KEEP_LAST_ROUNDS: the newest tool rounds always sent whole."""
    digest_batch: int = 3
    """LLM_TOOL_RESULT_DIGEST_BATCH: older rounds are digested this many at a time."""
    finished_share: float = 0.1
    """LLM_TOOL_RESULT_FINISHED_SHARE: the tool results of finished turns kept whole may take
    at most this share of the budget; above it they are all digested (recallable)."""
    max_result_share: float = 0.25
    """LLM_TOOL_RESULT_MAX_SHARE: one tool result may take at most this share of the budget."""
    high_watermark: float = 0.9
    """LLM_HISTORY_HIGH_WATERMARK: past this share of the budget, the next summary is made
    ahead (in the background, after an answer); it is sent only once the thread no longer
    fits without it."""
    low_watermark: float = 0.9
    """LLM_HISTORY_LOW_WATERMARK: a compaction frees the overflow and (1 − this) of the
    history's room besides (the margin: a few more turns before the next one), no more: the
    oldest messages it summarizes are about 4/3 of that (the new summary takes a quarter of
    what it covers: context_stages.plan_compaction). (Until issue 36: down to 0.8 of the room
    beside a summary at its full cap, whatever the overflow: a thread a thousand tokens over
    had ten times that summarized.)"""
    max_history_messages: int | None = None
    """LLM_HISTORY_MAX_MESSAGES: an optional cap on messages sent (the budget governs)."""
    summarize: bool = True
    """LLM_HISTORY_SUMMARIZE=0 turns summaries off (the priority window still applies)."""
    recall_share: float = 0.05
    """LLM_RECALL_SHARE: of the budget, what the passages recalled for a new user message may
    take at most (core/memory/turn_recall.py); 0 turns recall per turn off."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ContextSettings:
        return cls(
            keep_last_rounds=_env_int(environ, "LLM_TOOL_RESULT_KEEP_LAST_ROUNDS", 2) or 2,
            digest_batch=_env_int(environ, "LLM_TOOL_RESULT_DIGEST_BATCH", 3) or 3,
            finished_share=_env_float(environ, "LLM_TOOL_RESULT_FINISHED_SHARE", 0.1),
            max_result_share=_env_float(environ, "LLM_TOOL_RESULT_MAX_SHARE", 0.25),
            high_watermark=_env_float(environ, "LLM_HISTORY_HIGH_WATERMARK", 0.9),
            low_watermark=_env_float(environ, "LLM_HISTORY_LOW_WATERMARK", 0.9),
            max_history_messages=_env_int(environ, "LLM_HISTORY_MAX_MESSAGES", None),
            summarize=environ.get("LLM_HISTORY_SUMMARIZE", "1") not in ("0", "false", "no"),
            recall_share=0.0
            if environ.get("LLM_RECALL_SHARE", "").strip() in ("0", "0.0")
            else _env_float(environ, "LLM_RECALL_SHARE", 0.05),
        )


@dataclass(frozen=True)
class Summary:
    text: str
    until: str  # the last UI message it covers
    fallback: bool = False  # the deterministic digest stood in for the model's summary

    @classmethod
    def stored(cls, value: Mapping[str, Any] | None) -> Summary | None:
        """A summary as ThreadState stores it (or None)."""
        if not value or "text" not in value:
            return None
        return cls(str(value["text"]), str(value["until"]), bool(value.get("fallback")))

    @classmethod
    def stored_next(cls, value: Mapping[str, Any] | None) -> Summary | None:
        """The summary made ahead, stored beside the one in use (or None)."""
        ahead = value.get("next") if value else None
        return cls.stored(ahead) if isinstance(ahead, Mapping) else None


@dataclass(frozen=True)
class ContextInputs:
    system: str
    ui_messages: Sequence[UIMessage]
    tools: list[dict[str, Any]]
    model: str
    window: Window
    max_output_tokens: int | None = None
    user_context: str = ""  # the part of `system` that is the user's context (for the report)
    summary: Summary | None = None
    # made ahead: sent (in place of `summary`) once the thread no longer fits without it
    next_summary: Summary | None = None
    # UI message id -> what that user message was first sent with (resent exactly)
    sent: Mapping[str, SentTurn] = field(default_factory=dict)
    correction: Factors = field(
        default_factory=Factors
    )  # the learned per-component factors (token_correction)
    calibration: str | None = None  # how the server measured them, when it did (the report)
    settings: ContextSettings = field(default_factory=ContextSettings)
    profile: str = "full"  # the prompt profile that chose `system` and `tools` (for the report)
    cache_scope: str = ""  # the thread: blocks are memoized per thread (see context_cache)
    project: ProjectContext | None = None  # the thread's project: its documents for this turn


@dataclass
class Assembled:
    messages: list[Message]
    tokens: int  # the prompt as we estimate the provider counts it (corrected)
    exact: int  # our exact count, before the correction
    budget: Budget
    report: ContextReport
    tools: list[dict[str, Any]] = field(default_factory=list)  # the tool definitions to send
    # Above the high watermark: works out the compaction plan (see `compaction`) and the
    # tokens of the messages it names.
    plan: Callable[[], tuple[list[str], int] | None] | None = field(
        default=None, repr=False, compare=False
    )
    parts: Parts = field(
        default_factory=Parts
    )  # `exact` by component: what the correction learns from
    # the summary made ahead was put to use by this request (it did not fit without it)
    took_next: bool = False
    # the UI messages the request holds (whole, digested or cut): the rest are evicted
    present: frozenset[str] = frozenset()
    # with a plan: the tokens a new summary may take, by the tokens of messages it covers
    allowance: Callable[[int], int] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def compaction(self) -> list[str] | None:
        """UI message ids to summarize, oldest first; None below the high watermark. Worked
        out when first asked for: only a caller about to summarize needs it, and it walks the
        whole thread (the request itself never depends on it)."""
        planned = self._planned
        return None if planned is None else planned[0]

    @cached_property
    def summary_room(self) -> int | None:
        """The tokens the summary of `compaction` may take (the plan counted on no more)."""
        planned = self._planned
        if planned is None or self.allowance is None:
            return None
        return self.allowance(planned[1])

    @cached_property
    def _planned(self) -> tuple[list[str], int] | None:
        return None if self.plan is None else self.plan()


def covered_ids(ui_messages: Sequence[UIMessage], until: str) -> frozenset[str]:
    ids = [str(m.get("id") or "") for m in ui_messages]
    return frozenset(ids[: ids.index(until) + 1]) if until in ids else frozenset()
