"""What this ComfyUI has installed: node types, custom-node packages, models.

The index is built from ComfyUI's own node definitions (the `/api/object_info` data), so the
assistant sees exactly what the frontend sees. Inside ComfyUI `comfy_environment.scan_comfyui`
builds it; standalone it comes from an `object_info.json` file. Everything here is pure except
the loaders (`load_object_info_file`, `embedded_docs_dir`) and `EnvironmentService`, which runs
every scan and file access in a thread: ComfyUI's event loop must never stall on a disk walk.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import gzip
import importlib.util
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..base import write_atomic

log = logging.getLogger("comfyui_assistant")

DEFAULT_OBJECT_INFO = Path(__file__).resolve().parents[2] / "data" / "object_info.json.gz"
COMFYUI_SOURCE = "comfyui"
CACHE_NAME = "environment.json"
CACHE_VERSION = 1
CORE_PACKAGE = "core"
CORE_MODULES = ("nodes", "comfy_extras", "comfy_api_nodes")
WIDGET_KINDS = {"INT": "int", "FLOAT": "float", "STRING": "string", "BOOLEAN": "boolean"}
OUTPUT_KEYS = ("output_name", "output_is_list", "output_tooltips")
MAX_CHOICES = 60
DESCRIPTION_LIMIT = 160
DOC_LIMIT = 6000
STOP_WORDS = frozenset({"a", "an", "the", "of", "to", "for", "and", "or", "in", "with", "node"})
# Names ComfyUI renamed; folder_paths still answers to the old ones.
MODEL_ALIASES = {"clip": "text_encoders", "unet": "diffusion_models"}


def package_of(python_module: str) -> str:
    """The package a node comes from, as ComfyUI's frontend names it (its node-source badge)."""
    parts = python_module.split(".")
    if parts[0] in CORE_MODULES:
        return CORE_PACKAGE
    if parts[0] == "custom_nodes" and len(parts) > 1 and parts[1]:
        return parts[1].split("@")[0]  # the Manager may install as "<name>@<version>"
    return "unknown"


class UnknownModelCategory(KeyError):
    """`models_in` was asked for a folder type ComfyUI does not know; `categories` are known."""

    def __init__(self, category: str, categories: list[str]) -> None:
        self.category, self.categories = category, categories
        super().__init__(
            f"Unknown model category {category!r}; use one of: {', '.join(categories) or 'none'}"
        )


@dataclass(frozen=True)
class Input:
    """One input of a node, its object_info spec decoded."""

    name: str
    type: str
    required: bool
    kind: str | None  # widget kind; None for a link input
    options: Mapping[str, Any]
    choices: list[Any] | None

    @classmethod
    def parse(cls, name: str, spec: Any, required: bool) -> Input:
        spec = list(spec) if isinstance(spec, (list, tuple)) else [spec]
        first = spec[0] if spec else "*"
        options = spec[1] if len(spec) > 1 and isinstance(spec[1], Mapping) else {}
        if isinstance(first, (list, tuple)):  # the classic combo: the choices come first
            return cls(name, "COMBO", required, "combo", options, list(first))
        kind = "combo" if first == "COMBO" else WIDGET_KINDS.get(str(first))
        if options.get("forceInput"):
            kind = None  # a widget type shown as a socket only
        choices = list(options.get("options") or []) if kind == "combo" else None
        return cls(name, str(first), required, kind, options, choices)


def _inputs(entry: Mapping[str, Any]) -> list[Input]:
    """Required then optional inputs in ComfyUI's order; hidden inputs are not the user's."""
    sections = entry.get("input") or {}
    order = entry.get("input_order") or {}
    result = []
    for section in ("required", "optional"):
        specs = sections.get(section) or {}
        names = [n for n in order.get(section) or [] if n in specs]
        names += [n for n in specs if n not in names]
        result += [Input.parse(n, specs[n], section == "required") for n in names]
    return result


def _outputs(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    result = []
    for i, out_type in enumerate(entry.get("output") or []):
        name, is_list, tip = (_at(entry.get(key), i) for key in OUTPUT_KEYS)
        out = {"name": str(name or out_type), "type": str(out_type), "isList": bool(is_list)}
        if tip:
            out["tooltip"] = tip
        result.append(out)
    return result


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, (list, tuple)) and i < len(values) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _trim(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",.;:") + "…"


def _words(text: str) -> set[str]:
    """Lower-case words, camel case split: "KSamplerAdvanced" -> {"k", "sampler", "advanced"}."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return set(re.findall(r"[a-z0-9]+", text.lower()))


# A field a query word can match: (its text, its words, score for a whole word, for a part).
Field = tuple[str, set[str], int, int]


def _search_fields(node_type: str, entry: Mapping[str, Any]) -> list[Field]:
    """Names first (with ComfyUI's search aliases), then link types, category, description."""
    aliases = [a for a in entry.get("search_aliases") or [] if isinstance(a, str)]
    names = " ".join([node_type, _text(entry.get("display_name")), *aliases])
    types = {i.type for i in _inputs(entry) if i.kind is None}
    types |= {str(t) for t in entry.get("output") or []}
    category, desc = _text(entry.get("category")), _text(entry.get("description"))
    return [
        (names.lower(), _words(names), 12, 8),
        ("", {w for t in types for w in (t.lower(), *_words(t))}, 8, 0),
        (category.lower(), _words(category), 5, 3),
        (desc.lower(), _words(desc), 3, 1),
    ]


def _word_score(fields: list[Field], word: str) -> int:
    """Summed over fields: a word in the name and the types beats one only in a description."""
    return sum(
        full if word in words else part if word in text else 0 for text, words, full, part in fields
    )


@dataclass(frozen=True)
class Environment:
    nodes: Mapping[str, dict[str, Any]]  # node type -> its raw object_info entry
    models: Mapping[str, tuple[str, ...]]  # folder type -> filenames
    packages: Mapping[str, tuple[str, ...]]  # package -> node types; ComfyUI's own: "core"
    source: str  # "comfyui" or "object_info:<path>"
    scanned_at: float

    def summary_line(self) -> str:
        """One short line for the system prompt."""
        n_models = sum(len(files) for files in self.models.values())
        return (
            f"{_count(len(self.nodes), 'node type')} in {_count(len(self.packages), 'package')}"
            f", {_count(n_models, 'model')}"
        )

    def summary(self) -> dict[str, Any]:
        return {
            "summary": self.summary_line(),
            "source": self.source,
            "scannedAt": self.scanned_at,
            "nodeTypes": len(self.nodes),
            "packages": {name: len(types) for name, types in self.packages.items()},
            "models": self.models_in(None),
        }

    def warm(self) -> Environment:
        """Build the search index now (EnvironmentService does it in the scan's thread), not
        on the event loop at the first search."""
        _ = self._search_index, self._package_of_node
        return self

    @cached_property
    def _package_of_node(self) -> dict[str, str]:
        return {t: package for package, types in self.packages.items() for t in types}

    @cached_property
    def _search_index(self) -> dict[str, list[Field]]:
        return {t: _search_fields(t, entry) for t, entry in self.nodes.items()}

    def display_name(self, node_type: str) -> str:
        return _text(self.nodes[node_type].get("display_name")) or node_type

    def search_nodes(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """Nodes ranked by how many query words they match, then by where: an exact name
        first, the words in the name before the types, category and description."""
        phrase = " ".join(query.lower().split())
        words = [w for w in re.findall(r"[a-z0-9]+", phrase) if w not in STOP_WORDS]
        words = words or re.findall(r"[a-z0-9]+", phrase)
        if not words:
            return []
        scored = []
        for node_type, fields in self._search_index.items():
            word_scores = [_word_score(fields, w) for w in words]
            matched = sum(1 for score in word_scores if score)
            if not matched:
                continue
            entry = self.nodes[node_type]
            score = 100 * matched + sum(word_scores)
            score -= 40 * bool(entry.get("deprecated")) + 5 * bool(entry.get("api_node"))
            if phrase in (node_type.lower(), self.display_name(node_type).lower()):
                score += 1000
            elif phrase in fields[0][0]:
                score += 30
            if phrase in fields[1][1]:  # the query is a type: "LATENT"
                score += 60
            scored.append((-score, node_type))
        return [self._hit(node_type) for _, node_type in sorted(scored)[:limit]]

    def _hit(self, node_type: str) -> dict[str, Any]:
        entry = self.nodes[node_type]
        hit: dict[str, Any] = {
            "type": node_type,
            "displayName": self.display_name(node_type),
            "category": _text(entry.get("category")),
            "description": _trim(_text(entry.get("description")), DESCRIPTION_LIMIT),
            "inputs": {i.name: i.type for i in _inputs(entry) if i.kind is None},
            "outputs": [{"name": o["name"], "type": o["type"]} for o in _outputs(entry)],
            "package": self._package_of_node.get(node_type, "unknown"),
        }
        if entry.get("deprecated"):
            hit["deprecated"] = True
        return hit

    def resolve(self, node_type: str) -> str | None:
        """The node type as installed: exact, else the one that matches ignoring case."""
        if node_type in self.nodes:
            return node_type
        folded = [t for t in self.nodes if t.lower() == node_type.lower()]
        return folded[0] if len(folded) == 1 else None

    def node_definition(self, node_type: str) -> dict[str, Any] | None:
        """Everything needed to wire the node and set its widgets; None if not installed."""
        found = self.resolve(node_type)
        if found is None:
            return None
        entry = self.nodes[found]
        definition = {
            "type": found,
            "displayName": self.display_name(found),
            "category": _text(entry.get("category")),
            "description": _text(entry.get("description")),
            "package": self._package_of_node.get(found, "unknown"),
            "inputs": [_describe_input(i) for i in _inputs(entry)],
            "outputs": _outputs(entry),
            "outputNode": bool(entry.get("output_node")),
        }
        for flag, key in (("deprecated", "deprecated"), ("experimental", "experimental")):
            if entry.get(key):
                definition[flag] = True
        return definition

    def node_inputs(self, node_type: str) -> list[Input]:
        """The inputs of an installed node type in ComfyUI's order, the order its widgets
        have in a saved workflow (KeyError for a type that is not installed)."""
        return _inputs(self.nodes[node_type])

    def closest_node_types(self, name: str, n: int = 5) -> list[str]:
        """Installed types whose name or display name is nearest to `name` (for "did you
        mean")."""
        by_key: dict[str, str] = {}
        for node_type in sorted(self.nodes):
            by_key.setdefault(node_type.lower(), node_type)
            by_key.setdefault(self.display_name(node_type).lower(), node_type)
        keys = difflib.get_close_matches(name.lower(), list(by_key), n=n * 3, cutoff=0.5)
        return list(dict.fromkeys(by_key[k] for k in keys))[:n]

    def model_categories(self) -> list[str]:
        return sorted(self.models)

    def models_in(self, category: str | None) -> dict[str, Any]:
        """The files of one folder type, or without one the number of files per folder type."""
        if category is None:
            return {name: len(files) for name, files in sorted(self.models.items())}
        key = category if category in self.models else MODEL_ALIASES.get(category, category)
        if key not in self.models:
            raise UnknownModelCategory(category, self.model_categories())
        return {"category": key, "models": list(self.models[key])}

    def documentation(self, node_type: str) -> dict[str, Any] | None:
        """The node's page from comfyui-embedded-docs when installed, else its description;
        None for a node type that is not installed."""
        found = self.resolve(node_type)
        if found is None:
            return None
        page = _embedded_doc(found)
        if page is not None:
            return {"type": found, "source": "embedded-docs", "text": _cap(page, DOC_LIMIT)}
        text = _text(self.nodes[found].get("description")).strip()
        text = text or f"{self.display_name(found)} has no documentation and no description."
        return {"type": found, "source": "description", "text": _cap(text, DOC_LIMIT)}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _describe_input(i: Input) -> dict[str, Any]:
    out: dict[str, Any] = {"name": i.name, "type": i.type, "required": i.required}
    if i.kind is not None:
        out["kind"] = i.kind
        for key in ("default", "min", "max", "step"):
            if key in i.options:
                out[key] = i.options[key]
        if i.kind == "string" and i.options.get("multiline"):
            out["multiline"] = True
    if i.choices is not None:
        if "default" not in out and i.choices:
            out["default"] = i.choices[0]  # what the frontend selects
        out["choices"] = i.choices[:MAX_CHOICES]
        if len(i.choices) > MAX_CHOICES:
            out["choicesTotal"] = len(i.choices)
        if i.options.get("multiselect"):
            out["multiselect"] = True
    if i.options.get("control_after_generate"):
        # The frontend adds a widget after this one; its value follows in widgets_values.
        out["controlAfterGenerate"] = True
    if isinstance(i.options.get("tooltip"), str):
        out["tooltip"] = i.options["tooltip"]
    return out


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if cut.rfind("\n") > limit // 2:
        cut = cut[: cut.rfind("\n")]
    return f"{cut.rstrip()}\n\n[Cut: the first {len(cut)} of {len(text)} characters.]"


def embedded_docs_dir() -> Path | None:
    """`comfyui_embedded_docs/docs` if that optional package is installed (found, not
    imported). Its pages are `docs/<NodeType>/<locale>.md`, e.g. `docs/KSampler/en.md`."""
    try:
        spec = importlib.util.find_spec("comfyui_embedded_docs")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        docs = Path(location) / "docs"
        if docs.is_dir():
            return docs
    return None


def _embedded_doc(node_type: str) -> str | None:
    docs = embedded_docs_dir()
    if docs is None or node_type in ("", ".", "..") or re.search(r"[/\\\0]", node_type):
        return None
    folder = docs / node_type
    pages = [folder / "en.md"] + (sorted(folder.glob("*.md")) if folder.is_dir() else [])
    for page in pages:
        if page.is_file():
            return page.read_text(encoding="utf-8", errors="replace")
    return None


def from_object_info(
    data: Mapping[str, Any],
    models: Mapping[str, Iterable[str]] | None = None,
    source: str = "object_info",
    scanned_at: float | None = None,
) -> Environment:
    """The index from `/api/object_info` data (node type -> definition) and model lists."""
    if not isinstance(data, Mapping):
        raise ValueError("object_info must be a JSON object of node types: save /api/object_info")
    nodes: dict[str, dict[str, Any]] = {}
    packages: dict[str, list[str]] = {}
    for node_type, entry in data.items():
        if not isinstance(entry, Mapping):
            raise ValueError(
                f"object_info[{node_type!r}] is not a node definition; save /api/object_info "
                "from a running ComfyUI unchanged"
            )
        nodes[str(node_type)] = dict(entry)
        package = package_of(_text(entry.get("python_module")) or "nodes")
        packages.setdefault(package, []).append(str(node_type))
    return Environment(
        nodes=nodes,
        models={str(k): tuple(str(f) for f in v) for k, v in sorted((models or {}).items())},
        packages={k: tuple(sorted(v)) for k, v in sorted(packages.items())},
        source=source,
        scanned_at=time.time() if scanned_at is None else scanned_at,
    )


def load_object_info_file(path: Path = DEFAULT_OBJECT_INFO) -> Environment:
    """Read an object_info dump (`.json`, or gzip-compressed) into an Environment."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"{path} is not JSON ({e}); save ComfyUI's /api/object_info") from e
    return from_object_info(data, source=f"object_info:{path}")


def to_cache(env: Environment) -> bytes:
    body = {
        "version": CACHE_VERSION,
        "source": env.source,
        "scanned_at": env.scanned_at,
        "models": {k: list(v) for k, v in env.models.items()},
        "nodes": dict(env.nodes),
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def from_cache(data: bytes) -> Environment:
    """Raises ValueError for a cache this version cannot read (the caller scans again)."""
    body = json.loads(data)
    if not isinstance(body, dict) or body.get("version") != CACHE_VERSION:
        raise ValueError("environment cache from another version")
    return from_object_info(body["nodes"], body["models"], body["source"], body["scanned_at"])


Job = asyncio.Task[Environment]


class EnvironmentService:
    """The environment for the routes and tools: scanned once, cached on disk, rescanned on
    request. The scanner is synchronous and runs in a thread; callers that arrive while a scan
    is under way wait for that scan rather than starting another."""

    def __init__(self, data_dir: Path, scanner: Callable[[], Environment], source: str) -> None:
        self.cache_path = data_dir / CACHE_NAME
        self.scanner = scanner
        self.source = source  # a cache written by another source (standalone) is not used
        self._env: Environment | None = None
        self._job: Job | None = None
        self._job_scans = False

    @classmethod
    def standalone(cls, data_dir: Path, path: Path = DEFAULT_OBJECT_INFO) -> EnvironmentService:
        return cls(data_dir, lambda: load_object_info_file(path), f"object_info:{path}")

    async def get(self) -> Environment:
        if self._env is not None:
            return self._env
        job = self._job or self._start(self._load_or_scan, scans=False)
        return await asyncio.shield(job)

    async def rescan(self) -> Environment:
        while self._job is not None and not self._job_scans:
            with contextlib.suppress(Exception):  # a cache read: a rescan must not share it
                await asyncio.shield(self._job)
        job = self._job or self._start(self._scan, scans=True)
        return await asyncio.shield(job)

    def _start(self, work: Callable[[], Awaitable[Environment]], scans: bool) -> Job:
        async def run() -> Environment:
            try:
                self._env = await work()
                return self._env
            finally:
                self._job = None

        self._job, self._job_scans = asyncio.ensure_future(run()), scans
        return self._job

    async def _load_or_scan(self) -> Environment:
        env = await asyncio.to_thread(self._read_cache)
        return env if env is not None else await self._scan()

    async def _scan(self) -> Environment:
        env = await asyncio.to_thread(lambda: self.scanner().warm())
        try:
            await asyncio.to_thread(lambda: write_atomic(self.cache_path, to_cache(env)))
        except OSError as e:  # the index still works from memory
            log.warning("could not write the environment cache %s: %s", self.cache_path, e)
        return env

    def _read_cache(self) -> Environment | None:
        try:
            env = from_cache(self.cache_path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("ignoring the environment cache %s: %s", self.cache_path, e)
            return None
        return env.warm() if env.source == self.source else None
