"""The answer's stream to the panel: the AI SDK UI message stream (SSE), the translation of the
provider's chunks into it, think tags, redaction of secrets, tool calls a model wrote as text or
nearly right (read as meant), and the answer assembled from the parts.

May import: base.
"""
