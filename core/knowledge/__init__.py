"""What the assistant can look up on this machine: ComfyUI's installed nodes and models (the
environment index), skills as files, and the shipped system context.

May import: base.
"""
