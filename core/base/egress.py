"""Every destination the assistant's server sends requests to, in one place: an entry per kind
with the code that sends them, whether `COMFY_ASSISTANT_OFFLINE=1` turns it off, and the README's
words for it. The code that makes an outgoing request opens its HTTP client with
`client_session(kind)` (the provider's SDK client names PROVIDER); tests/test_egress_registry.py
checks that nothing in core opens another, and tests/test_egress.py that a whole session reaches
exactly the addresses `addresses()` lists for its mode, online and offline.

Generated from it: Settings' "Where your requests go" (`statement()`, served at
`/api/assistant/egress`: kinds and host names, which the panel words in its language) and the
README's "What leaves your machine" list (`readme_list()`, written by
scripts/gen_panel_types.py; a test checks the README holds it)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
from yarl import URL

from .wire_types import EgressEntry, EgressKind, EgressStatement, EgressUnused

OFFLINE_ENV = "COMFY_ASSISTANT_OFFLINE"
PROVIDER: EgressKind = "provider"
COMFYUI: EgressKind = "comfyui"
MANAGER: EgressKind = "manager"
REGISTRY: EgressKind = "registry"
MODEL_SIZES: EgressKind = "modelSizes"
DOWNLOADS: EgressKind = "downloads"


def offline(environ: Mapping[str, str]) -> bool:
    """COMFY_ASSISTANT_OFFLINE: nothing is asked on the internet by the server itself."""
    return environ.get(OFFLINE_ENV, "").strip().lower() not in ("", "0", "false", "no")


@dataclass(frozen=True)
class Destination:
    kind: EgressKind
    modules: tuple[str, ...]  # the modules (under core/) that send these requests
    offline_off: bool  # COMFY_ASSISTANT_OFFLINE=1 turns it off
    readme: str  # the README's bullet (Markdown, without the leading "- ")


DESTINATIONS: tuple[Destination, ...] = (
    Destination(
        PROVIDER,
        (
            "provider/provider.py",
            "provider/provider_probes.py",
            "provider/slots.py",
            "provider/shared_cache.py",
            "provider/server_counts.py",
        ),
        offline_off=False,
        readme="**The provider** (the origin of `LLM_BASE_URL` or Settings' base URL; the key goes "
        "nowhere else): the chat, summaries, a delegated helper's steps, the Test button (the"
        " model list and a one-token ping, at the address in the form), and the lookups that "
        "size requests: the context window and what the model can do (`/models`, llama.cpp's "
        "`/props` and `/slots`, Ollama's `/api/ps` and `/api/show`, LM Studio's "
        "`/api/v0/models`) and llama.cpp's token counts (`/apply-template`, `/tokenize`). "
        "What is sent: below.",
    ),
    Destination(
        COMFYUI,
        ("files/run_outputs.py",),
        offline_off=False,
        readme="**ComfyUI at `COMFYUI_URL`** (standalone only; inside ComfyUI the images are "
        "read from its folders): a run's images, read through its `/view` when a tool looks at "
        "them.",
    ),
    Destination(
        MANAGER,
        ("installs/manager_client.py",),
        offline_off=False,
        readme="**ComfyUI-Manager**, on ComfyUI's own server (inside ComfyUI its own address; "
        "standalone `COMFYUI_URL`): a scan for missing nodes and models asks for its node map, "
        "installed packs and model list. Installing goes from the panel to Manager, which "
        "downloads the pack itself.",
    ),
    Destination(
        REGISTRY,
        ("installs/registry_client.py",),
        offline_off=True,
        readme="**The Comfy Registry** (`https://api.comfy.org`, or "
        "`COMFY_ASSISTANT_REGISTRY_URL`), as ComfyUI's frontend and ComfyUI-Manager ask it, "
        "when a scan finds missing node packs: `GET /comfy-nodes/<node type>/node` for a node "
        "type no map places and for one node type of each pack Manager knows only by its "
        "repository URL (to learn its Registry id), and `GET /nodes/<pack id>` for each pack "
        "named (licence, description, downloads, latest version). Only those names: no "
        "workflow, no key, no cookie. Answers are kept 5 minutes; a scan with nothing missing "
        "asks nothing.",
    ),
    Destination(
        MODEL_SIZES,
        ("installs/model_sizes.py",),
        offline_off=True,
        readme="**Each missing model's host**, for its size, when a scan finds missing model "
        "files: one `HEAD` to the address the workflow (or Manager's list) gives, only where a "
        "download could start (https to huggingface.co or civitai.com, or "
        "`COMFY_ASSISTANT_MODEL_ORIGINS`), a redirect followed only to https; at most 16 per "
        "scan, 3 s each, no key, cookie or body. A size is kept until the server restarts.",
    ),
    Destination(
        DOWNLOADS,
        ("installs/downloads.py",),
        offline_off=False,
        readme="**A model you approve**: downloaded by the server from the address the "
        "workflow (or Manager's list) gives, over https from huggingface.co or civitai.com "
        "only (a redirect only to https, e.g. Hugging Face's CDN), or from "
        "`COMFY_ASSISTANT_MODEL_ORIGINS=https://mirror.example:443` (scheme://host:port, "
        "several separated by commas); no key, cookie or token; into ComfyUI's folder for it, "
        "as `<name>.part` until it is complete and its sha256 (when known) checks out; a "
        "broken download resumes where it stopped. Only when you approve it, so the offline "
        "switch does not stop it.",
    ),
)
BY_KIND = {d.kind: d for d in DESTINATIONS}


def client_session(kind: EgressKind, **options: Any) -> aiohttp.ClientSession:
    """The HTTP client for requests to `kind`'s destination (the only way core opens one)."""
    return named(kind, aiohttp.ClientSession(**options))


T = TypeVar("T")


def named(kind: EgressKind, client: T) -> T:
    """A client made elsewhere (the provider's SDK client), under its destination's entry."""
    if kind not in BY_KIND:
        raise ValueError(f"no egress entry {kind!r}")
    return client


@dataclass(frozen=True)
class Addresses:
    """Where each kind goes now: origins (scheme://host:port). `comfyui` None: inside ComfyUI
    (its own address); "" standalone without COMFYUI_URL (nothing of ComfyUI is asked)."""

    provider: str
    comfyui: str | None
    registry: str | None  # None: the setting is refused (nothing asked)
    models: tuple[str, ...]
    offline: bool


def _hosts(kind: EgressKind, where: Addresses) -> list[str]:
    if kind == PROVIDER:
        return [where.provider]
    if kind in (COMFYUI, MANAGER):
        return [where.comfyui] if where.comfyui else []
    if kind == REGISTRY:
        return [where.registry] if where.registry else []
    return list(where.models)


def _unused(d: Destination, where: Addresses) -> EgressUnused | None:
    if d.offline_off and where.offline:
        return "offline"
    if d.kind in (COMFYUI, MANAGER) and where.comfyui == "":
        return "noComfyUI"
    if d.kind == REGISTRY and where.registry is None:
        return "badSetting"
    return None


def origin_of(url: str) -> str | None:
    """scheme://host:port of an http(s) address (the default port written out), else None."""
    try:
        parsed = URL(url.strip())
    except ValueError:
        return None
    if parsed.scheme not in ("http", "https") or not parsed.host or parsed.port is None:
        return None
    host = parsed.host.lower()
    return f"{parsed.scheme}://{f'[{host}]' if ':' in host else host}:{parsed.port}"


def statement(where: Addresses) -> EgressStatement:
    """Settings' list: each destination that applies here, its hosts, and whether it is used."""
    entries: list[EgressEntry] = []
    for d in DESTINATIONS:
        if d.kind == COMFYUI and where.comfyui is None:
            continue  # inside ComfyUI a run's images are read from its folders
        unused = _unused(d, where)
        entries.append(
            {
                "kind": d.kind,
                "hosts": _hosts(d.kind, where),
                "offlineOff": d.offline_off,
                "unused": unused,
            }
        )
    return {"offline": where.offline, "offlineEnv": OFFLINE_ENV, "entries": entries}


def addresses(where: Addresses) -> set[str]:
    """Every origin the server may send a request to now (a download's redirect aside)."""
    return {
        host for d in DESTINATIONS if _unused(d, where) is None for host in _hosts(d.kind, where)
    }


def readme_list() -> str:
    """The README's list of destinations, each saying whether the offline switch turns it off."""
    bullets = []
    for d in DESTINATIONS:
        off = f"`{OFFLINE_ENV}=1` turns it off." if d.offline_off else ""
        text = f"{d.readme} {off}".strip()
        bullets.append(
            textwrap.fill(
                text, 96, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False
            )
        )
    return "\n".join(bullets) + "\n"
