"""A chat turn end to end: the request body checked, the plan, the context, the model's stream with
its tool steps, the answer saved as it streams, and delegation. It is handed the parts of a turn
(`turn_parts.py`) by the service above it.

May import: base, tokens, stream, knowledge, tools, store, memory, files, provider, context,
summary.
"""
