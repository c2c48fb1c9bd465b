"""The files a workflow run made, read where ComfyUI keeps them, never where a model says.

A run's outputs are named as ComfyUI's `executed` events and `/history` name them: a file
name, a subfolder and a folder type. Only the `output` and `temp` folders are read (never
`input`, never a path), only image and video files, and only within the folder: a name with a
separator, a subfolder that climbs out (`..`, an absolute path, a link that leads elsewhere)
is refused with what to do instead.

Inside ComfyUI the folders are ComfyUI's own (`folder_paths`, read by comfy_environment.py,
the one module that imports ComfyUI): `FolderOutputs`. Standalone they are read through a
ComfyUI's `/view` (COMFYUI_URL): `ViewOutputs`. Without either, `NoOutputs` says so.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import aiohttp

from ..base import COMFYUI, StatusError, client_session, read_capped

FOLDER_TYPES = ("output", "temp")
IMAGE_TYPES = frozenset({"png", "jpg", "jpeg", "webp", "gif"})
VIDEO_TYPES = frozenset({"mp4", "webm", "mov", "mkv"})
MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # one file; a 4K PNG is ~25 MB, a short clip a few MB
MAX_NAME_CHARS = 255
_ANNOTATED = re.compile(r"^(?P<path>.+?) \[(?P<type>[a-z]+)\]$")


class OutputRefused(StatusError, ValueError):
    """An output that is not read: the message says why and what to do; `status` is the HTTP
    status a route refuses it with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(status, message)


@dataclass(frozen=True)
class OutputRef:
    """One file of a run, as ComfyUI names it."""

    filename: str
    subfolder: str = ""
    type: str = "output"

    @property
    def extension(self) -> str:
        return self.filename.rsplit(".", 1)[-1].lower()

    @property
    def is_image(self) -> bool:
        return self.extension in IMAGE_TYPES

    def annotated(self) -> str:
        """ "sub/x.png [output]": ComfyUI's own way to write it (the panel shows it so)."""
        folder = f"{self.subfolder}/" if self.subfolder else ""
        return f"{folder}{self.filename} [{self.type}]"


def output_ref(filename: object, subfolder: object = "", kind: object = "output") -> OutputRef:
    """A checked reference; raises OutputRefused (400) for anything but an image or video file
    of the output or temp folder, named without a way out of it."""
    if kind not in FOLDER_TYPES:
        raise OutputRefused(f"type must be 'output' or 'temp' (a run's folders), not {kind!r}")
    if not isinstance(filename, str) or not filename.strip():
        raise OutputRefused(
            "filename must be the name of a file the run made, e.g. ComfyUI_00001_.png"
        )
    if not isinstance(subfolder, str):
        raise OutputRefused("subfolder must be text ('' for the folder itself)")
    if len(filename) > MAX_NAME_CHARS or len(subfolder) > 4 * MAX_NAME_CHARS:
        raise OutputRefused("the file's name is too long to be one ComfyUI made")
    if any(c in filename for c in "/\\\0") or filename in (".", ".."):
        raise OutputRefused(
            f"filename {filename!r} must be a file's name alone; put a folder in subfolder"
        )
    parts = PurePosixPath(subfolder.replace("\\", "/")).parts
    if (
        "\0" in subfolder
        or subfolder.startswith(("/", "\\"))
        or ".." in parts
        or re.match(r"^[A-Za-z]:", subfolder)
    ):
        raise OutputRefused(
            f"subfolder {subfolder!r} must be a folder inside ComfyUI's {kind} folder"
        )
    ref = OutputRef(filename, "/".join(p for p in parts if p != "."), kind)
    if ref.extension not in IMAGE_TYPES | VIDEO_TYPES:
        kinds = ", ".join(sorted(IMAGE_TYPES | VIDEO_TYPES))
        raise OutputRefused(f"{filename} is not an image or a video ({kinds}): it is not read")
    return ref


def parse_annotated(text: str) -> OutputRef:
    """ "sub/x.png [output]" (the panel's form) as a checked reference."""
    found = _ANNOTATED.match(text.strip())
    path, kind = (found["path"], found["type"]) if found else (text.strip(), "output")
    folder, _, name = path.replace("\\", "/").rpartition("/")
    return output_ref(name, folder, kind)


def ref_of(item: Any) -> OutputRef:
    """One output as the panel names it ("x.png [output]") or as ComfyUI's events do."""
    if isinstance(item, str):
        return parse_annotated(item)
    if isinstance(item, dict):
        kind = item.get("type", "output")
        return output_ref(item.get("filename"), item.get("subfolder", ""), kind)
    raise OutputRefused(f"an output is a file name or {{filename, subfolder, type}}, not {item!r}")


class OutputSource(Protocol):
    """Where a run's files are read from."""

    async def read(self, ref: OutputRef, limit: int = MAX_OUTPUT_BYTES) -> bytes: ...


class NoOutputs:
    """Standalone without COMFYUI_URL: nothing to read from."""

    async def read(self, ref: OutputRef, limit: int = MAX_OUTPUT_BYTES) -> bytes:
        raise OutputRefused(
            "this server runs outside ComfyUI and knows no ComfyUI to read outputs from: set "
            "COMFYUI_URL (e.g. http://127.0.0.1:8188)",
            503,
        )


class FolderOutputs:
    """ComfyUI's own folders (inside ComfyUI): {"output": Path, "temp": Path}."""

    def __init__(self, folders: Mapping[str, Path]) -> None:
        self.folders = dict(folders)

    async def read(self, ref: OutputRef, limit: int = MAX_OUTPUT_BYTES) -> bytes:
        return await asyncio.to_thread(self._read, ref, limit)

    def _read(self, ref: OutputRef, limit: int) -> bytes:
        folder = self.folders.get(ref.type)
        if folder is None:
            raise OutputRefused(f"ComfyUI has no {ref.type} folder here", 404)
        root = folder.resolve()
        path = (root / ref.subfolder / ref.filename).resolve()
        if not path.is_relative_to(root):  # (a link inside that leads out)
            raise OutputRefused(f"{ref.annotated()} leads out of ComfyUI's {ref.type} folder", 403)
        try:
            with path.open("rb") as file:
                size = file.seek(0, 2)
                if size > limit:
                    raise OutputRefused(
                        f"{ref.annotated()} is {size:,} bytes; at most {limit:,} are read", 413
                    )
                file.seek(0)
                return file.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise OutputRefused(
                f"{ref.annotated()} is not in ComfyUI's {ref.type} folder", 404
            ) from None


class ViewOutputs:
    """A ComfyUI's `/view` (standalone): the same files, through its own checks too."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    async def read(self, ref: OutputRef, limit: int = MAX_OUTPUT_BYTES) -> bytes:
        params = {"filename": ref.filename, "subfolder": ref.subfolder, "type": ref.type}
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        try:
            async with (
                client_session(COMFYUI, timeout=timeout) as session,
                session.get(f"{self.base_url}/view", params=params) as resp,
            ):
                if resp.status == 404:
                    raise OutputRefused(f"ComfyUI has no {ref.annotated()}", 404)
                if resp.status != 200:
                    raise OutputRefused(
                        f"ComfyUI answered HTTP {resp.status} for {ref.annotated()}", 502
                    )
                data = await read_capped(resp, limit)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise OutputRefused(
                f"ComfyUI at {self.base_url} could not be reached: {exc}", 502
            ) from None
        if data is None:
            raise OutputRefused(f"{ref.annotated()} is over {limit:,} bytes; it is not read", 413)
        return data


def standalone_outputs(environ: Mapping[str, str]) -> OutputSource:
    """Outside ComfyUI: its `/view` at COMFYUI_URL, else nothing."""
    url = environ.get("COMFYUI_URL", "").strip()
    return ViewOutputs(url) if url else NoOutputs()
