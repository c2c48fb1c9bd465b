"""The context budget: how many tokens of the model's window the conversation may use.

The window comes from, first that answers: the thread's setting, the provider settings
(Settings or LLM_CONTEXT_WINDOW), the provider's own metadata (provider_probes), a table of
known model families, else a conservative default; the `Window` says which won. Budget =
window − output reserve − safety margin − tool definitions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..base import CodedError, Message, coded
from .provider_config import ProviderSettings

log = logging.getLogger("comfyui_assistant")

DEFAULT_WINDOW = 8192


@dataclass(frozen=True)
class Window:
    """A context window in tokens and where the figure came from."""

    tokens: int
    source: str
    """One of "thread setting", "settings", "environment", "provider", "model table", "default"."""
    detail: str
    """For the report and errors, e.g. "Ollama /api/show num_ctx=8192"."""


# Known families, most specific first; searched in the lowercased name without its provider
# prefix ("openai/gpt-4o" → "gpt-4o"; Ollama tags such as "qwen3:8b" match as they are).
# Figures are the vendors' published context lengths (model cards, API docs, the
# context_length Ollama reports for its library builds); where variants differ we take the
# smaller. For a local server the context it was started with (Ollama's num_ctx, LM Studio's
# loaded context, llama.cpp's -c) usually matters more than the model's maximum, which is
# why the provider's metadata outranks this table.
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    # OpenAI
    (r"gpt-oss", 131_072),
    (r"gpt-5[\w.-]*-chat", 128_000),
    (r"gpt-5", 272_000),  # 400K in total, of which at most 272K may be input
    (r"gpt-4\.1", 1_047_576),
    (r"gpt-4o", 128_000),
    (r"gpt-4\.5|gpt-4-(turbo|1106|0125|vision)", 128_000),
    (r"gpt-4-32k", 32_768),
    (r"gpt-4\b", 8_192),
    (r"gpt-3\.5-turbo-instruct", 4_096),
    (r"gpt-3\.5-turbo", 16_385),
    (r"^o1-(mini|preview)", 128_000),
    (r"^o[134]\b", 200_000),
    # DeepSeek (before Llama and Qwen: the R1 distills carry their base model's name)
    (r"deepseek-r1", 131_072),
    (r"deepseek-(v3|chat|reasoner)", 65_536),
    (r"deepseek-coder-v2", 131_072),
    (r"deepseek-coder", 16_384),
    # Anthropic (Claude 3 and later) and Google
    (r"claude", 200_000),
    (r"gemini-(1\.5|2|3)", 1_048_576),
    (r"gemini", 32_768),
    (r"gemma-?3n|gemma-?3[-:_]?(1b|270m)", 32_768),
    (r"gemma-?3", 131_072),
    (r"gemma", 8_192),
    # Meta
    (r"codellama", 16_384),
    (r"llama-?4", 131_072),
    (r"llama-?3\.[1-3]", 131_072),
    (r"llama-?3", 8_192),
    (r"llama-?2", 4_096),
    # Qwen (Qwen2.5's 128K needs YaRN that servers rarely enable: 32K)
    (r"qwen-?3[-.]?coder|qwen-?3-(next|vl)|qwen-?3.*2507", 262_144),
    (r"qwen-?3", 40_960),
    (r"qwq", 32_768),
    (r"qwen-?2", 32_768),
    # Mistral
    (r"mistral-nemo|mistral-large|ministral|pixtral", 131_072),
    (r"mistral|mixtral|codestral", 32_768),
    # Microsoft Phi (Phi-3 comes as 4K and 128K variants)
    (r"\bphi-?3.*128k|\bphi-?3\.5|\bphi-?4-?mini", 131_072),
    (r"\bphi-?4", 16_384),
    (r"\bphi-?3", 4_096),
    # Others often served
    (r"command-r|kimi-k2|glm-?4|grok", 131_072),
)
_TABLE = tuple((re.compile(pattern), tokens) for pattern, tokens in MODEL_WINDOWS)


def table_window(model: str) -> Window | None:
    """The model table's window for this model name, or None for an unknown family."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    for pattern, tokens in _TABLE:
        found = pattern.search(name) if name else None
        if found:
            return Window(tokens, "model table", f"model table: {found.group(0)} → {tokens}")
    return None


def reported_window(tokens: int) -> Window:
    """The window a provider's "context length exceeded" error stated."""
    return Window(tokens, "provider error", f"the provider reported {tokens} tokens")


def resolve_window(
    *, thread_setting: int | None, settings: ProviderSettings, model: str, provider: Window | None
) -> Window:
    """The window to plan with. The provider's metadata outranks the model table because a
    server may run a model with a smaller context than the model's maximum."""
    if thread_setting:
        return Window(thread_setting, "thread setting", "this thread's setting")
    if settings.context_window:
        if settings.sources.get("contextWindow") == "environment":
            return Window(settings.context_window, "environment", "LLM_CONTEXT_WINDOW")
        return Window(settings.context_window, "settings", "Settings")
    if provider is not None:
        return provider
    return table_window(model) or Window(
        DEFAULT_WINDOW, "default", "the default for a model of unknown window"
    )


def turn_window(
    settings: ProviderSettings,
    model: str,
    stated: Window | None,
    learned: Mapping[str, int] | None = None,
) -> Window:
    """The window a chat turn plans with: the settings', else what the provider states
    (`stated`, probed), else the model table's; and when the provider's overflow error said
    that window was too large (`learned`), the window it stated instead."""
    window = resolve_window(thread_setting=None, settings=settings, model=model, provider=stated)
    if learned and learned.get("over") == window.tokens:
        window = reported_window(int(learned["tokens"]))
    return window


# --- the budget -----------------------------------------------------------------------------

# The answer's limit (what a model call may write at most, sent as `max_tokens`): 20% of the
# window in [512, 8192], never more than the window leaves after the request (output_limit.py).
RESERVE_SHARE, RESERVE_MIN, RESERVE_MAX = 0.20, 512, 8192
# The reserve (what the budget keeps free for the answer, whatever the request): sized to what
# answers use, with a floor. Measured (issue 36): the natural-chat answers of
# bench/memory_prose.py take 27 tokens (median; p95 53, at most 72, printed by the bench); the
# graph tools' calls (addNode, connectNodes, setWidgetValues) a few dozen each; a whole
# workflow written into one loadWorkflow call 4,000-6,000 (ui/src/tools/fixtures), rare, and
# written in full whenever the request leaves the room (the limit below). So 5% of the window
# in [1024, 4096], never more than the answer's limit: 1,638 at 32K instead of 6,553, 1,024 at
# 8K instead of 1,638, 819 at 4K as before. History is not cut for an answer never written.
ANSWER_SHARE, ANSWER_FLOOR, ANSWER_MAX = 0.05, 1024, 4096
MARGIN_SHARE, MARGIN_MIN = 0.03, 64


@dataclass(frozen=True)
class Budget:
    """What the window leaves for the messages; checked before every request."""

    window: Window
    """The model's context window and where it came from."""
    reserve: int
    """Tokens kept free for the answer: LLM_MAX_OUTPUT_TOKENS when set, else 5% of the window
    in [1024, 4096] and at most the answer's limit; never more than half the window."""
    margin: int
    """Safety margin for what we cannot count (chat template tokens, tokenizer differences):
    3% of the window, at least 64."""
    tools: int
    """Tokens the tool definitions take, counted by the caller."""
    limit: int = 0
    """The answer's limit when the request leaves room for it (`answer_limit`):
    LLM_MAX_OUTPUT_TOKENS when set (then equal to `reserve`), else 20% of the window in
    [512, 8192]; 0: the reserve."""

    @property
    def available(self) -> int:
        """Tokens left for system prompt and messages (may be 0 or negative)."""
        return self.window.tokens - self.reserve - self.margin - self.tools

    def answer_limit(self, prompt_tokens: int) -> int:
        """`max_tokens` for a request of `prompt_tokens` (tools included, as the provider
        counts them): what the window leaves after it and the margin, at most `limit`, at
        least the reserve. A provider that honours max_tokens (and one that refuses a prompt
        plus max_tokens over its window, as vLLM does) always gets a limit the window holds:
        the request fits the budget, so the window leaves it at least the reserve."""
        room = self.window.tokens - self.margin - prompt_tokens
        return max(self.reserve, min(self.limit or self.reserve, room))


def compute_budget(window: Window, max_output_tokens: int | None, tool_tokens: int) -> Budget:
    size = window.tokens
    wanted = max_output_tokens or min(max(int(size * RESERVE_SHARE), RESERVE_MIN), RESERVE_MAX)
    limit = min(wanted, size // 2)
    reserve = limit
    if not max_output_tokens:  # (the user's own setting is kept as it is)
        reserve = min(limit, max(ANSWER_FLOOR, min(int(size * ANSWER_SHARE), ANSWER_MAX)))
    margin = max(int(size * MARGIN_SHARE), MARGIN_MIN)
    return Budget(window, reserve, margin, tool_tokens, limit)


class ContextBudgetError(CodedError):
    """A request that cannot fit the budget whatever we leave out; raised before sending."""

    def __init__(self, message: Message, *, limit_name: str, limit: int, needed: int) -> None:
        super().__init__(message)
        self.limit_name, self.limit, self.needed = limit_name, limit, needed

    @classmethod
    def for_message(cls, needed: int, budget: Budget, model: str) -> ContextBudgetError:
        fit, window = max(budget.available, 0), budget.window
        message = coded(
            "context.message_too_long",
            needed=needed,
            fit=fit,
            model=model or "the model",
            window=window.tokens,
            source=window.detail,
            reserve=budget.reserve,
            margin=budget.margin,
            tools=budget.tools,
        )
        return cls(message, limit_name="context budget", limit=fit, needed=needed)
