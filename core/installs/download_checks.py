"""What a model download may be: checked before any request.

A download comes from a scan's record (a workflow's `properties.models`, Manager's model list),
never from a URL a client or the model passes. Still, each is checked here: https only, to a
host models come from (huggingface.co and civitai.com, as ComfyUI's frontend allows; more
origins through COMFY_ASSISTANT_MODEL_ORIGINS, for a mirror or the tests), no credentials in the
address; into a known models folder, under a relative name without `..` or a drive, with a model
file's extension (pickle formats allowed but flagged: loading one can run code).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from yarl import URL

from ..base import AlwaysCoded, coded
from .model_folders import ModelFolders

log = logging.getLogger("comfyui_assistant")

ORIGINS_ENV = "COMFY_ASSISTANT_MODEL_ORIGINS"
DEFAULT_HOSTS = ("huggingface.co", "civitai.com")
SAFE_SUFFIXES = (".safetensors", ".sft", ".gguf")
PICKLE_SUFFIXES = (".ckpt", ".pt", ".pth", ".bin")  # can run code when loaded
PART_SUFFIX = ".part"
URL_LIMIT = 4096
NAME_LIMIT = 1024
PART_LIMIT = 255  # bytes of one path component on common file systems
# Query parameters that carry a credential (civitai takes `?token=`): never stored or sent.
SECRET_PARAMS = frozenset({"token", "api_key", "apikey", "access_token", "auth", "key"})
_SHA256 = re.compile(r"[0-9a-f]{64}")
_USERINFO = re.compile(r"//[^/]*@")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\:*?\"<>|]")  # control characters, and what Windows refuses


class DownloadError(AlwaysCoded):
    """A download refused or failed; `coded` says why, in words a user can act on."""


@dataclass(frozen=True)
class DownloadSpec:
    """A model to download, as a scan recorded it."""

    url: str
    folder: str  # a ComfyUI models folder: "checkpoints", "loras", "diffusion_models", …
    name: str  # relative, with `/` between subfolders: "SD1.5/model.safetensors"
    size: int | None = None  # bytes, when known
    sha256: str | None = None


@dataclass(frozen=True)
class Plan:
    """A checked spec: where it goes and what it must be."""

    url: URL
    folder: str
    name: str
    target: Path
    size: int | None
    sha256: str | None
    pickle: bool

    @property
    def part(self) -> Path:
        return self.target.with_name(self.target.name + PART_SUFFIX)

    @property
    def host(self) -> str:
        return self.url.host or ""


@dataclass(frozen=True)
class Origins:
    """Where downloads may start: https on the default hosts, and any extra origin given."""

    extra: frozenset[tuple[str, str, int]] = frozenset()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Origins:
        found = set()
        for number, text in enumerate(environ.get(ORIGINS_ENV, "").replace(",", " ").split()):
            try:
                url = URL(text)
            except ValueError:
                url = URL()
            if url.scheme in ("http", "https") and url.host and url.port:
                found.add((url.scheme, url.host.lower(), url.port))
            else:
                log.warning(  # (the value is not quoted: it may hold a token)
                    "%s: entry %d is not an origin (scheme://host:port); ignored",
                    ORIGINS_ENV,
                    number + 1,
                )
        return cls(frozenset(found))

    def listed(self) -> tuple[str, ...]:
        """Every origin a download (and a model's size) may start from."""
        extra = sorted(f"{s}://{h}:{p}" for s, h, p in self.extra)
        return (*(f"https://{h}:443" for h in DEFAULT_HOSTS), *extra)

    def allowed_hosts(self) -> str:
        return ", ".join([*DEFAULT_HOSTS, *sorted(f"{s}://{h}:{p}" for s, h, p in self.extra)])

    def trusts(self, text: str) -> bool:
        """Whether `text` is on an extra origin (which may be plain http)."""
        try:
            return self._extra(URL(text))
        except ValueError:
            return False

    def _extra(self, url: URL) -> bool:
        return (url.scheme, (url.host or "").lower(), url.port or 0) in self.extra

    def check_start(self, text: str, name: str) -> URL:
        url = _parse(text, name)
        host = (url.host or "").lower()
        if self._extra(url):
            return url
        if url.scheme != "https":
            raise DownloadError(coded("download.not_https", name=name, url=_shown(url)))
        if host not in DEFAULT_HOSTS or url.explicit_port not in (None, 443):
            raise DownloadError(
                coded("download.host_not_allowed", name=name, host=host, hosts=self.allowed_hosts())
            )
        return url

    def check_redirect(self, url: URL, name: str, host: str) -> URL:
        """A redirect is followed to any https address (Hugging Face sends files from its CDN),
        or an extra origin; nothing but the address itself is ever sent."""
        if url.user is not None or url.password is not None:
            raise DownloadError(coded("download.url_credentials", name=name))
        if url.scheme != "https" and not self._extra(url):
            moved = _shown(url.with_query(None))
            raise DownloadError(
                coded("download.redirect_insecure", name=name, host=host, moved=moved)
            )
        return url.with_fragment(None)


def _shown(url: URL) -> str:
    return str(url)[:200]


def _parse(text: str, name: str) -> URL:
    shown = _USERINFO.sub("//", str(text).partition("?")[0])[:200]  # (no credential shown)
    invalid = DownloadError(coded("download.url_invalid", name=name, url=shown))
    if not isinstance(text, str) or not text or len(text) > URL_LIMIT or _unsafe_url(text):
        raise invalid
    try:
        url = URL(text)
    except ValueError:
        raise invalid from None
    if not url.is_absolute() or not url.host:
        raise invalid
    if url.user is not None or url.password is not None:
        raise DownloadError(coded("download.url_credentials", name=name))
    if SECRET_PARAMS & {key.lower() for key in url.query}:
        raise DownloadError(coded("download.url_credentials", name=name))
    return url.with_fragment(None)


def _unsafe_url(text: str) -> bool:
    return any(ord(c) <= 0x20 or c == "\x7f" or c == "\\" for c in text)


def check_name(name: str) -> bool:
    """A relative file name with `/` between folders: no `..`, `.`, empty or hidden part, no
    drive, backslash, control character or Windows-reserved character, no trailing dot or
    space (Windows drops them), each part at most PART_LIMIT bytes."""
    if not isinstance(name, str) or not name or len(name) > NAME_LIMIT or _UNSAFE.search(name):
        return False
    parts = name.split("/")
    return all(
        part
        and not part.startswith(".")
        and part == part.rstrip(". ")
        and part == part.lstrip()
        and len(part.encode("utf-8", "surrogatepass")) <= PART_LIMIT
        for part in parts
    )


def plan(spec: DownloadSpec, origins: Origins, folders: ModelFolders) -> Plan:
    """The checked download, or DownloadError saying what is wrong with the spec."""
    name = spec.name
    if not check_name(name):
        raise DownloadError(coded("download.name_invalid", name=str(name)[:200]))
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in SAFE_SUFFIXES + PICKLE_SUFFIXES:
        extensions = " ".join(SAFE_SUFFIXES + PICKLE_SUFFIXES)
        raise DownloadError(coded("download.extension", name=name, extensions=extensions))
    folder = folders.canonical(spec.folder) if isinstance(spec.folder, str) else None
    directories = folders.directories(folder) if folder else []
    if folder is None or not directories:
        known = ", ".join(folders.names())
        raise DownloadError(
            coded("download.unknown_folder", folder=str(spec.folder)[:80], known=known)
        )
    url = origins.check_start(spec.url, name)
    sha256 = spec.sha256.lower() if isinstance(spec.sha256, str) else None
    if spec.sha256 is not None and (sha256 is None or not _SHA256.fullmatch(sha256)):
        raise DownloadError(coded("download.hash_invalid", name=name))
    size = spec.size if isinstance(spec.size, int) and spec.size >= 0 else None
    target = directories[0].joinpath(*name.split("/"))
    return Plan(url, folder, name, target, size, sha256, pickle=suffix in PICKLE_SUFFIXES)
