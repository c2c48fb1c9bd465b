"""ComfyUI's official workflow templates, read from the installed `comfyui-workflow-templates`
packages (the files ComfyUI serves at `/templates/…`): their index, a search over it, and the
model files each template's workflow declares.

Two layouts exist. ComfyUI 0.3.64 pins `comfyui-workflow-templates==0.1.95`: one package with
`templates/index.json` and every workflow beside it (served as a static folder). Newer cores pin
0.11.x, a meta package whose workflows and index are in `comfyui-workflow-templates-json`
(`comfyui_workflow_templates_json/templates/`; served by `template_asset_handler`). The index
entries have a name, title, description, tags and model families (`models`: "Flux", "SDXL");
sizes are in GB in 0.1.95 and in bytes in 0.11.x. The model FILES are in each workflow, on
its loader nodes (`properties.models`: name, url, directory).

Inside ComfyUI this is the package ComfyUI itself serves (the same Python); standalone, it is
there only if installed. `installed_library()` is None where there is none.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

# Where the index and the workflows are, newest layout first (package, folder inside it).
_LAYOUTS = (
    ("comfyui_workflow_templates_json", "templates"),
    ("comfyui_workflow_templates", "templates"),
)
NAME_RE = re.compile(r"[\w.\-]{1,120}")
_WORD_RE = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "with",
        "for",
        "of",
        "to",
        "in",
        "on",
        "from",
        "my",
        "me",
        "i",
        "want",
        "make",
        "build",
        "create",
        "do",
        "please",
        "can",
        "you",
        "workflow",
        "workflows",
        "template",
        "templates",
        "using",
        "use",
        "that",
        "this",
        "some",
    ]
)
# Words users write for what the index calls otherwise.
_SAME = {
    "txt2img": "text image",
    "t2i": "text image",
    "img2img": "image image",
    "i2i": "image image",
    "i2v": "image video",
    "t2v": "text video",
    "upscaling": "upscale",
    "upscaler": "upscale",
    "enlarge": "upscale",
    "2x": "upscale",
    "4x": "upscale",
    "hires": "upscale",
    "photo": "image",
    "picture": "image",
    "pictures": "image",
    "images": "image",
    "videos": "video",
    "animate": "video",
    "animation": "video",
    "song": "audio",
    "music": "audio",
    "speech": "audio",
    "fill": "inpaint",
    "inpainting": "inpaint",
    "outpainting": "outpaint",
    "extend": "outpaint",
    "editing": "edit",
    "loras": "lora",
}
# How much a word found in each field counts (a template's name, title, tags, model families,
# description).
_WEIGHTS = (("title", 3.0), ("models", 3.0), ("name", 2.0), ("tags", 2.0), ("description", 1.0))


def words(text: str) -> list[str]:
    """The search words of a text: lowercase, without filler, users' synonyms mapped."""
    out: list[str] = []
    for word in _WORD_RE.findall(text.lower().replace("_", " ").replace("-", " ")):
        if word in _STOP:
            continue
        out.extend(_SAME.get(word, word).split())
    return out


@dataclass(frozen=True)
class Template:
    name: str
    title: str
    description: str
    tags: tuple[str, ...]
    families: tuple[str, ...]  # the index's `models`: model families, not files
    api: bool  # runs on partner (API) nodes: needs a Comfy account with credits
    usage: int  # how often it was opened (0.11.x index; 0 when not given)
    fields: tuple[tuple[str, frozenset[str]], ...]  # words per field, for the search

    def score(self, query: list[str], phrase: str, rarity: dict[str, float]) -> float:
        """How well it fits: per query word, the weight of the best field holding it (or a word
        it starts, from 4 letters) times how rare the word is among templates."""
        got = 0.0
        fields = dict(self.fields)
        for word in query:
            best = 0.0
            for field, weight in _WEIGHTS:
                found = fields[field]
                if word in found or (len(word) >= 4 and any(w.startswith(word) for w in found)):
                    best = max(best, weight)
            got += best * rarity.get(word, 1.0)
        got += sum(2.0 for tag in self.tags if len(tag) > 4 and tag.lower() in phrase)
        return got


def _template(entry: dict[str, Any], group: dict[str, Any]) -> Template | None:
    name = entry.get("name")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or entry.get("isApp") is True:
        return None  # (an app, 0.11.x: opened in the app mode of newer frontends only)
    tags = tuple(str(t) for t in entry.get("tags") or ())
    families = tuple(str(m) for m in entry.get("models") or ())
    title = str(entry.get("title") or name)
    description = str(entry.get("description") or "")
    api = (
        name.startswith("api_")
        or "API" in tags
        or str(group.get("category") or "").upper() == "CLOSED SOURCE MODELS"
    )
    fields = (
        ("name", frozenset(words(name))),
        ("title", frozenset(words(title))),
        ("tags", frozenset(words(" ".join(tags)))),
        ("models", frozenset(words(" ".join(families)))),
        ("description", frozenset(words(description))),
    )
    usage = entry.get("usage")
    used = usage if isinstance(usage, int) else 0
    return Template(name, title, description, tags, families, api, used, fields)


@dataclass(frozen=True)
class ModelFile:
    name: str
    folder: str  # ComfyUI's models folder type ("checkpoints", "vae", ...)
    url: str


class TemplateLibrary:
    """The templates of one folder holding `index.json` and the workflows."""

    def __init__(self, folder: Path, package: str) -> None:
        self.folder = folder
        self.package = package
        raw = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        found: dict[str, Template] = {}
        for group in raw if isinstance(raw, list) else ():
            for entry in group.get("templates") or () if isinstance(group, dict) else ():
                template = _template(entry, group) if isinstance(entry, dict) else None
                if template and template.name not in found:
                    found[template.name] = template
        self.templates = found
        counts: Counter[str] = Counter()
        for template in found.values():
            counts.update(frozenset().union(*(w for _, w in template.fields)))
        total = max(1, len(found))
        # (a word most templates have, "image", counts for little; a rare one, "refiner", for much)
        self.rarity = {w: math.log((1 + total) / (1 + n)) + 0.2 for w, n in counts.items()}

    def search(
        self, query: str, tags: Iterable[str] = (), limit: int = 5
    ) -> list[tuple[Template, float]]:
        """The templates that match best (at least one query word), best first; `tags`: only
        templates with one of these tags."""
        wanted = {t.strip().lower() for t in tags if t.strip()}
        query_words = list(dict.fromkeys(words(query)))
        phrase = " ".join(words(query))
        scored = []
        for template in self.templates.values():
            if wanted and not wanted & {t.lower() for t in template.tags}:
                continue
            score = template.score(query_words, phrase, self.rarity) if query_words else 1.0
            if score <= 0:
                continue
            if template.api and "api" not in query_words:
                score *= 0.6  # a local model first, unless the user asks for a service
            scored.append((template, score))
        scored.sort(key=lambda ts: (-ts[1], -ts[0].usage, ts[0].name))
        return scored[: max(1, limit)]

    def workflow(self, name: str) -> dict[str, Any] | None:
        """A template's workflow JSON, or None when there is no such template."""
        if name not in self.templates:
            return None
        path = self.folder / f"{name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def model_files(self, name: str) -> list[ModelFile]:
        """The model files a template's workflow declares on its nodes (subgraphs too)."""
        workflow = self.workflow(name) or {}
        seen: dict[str, ModelFile] = {}
        for node in _nodes(workflow):
            properties = node.get("properties") if isinstance(node, dict) else None
            for model in (properties or {}).get("models") or ():
                if not isinstance(model, dict) or not isinstance(model.get("name"), str):
                    continue
                file = ModelFile(
                    model["name"], str(model.get("directory") or ""), str(model.get("url") or "")
                )
                seen.setdefault(file.name, file)
        return list(seen.values())


def _nodes(workflow: dict[str, Any]) -> Iterator[Any]:
    yield from workflow.get("nodes") or ()
    definitions = workflow.get("definitions")
    subgraphs = definitions.get("subgraphs") if isinstance(definitions, dict) else None
    for subgraph in subgraphs or ():
        if isinstance(subgraph, dict):
            yield from subgraph.get("nodes") or ()


def _package_folder(package: str, folder: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or ()) if spec else ():
        candidate = Path(location) / folder
        if (candidate / "index.json").is_file():
            return candidate
    return None


@lru_cache(maxsize=1)
def installed_library() -> TemplateLibrary | None:
    """The templates of the installed package (newest layout first), or None."""
    for package, folder in _LAYOUTS:
        found = _package_folder(package, folder)
        if found is not None:
            try:
                return TemplateLibrary(found, package)
            except (OSError, ValueError):
                continue
    return None
