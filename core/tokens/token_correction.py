"""The per-model correction of our token counts, per component of a request: the system message,
the tool definitions and the messages (history, summary, reply priming).

Why per component: a provider's chat template renders each part its own way. A server that drops
the `tools` array (llama.cpp with a template that cannot render them), or a template that prints
tool schemas twice as large as their compact JSON, says nothing about how it counts a user's
message. One factor for the whole request would fold such a miscount into every message and
misjudge the history budget by the size of the tool definitions.

How the factors are learned (`Correction`): a provider reports one total per request,
`usage.prompt_tokens = fs·S + ft·T + fm·M` (S, T, M: our exact counts of the three parts). One
sample cannot separate three factors, so we treat them as a small Bayesian linear regression,
updated per sample (a Kalman filter over three constants):

- The prior says how they usually differ: a common ratio shared by all three (another tokenizer
  than cl100k, sd 0.15) plus a deviation of each part (system sd 0.05: one plain text; messages
  sd 0.15: per-message template tokens; tools sd 0.5: templates render schemas anywhere from
  0.7x to 1.5x of compact JSON, or drop them). So a first sample moves the three together,
  except for what the tools are more likely to explain.
- Requests differ in composition (the history grows while the system prompt and tools stay), so
  the samples of a thread separate the message factor (the slope over M) from the fixed part
  (fs·S + ft·T); the prior splits the fixed part between system and tools.
- Exact counts measured by the server itself (`calibrate`: llama.cpp's /apply-template and
  /tokenize render the system message and the tools alone) are observations of one component
  each with no noise: they pin those factors, and the usage totals then go to the messages.
- Old evidence fades: before each usage sample it weighs 5% less (the uncertainty grows by
  1/0.95, up to the prior's), so a changed template or server is followed within a few dozen
  requests; 40% less once the server calibrated the fixed parts, so the messages factor
  follows the thread's content (bench/count_accuracy.py: the calibrated messages error after
  3 requests in Chinese, Japanese and Arabic chats 6.7-9.6% with 5%, 2.3-2.8% with 40%).

Simpler schemes fail a case that matters: one EMA factor (the previous design) spreads dropped
tools over every message; fitting the message factor with the fixed parts held at our estimate
blames the messages for the tokenizer ratio of a 3,000-token system prompt.

Samples are ignored when the estimate is small (< `MIN_ESTIMATED`: fixed overheads dominate) or
the total is absurd against the prediction (outside [0.2, 5]: a server that reports only the
tokens it did not take from its KV cache, a truncated prompt).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

COMPONENTS = ("system", "tools", "messages")


class Parts(NamedTuple):
    """Tokens of one request by component: our exact counts, or the server's."""

    system: int = 0
    tools: int = 0
    messages: int = 0

    @property
    def total(self) -> int:
        return sum(self)


class Factors(NamedTuple):
    """How much the provider counts per token we count, per component."""

    system: float = 1.0
    tools: float = 1.0
    messages: float = 1.0

    @classmethod
    def uniform(cls, factor: float) -> Factors:
        return cls(factor, factor, factor)

    def scale(self, parts: Parts) -> int:
        """`parts` as the provider counts them, rounded up."""
        return math.ceil(sum(f * n for f, n in zip(self, parts, strict=True)))

    def overall(self, parts: Parts) -> float:
        """The factor these parts get as a whole (1.0 for an empty request)."""
        weighted = sum(f * n for f, n in zip(self, parts, strict=True))
        return weighted / parts.total if parts.total else 1.0


_Vector = list[float]
_Matrix = list[list[float]]


def _prior() -> _Matrix:
    common, own = 0.15**2, (0.05**2, 0.5**2, 0.15**2)
    return [[common + (own[i] if i == j else 0.0) for j in range(3)] for i in range(3)]


PRIOR = _prior()
PRIOR_TRACE = sum(PRIOR[i][i] for i in range(3))


@dataclass
class _Model:
    """One model's factors (the posterior mean), their covariance, what shaped them."""

    mean: _Vector = field(default_factory=lambda: [1.0, 1.0, 1.0])
    cov: _Matrix = field(default_factory=lambda: [row[:] for row in PRIOR])
    samples: int = 0
    calibrated: str | None = None  # how the server measured the components, if it did

    SURPRISE = 6.0  # a residual this many standard deviations off resets the uncertainty

    def update(
        self, x: Sequence[float], y: float, noise: float, fixed: frozenset[int] = frozenset()
    ) -> None:
        """One observation `y = x · factors + e`, e ~ N(0, noise). One far outside what the
        factors and their uncertainty expect (a new template, another server under the same
        model name) first resets the uncertainty to the prior. A factor the update would push
        past its bound stays at the bound, and the others explain the rest (`fixed`)."""
        residual = y - sum(xi * m for xi, m in zip(x, self.mean, strict=True))
        px, spread = self._spread(x, noise)
        if residual * residual > self.SURPRISE**2 * spread and not fixed:
            self.cov = [row[:] for row in PRIOR]
            px, spread = self._spread(x, noise)
        gain = [0.0 if i in fixed else p / spread for i, p in enumerate(px)]
        mean = [m + g * residual for m, g in zip(self.mean, gain, strict=True)]
        bounded = [
            min(Correction.HIGH, max(low, m)) for m, low in zip(mean, Correction.LOWS, strict=True)
        ]
        out = frozenset(i for i in range(3) if bounded[i] != mean[i])
        if out:
            for i in out:
                self.mean[i] = bounded[i]
            rest = [0.0 if i in out else xi for i, xi in enumerate(x)]
            self.update(rest, y - sum(bounded[i] * x[i] for i in out), noise, fixed | out)
            return
        self.mean = mean
        cov = [[c - gain[i] * px[j] for j, c in enumerate(row)] for i, row in enumerate(self.cov)]
        self.cov = [[(cov[i][j] + cov[j][i]) / 2 for j in range(3)] for i in range(3)]

    def _spread(self, x: Sequence[float], noise: float) -> tuple[_Vector, float]:
        """P·x and the variance of the observation, x·P·x + noise."""
        px = [sum(c * xj for c, xj in zip(row, x, strict=True)) for row in self.cov]
        return px, sum(xi * p for xi, p in zip(x, px, strict=True)) + noise

    def forget(self, share: float) -> None:
        """Old evidence weighs `share` less (exponential forgetting: the covariance grows by
        1 / (1 - share)), up to the prior's total uncertainty."""
        if sum(self.cov[i][i] for i in range(3)) * (1 - share) < PRIOR_TRACE * (1 - share) ** 2:
            self.cov = [[c / (1 - share) for c in row] for row in self.cov]

    def factors(self) -> Factors:
        """The factors to apply, to 4 decimals (a factor learned as 0.00001 is 0: ceil would
        turn it into a token)."""
        return Factors(*(round(m, 4) for m in self.mean))


class Correction:
    """Per-model, per-component factors learned from the provider's reported
    `usage.prompt_tokens` and from the server's own counts (see the module's docstring)."""

    # system, tools, messages: a server may drop the tools entirely; a large vocabulary counts
    # CJK, Arabic or Hindi prose at 0.3-0.5x of cl100k (Gemma 3: Arabic 0.47, Chinese 0.50,
    # Hindi 0.33). Fitting trusts a factor below 1 only for the messages, once the server's
    # own counts calibrated them (context_stages' `fitting`; bench/window_fill.py).
    LOWS = (0.3, 0.0, 0.3)
    HIGH = 2.0
    MIN_ESTIMATED = 50
    ABSURD = (0.2, 5.0)
    NOISE = 0.15  # relative to the messages: their ratio varies with content (JSON, prose)
    FORGET = 0.05
    # Calibrated, the system and tools factors are pinned and a usage total measures this
    # request's messages: their ratio drifts as the thread's content does (prose in Arabic or
    # Chinese 0.5x, tool JSON 1.6x of cl100k on Gemma 3), and 5% a request lagged it by ~10%.
    FORGET_CALIBRATED = 0.4

    def __init__(self) -> None:
        self._models: dict[str, _Model] = {}

    def observe(self, model: str, parts: Parts, reported: int) -> Factors:
        """Learn from one request's reported prompt tokens; returns the model's factors."""
        state = self._models.get(model) or _Model()
        if parts.total < self.MIN_ESTIMATED or reported <= 0:
            return state.factors()
        ratio = reported / max(1, state.factors().scale(parts))
        if not self.ABSURD[0] <= ratio <= self.ABSURD[1]:
            return state.factors()
        state.forget(self.FORGET_CALIBRATED if state.calibrated else self.FORGET)
        state.update(parts, reported, (self.NOISE * parts.messages) ** 2 + 4)
        state.samples += 1
        self._models[model] = state
        return state.factors()

    def calibrate(
        self, model: str, ours: Parts, server: Parts, source: str, exact: bool = False
    ) -> Factors:
        """Learn from the server's own counts of the same components (`ours` are our counts):
        the system message and the tools are exact (one token of noise); the messages stand
        for their content only, as a usage total does, unless `exact` (a request near the
        window's limit: its own messages' ratio is the one that must be right now)."""
        state = self._models.get(model) or _Model()
        for i, (n, measured) in enumerate(zip(ours, server, strict=True)):
            if n <= 0 or measured < 0:
                continue
            x = [float(n) if j == i else 0.0 for j in range(3)]
            pinned = exact or COMPONENTS[i] != "messages"
            state.update(x, measured, 1.0 if pinned else (self.NOISE * measured) ** 2 + 4)
        state.calibrated = source
        self._models[model] = state
        return state.factors()

    def factors(self, model: str) -> Factors:
        """The model's factors; 1.0 each until observed."""
        state = self._models.get(model)
        return state.factors() if state else Factors()

    def samples(self, model: str) -> int:
        state = self._models.get(model)
        return state.samples if state else 0

    def calibrated(self, model: str) -> str | None:
        """How the server measured this model's components ("" or None: it did not)."""
        state = self._models.get(model)
        return state.calibrated if state else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready state, one key per model (a key-value settings store keeps a row per
        model): `{model: {"factor": messages, "samples": n, "system": f, "tools": f, "cov":
        [[...]], "calibrated": source}}`. `factor` and `samples` mean what the single factor of
        earlier versions meant to them."""
        return {
            m: {
                "factor": s.mean[2],
                "samples": s.samples,
                "system": s.mean[0],
                "tools": s.mean[1],
                "cov": [[round(c, 9) for c in row] for row in s.cov],
                "calibrated": s.calibrated,
            }
            for m, s in self._models.items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Correction:
        """Restore `as_dict()` output, or an earlier version's `{model: {"factor", "samples"}}`
        (its one factor becomes all three, with the prior's uncertainty) or a bare factor;
        invalid entries are skipped, factors clamped."""
        out = cls()
        if not isinstance(data, Mapping):
            return out
        for model, entry in data.items():
            fields = entry if isinstance(entry, Mapping) else {"factor": entry}
            factor = _factor(fields.get("factor"))
            if not isinstance(model, str) or not factor:
                continue
            mean = [_factor(fields.get(name)) for name in ("system", "tools")]
            state = _Model(
                mean=[
                    min(cls.HIGH, max(low, f))
                    for f, low in zip(
                        [mean[0] or factor, factor if mean[1] is None else mean[1], factor],
                        cls.LOWS,
                        strict=True,
                    )
                ],
                cov=_matrix(fields.get("cov")) or [row[:] for row in PRIOR],
            )
            n = fields.get("samples", 1)
            state.samples = n if isinstance(n, int) and not isinstance(n, bool) else 1
            source = fields.get("calibrated")
            state.calibrated = source if isinstance(source, str) and source else None
            out._models[model] = state
        return out


def _factor(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok and value >= 0 else None


def _matrix(value: Any) -> _Matrix | None:
    """A stored 3x3 covariance, if it is one (finite, symmetric, positive diagonal)."""
    try:
        matrix = [[float(c) for c in row] for row in value]
    except (TypeError, ValueError):
        return None
    if len(matrix) != 3 or any(len(row) != 3 for row in matrix):
        return None
    if not all(math.isfinite(c) for row in matrix for c in row):
        return None
    if any(matrix[i][i] <= 0 or matrix[i][j] != matrix[j][i] for i in range(3) for j in range(3)):
        return None
    return matrix
