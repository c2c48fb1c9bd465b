"""Summaries: the model's summary and its checks, the deterministic digest that stands in, and the
background compactor.

May import: base, tokens, stream, tools, provider, context.
"""
