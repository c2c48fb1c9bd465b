"""What is kept: the SQLite store and its migrations, threads and their messages, the per-thread
state and what each turn was sent as, delegated traces, the graph's checkpoints, the user's own
context, and the conversation's search index (words, and meaning where embeddings are installed).

May import: base, tokens, tools.
"""
