"""The ground floor: the wire types (UI messages, OpenAI messages, the context report), the errors
the routes turn into 4xx, atomic files, fingerprints, compact JSON, and the UI-to-OpenAI message
conversion.

May import: nothing of core.
"""
