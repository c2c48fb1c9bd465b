"""Summaries: the model's summary and its checks, the deterministic digest that stands in, the
background compactor, and /compact (summarize now).

May import: base, tokens, stream, tools, store, provider, context.
"""

from .compact_now import compact_now
from .compactor import Compactor
from .summarizer import SUMMARY_MAX_TOKENS, Prefix, boundary_of, summarize

__all__ = [
    "SUMMARY_MAX_TOKENS",
    "Compactor",
    "Prefix",
    "boundary_of",
    "compact_now",
    "summarize",
]
