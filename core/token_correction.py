"""The per-model correction learned from what providers report (`usage.prompt_tokens`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


class Correction:
    """Per-model factor: the provider's reported `usage.prompt_tokens` / our estimate for the
    same request, as an exponential moving average, clamped to [0.5, 2.0].

    It matters for models whose tokenizer we don't have (local Llama, Qwen, Mistral... counted
    with cl100k): their true counts differ by a steady ratio, and their chat templates render
    tool schemas and turns differently. For OpenAI models counted with their own encoding it
    converges to ~1.0 anyway, so callers may apply it to every model. Samples are ignored when
    the estimate is small (< `MIN_ESTIMATED`: fixed overheads dominate) or the ratio is absurd
    (outside [0.2, 5]: e.g. a server that reports only the tokens it did not take from its KV
    cache, or a truncated prompt)."""

    LOW = 0.5
    HIGH = 2.0
    ALPHA = 0.3
    MIN_ESTIMATED = 50
    ABSURD = (0.2, 5.0)

    def __init__(self) -> None:
        self._factors: dict[str, float] = {}
        self._samples: dict[str, int] = {}

    def observe(self, model: str, estimated: int, reported: int) -> float:
        """Learn from one request; returns the model's factor after it."""
        current = self.factor(model)
        if estimated < self.MIN_ESTIMATED or reported <= 0:
            return current
        ratio = reported / estimated
        if not self.ABSURD[0] <= ratio <= self.ABSURD[1]:
            return current
        sample = min(self.HIGH, max(self.LOW, ratio))
        # The first sample replaces the 1.0 prior outright: a model's ratio is steady.
        new = current + self.ALPHA * (sample - current) if model in self._factors else sample
        self._factors[model] = min(self.HIGH, max(self.LOW, new))
        self._samples[model] = self._samples.get(model, 0) + 1
        return self._factors[model]

    def factor(self, model: str) -> float:
        """The model's factor; 1.0 until observed."""
        return self._factors.get(model, 1.0)

    def samples(self, model: str) -> int:
        return self._samples.get(model, 0)

    def apply(self, model: str, tokens: int) -> int:
        """`tokens` scaled by the model's factor, rounded up."""
        return math.ceil(tokens * self.factor(model))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready state, one key per model: `{model: {"factor": f, "samples": n}}` (a
        key-value settings store can keep a row per model)."""
        return {
            m: {"factor": f, "samples": self._samples.get(m, 0)} for m, f in self._factors.items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Correction:
        """Restore `as_dict()` output (an entry may also be a bare factor); invalid entries are
        skipped, factors clamped."""
        out = cls()
        if not isinstance(data, Mapping):
            return out
        for model, entry in data.items():
            f = entry.get("factor") if isinstance(entry, Mapping) else entry
            n = entry.get("samples", 1) if isinstance(entry, Mapping) else 1
            if not isinstance(model, str) or isinstance(f, bool):
                continue
            if not isinstance(f, (int, float)) or not math.isfinite(f) or f <= 0:
                continue
            out._factors[model] = min(cls.HIGH, max(cls.LOW, float(f)))
            out._samples[model] = n if isinstance(n, int) and not isinstance(n, bool) else 1
        return out
