"""Installing what a workflow needs (issue 28): which node packs and models it lacks (`scan`), where
they come from, ComfyUI-Manager read over HTTP (`manager_client`), models downloaded into
ComfyUI's folders (`downloads`).

May import: base, knowledge, store.
"""
