"""The model's server: the OpenAI-compatible client and its settings, what kind of server it is and
what it can do (probes, profiles, llama.cpp slots, exact counts), the window's budget and the
answer's limit.

May import: base, tokens, stream.
"""
