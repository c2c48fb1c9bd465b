"""Missing node packs and models of a workflow: find them (scan), and install them (issue 28).

May import: base, knowledge, store.
"""
