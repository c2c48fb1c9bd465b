"""Files: what the user brings (attachments: images, workflows, text; projects with their pinned
documents) and what a run made (read from ComfyUI's output and temp folders only, and looked at).

May import: base, tokens, store.
"""
