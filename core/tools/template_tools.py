"""searchTemplates: ComfyUI's official workflow templates that fit a request, one compact line
each (core/knowledge/templates.py reads them), with the model files each needs and whether this
ComfyUI has them. The template itself is opened by the panel (loadTemplate, in
ui/src/tools/loadTemplate.ts), the way ComfyUI's own template browser opens it."""

from __future__ import annotations

import asyncio
from typing import Any

from ..knowledge import Environment, Template, TemplateLibrary, installed_library
from .server_tools import ToolContext, ToolFailure

NOT_AVAILABLE = (
    "Templates are not available here: the comfyui-workflow-templates package is not installed "
    "in this Python (ComfyUI installs it from its requirements.txt). Build the workflow with the "
    "graph tools instead."
)
_DESCRIPTION_CHARS = 90


def _short(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= _DESCRIPTION_CHARS:
        return text
    return text[: _DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0] + "…"


def template_line(library: TemplateLibrary, template: Template, env: Environment) -> str:
    """`name: title — what it makes [tags]; models: file (folder, installed|missing), …`, and
    partner (API) nodes flagged."""
    line = f"{template.name}: {template.title} — {_short(template.description)}"
    if template.tags:
        line += f" [{', '.join(template.tags)}]"
    files = library.model_files(template.name)
    if files:
        each = []
        for file in files:
            have = file.name in env.models.get(file.folder, ())
            each.append(f"{file.name} ({file.folder}, {'installed' if have else 'missing'})")
        line += "; models: " + ", ".join(each)
    elif not template.api:
        line += "; models: none declared"
    if template.api:
        line += "; API nodes: runs on a paid partner service, needs a Comfy account"
    return line


def _search(library: TemplateLibrary, args: dict[str, Any], env: Environment) -> dict[str, Any]:
    query = str(args.get("query") or "")
    tags = [str(t) for t in args.get("tags") or ()]
    found = library.search(query, tags, int(args.get("limit", 5)))
    if not found:
        raise ToolFailure(
            f"No template matches '{query}'{' with tags ' + ', '.join(tags) if tags else ''}. "
            "Try fewer or other words (what it makes: 'text to image', 'upscale'; a model "
            "family: 'flux', 'sdxl', 'wan'), or build the workflow with the graph tools."
        )
    return {
        "templates": [template_line(library, t, env) for t, _ in found],
        "note": "loadTemplate(name) opens one in a new tab and says which models are missing.",
    }


async def search_templates(args: dict[str, Any], ctx: ToolContext) -> Any:
    library = await asyncio.to_thread(installed_library)  # (reads the index once)
    if library is None:
        raise ToolFailure(NOT_AVAILABLE)
    env = await ctx.environment.get()
    return await asyncio.to_thread(_search, library, args, env)
