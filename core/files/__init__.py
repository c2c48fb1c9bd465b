"""What the user brings: attachments (images, workflows, text) and how they are read, and projects
with their pinned documents.

May import: base, tokens, store.
"""
