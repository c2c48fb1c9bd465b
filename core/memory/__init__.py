"""Looking back: searching the conversation (by words, meaning and time), the searchConversation
tool, and the passages recalled for a new message.

May import: base, tokens, tools, store.
"""
