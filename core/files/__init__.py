"""Files: what the user brings (attachments: images, workflows, text; projects with their pinned
documents) and what a run made (read from ComfyUI's output and temp folders only, looked at, and
the newest run's images drawn as one picture for a model that sees).

May import: base, tokens, store.
"""
