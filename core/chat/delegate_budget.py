"""What one delegated task may spend (delegation.py), from the LLM_DELEGATE_* settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..base import env_int


@dataclass(frozen=True)
class DelegateBudget:
    """The most one delegated task may spend (checked as it runs)."""

    steps: int = 6
    """LLM_DELEGATE_MAX_STEPS: model calls. "Several lookups" is 2-4 rounds (a round can hold
    parallel calls) plus the answer; 6 leaves one spare, below the parent's 8."""
    tokens: int = 40_000
    """LLM_DELEGATE_MAX_TOKENS: prompt + completion tokens over all its calls. Each call resends
    the task and the results so far: 6 calls growing to ~10K (an 8K-16K window's worth)."""
    seconds: float = 180.0
    """LLM_DELEGATE_TIMEOUT_SECONDS: wall time. 6 calls of a local 8B model on a CPU take
    about 2 minutes; the user sees its progress meanwhile and can stop it."""
    wrap_up: float = 0.75
    """Past this share of the tokens or the time, the next call offers no tools: answer now."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> DelegateBudget:
        return cls(
            steps=env_int(environ, "LLM_DELEGATE_MAX_STEPS", cls.steps, minimum=1),
            tokens=env_int(environ, "LLM_DELEGATE_MAX_TOKENS", cls.tokens, minimum=1000),
            seconds=float(env_int(environ, "LLM_DELEGATE_TIMEOUT_SECONDS", 180, minimum=1)),
        )
