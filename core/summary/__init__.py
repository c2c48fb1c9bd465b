"""Summaries: the model's summary and its checks, the deterministic digest that stands in, the
background compactor, and /compact (summarize now).

May import: base, tokens, stream, tools, store, provider, context.
"""
