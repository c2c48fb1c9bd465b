"""The tools: each declared once (the registry, generating the panel's schemas), the server tools'
handlers (they get the thread's store through their ToolContext, never by import), a tool call
in one line (digests), results cut to size, and documents to cite.

May import: base, knowledge.
"""
