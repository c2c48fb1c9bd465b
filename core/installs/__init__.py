"""Installing what a workflow needs (issue 28): which node packs and models it lacks, and from
where they come; ComfyUI-Manager read over HTTP (`manager_client`).

May import: base, knowledge.
"""
