"""Installing what a workflow needs (issue 28): which node packs and models it lacks (`scan`), where
they come from: ComfyUI-Manager read over HTTP (`manager_client`), its answers parsed once
(`node_map`: node map and installed packs; `model_refs`: model list; `pack_list`: pack list)
and handed to the scan (`lookups`); the Comfy Registry, when online (`registry_client`, its
packs in `registry_pack`), asked for what Manager leaves open (`registry_lookups`); models
downloaded into ComfyUI's folders (`downloads`).

May import: base, knowledge, store.
"""
