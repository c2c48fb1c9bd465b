"""Counting: the exact tokenizer (cl100k, offline), the fast estimate, the per-model correction
learned from the provider's usage, images' costs, and a text cut into passages of a token size.

May import: base.
"""

from .image_costs import ImageCost, fit, image_budget, image_cost_for
from .packing import aiming, pack, within
from .passages import split_passages
from .token_correction import Factors, Parts
from .token_estimate import estimate_tokens
from .token_images import sniff_size
from .tokens import REPLY_PRIMING, Correction, TokenCounter, counter_for

__all__ = [
    "REPLY_PRIMING",
    "Correction",
    "Factors",
    "ImageCost",
    "Parts",
    "TokenCounter",
    "aiming",
    "counter_for",
    "estimate_tokens",
    "fit",
    "image_budget",
    "image_cost_for",
    "pack",
    "sniff_size",
    "split_passages",
    "within",
]
