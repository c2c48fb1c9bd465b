"""The request: the context engine (a declared list of stages), its steps, cached blocks, inputs
and report, the validator, and the system prompt with its profile per window.

May import: base, tokens, knowledge, tools, store, files, provider.
"""
