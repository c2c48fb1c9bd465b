"""Counting: the exact tokenizer (cl100k, offline), the fast estimate, the per-model correction
learned from the provider's usage, images' costs, and a text cut into passages of a token size.

May import: base.
"""
