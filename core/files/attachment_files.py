"""What an attached file is, decided from its bytes: an image (a ComfyUI output carries its
workflow and prompt), a ComfyUI workflow (JSON, UI or API format), or text. Anything else, and
anything damaged, is refused with a message that says what and why, before anything is stored.

What the model is sent for each kind is `model_parts`: UI message parts the chat converts
like any other (ui_messages.py), so an attachment is counted and kept exactly as it is sent.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..base import NotStrictJSON, StatusError, UIPart, coded, compact_json, strict_json
from .image_files import BadImage, ImageInfo, image_format, inspect_image
from .workflow_text import node_count, workflow_format, workflow_lines

MAX_BYTES = 20 * 1024 * 1024  # an image ComfyUI saves is rarely above 10 MB; OpenAI takes 20
MAX_TEXT_BYTES = 2 * 1024 * 1024  # text beyond this cannot fit any window anyway
WORKFLOW_CHARS = 12_000  # the workflow's lines a model reads (about 3,000 tokens at most)
_TEXT = ".txt .md .markdown .json .csv .tsv .yaml .yml .toml .ini .cfg .log .py .js .ts .xml"
TEXT_SUFFIXES = frozenset(f"{_TEXT} .html .css .sh .bat .srt .vtt".split())
_KNOWN_BINARY = {
    b"%PDF": "PDF",
    b"PK\x03\x04": "ZIP archive (or Office document)",
    b"\x1aE\xdf\xa3": "video (Matroska/WebM)",
    b"ID3": "audio (MP3)",
    b"fLaC": "audio (FLAC)",
    b"OggS": "audio/video (Ogg)",
    b"\x7fELF": "program",
    b"MZ": "program",
}


class FileRefused(StatusError):
    """The file cannot be attached; `status` is the HTTP status, the message says why."""


@dataclass(frozen=True)
class FileReading:
    kind: str  # "image", "comfy-image" (an image with a ComfyUI workflow), "workflow", "text"
    media_type: str
    summary: str  # a few words for the panel's chip: "PNG 1024×768", "workflow, 12 nodes"
    note: str = ""  # what the user should know ("no ComfyUI workflow in it")
    text: str = ""  # text the model reads besides the image (the file's text, workflow lines)
    workflow: dict[str, Any] | None = None  # a workflow the panel can load
    image: ImageInfo | None = None


def read_file(name: str, data: bytes, max_bytes: int = MAX_BYTES) -> FileReading:
    """Read an attached file; FileRefused when it cannot be attached."""
    if not data:
        raise FileRefused(400, coded("attachment.empty", name=name))
    if len(data) > max_bytes:
        size, limit = human_size(len(data)), human_size(max_bytes)
        raise FileRefused(413, coded("attachment.too_big", name=name, size=size, limit=limit))
    if image_format(data) is not None:
        return _image(name, data)
    suffix = PurePosixPath(name).suffix.lower()
    for magic, what in _KNOWN_BINARY.items():
        if data.startswith(magic):
            raise FileRefused(415, coded("attachment.binary_kind", name=name, kind=what))
    if suffix in (".png", ".jpg", ".jpeg", ".webp", ".gif"):
        raise FileRefused(422, coded("attachment.not_image", name=name, format=suffix[1:].upper()))
    text = _decode(name, data, suffix)
    if suffix == ".json" or text.lstrip().startswith("{"):
        reading = _workflow(name, text, suffix)
        if reading is not None:
            return reading
    media = "text/markdown" if suffix in (".md", ".markdown") else "text/plain"
    lines = text.count("\n") + 1
    return FileReading("text", media, f"text, {lines:,} line{'s' if lines != 1 else ''}", text=text)


def human_size(size: int) -> str:
    """ "20 MB", "1.5 MB", "12 KB", "300 bytes"."""
    if size >= 1024 * 1024:
        return f"{size / 1024 / 1024:.1f}".removesuffix(".0") + " MB"
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"


def _decode(name: str, data: bytes, suffix: str) -> str:
    if suffix not in TEXT_SUFFIXES and suffix != "":
        raise FileRefused(415, coded("attachment.unsupported", name=name, suffix=suffix))
    if len(data) > MAX_TEXT_BYTES:
        size, limit = human_size(len(data)), human_size(MAX_TEXT_BYTES)
        raise FileRefused(413, coded("attachment.text_too_big", name=name, size=size, limit=limit))
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            text = data.decode("utf-16")
        else:
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileRefused(415, coded("attachment.not_utf8", name=name)) from None
    if "\x00" in text:
        raise FileRefused(415, coded("attachment.binary", name=name))
    return text


def _workflow(name: str, text: str, suffix: str) -> FileReading | None:
    """The workflow a JSON file holds; None when it holds none (it is read as text). A .json
    file that is JSON a browser cannot read (NaN, nesting past any workflow's) is refused."""
    try:
        value = strict_json(text)
    except NotStrictJSON as exc:
        if exc.syntax or suffix != ".json":
            return None
        raise FileRefused(422, coded("attachment.unreadable", name=name, reason=str(exc))) from None
    kind = workflow_format(value)
    if kind is None:
        return None
    nodes = node_count(value)
    return FileReading(
        "workflow",
        "application/json",
        f"{'workflow' if kind == 'ui' else 'API workflow'}, {nodes} node{'s' * (nodes != 1)}",
        text=workflow_lines(value, WORKFLOW_CHARS),
        workflow=value,
    )


def _image(name: str, data: bytes) -> FileReading:
    try:
        info = inspect_image(data)
    except BadImage as exc:
        unreadable = coded("attachment.unreadable", name=name, reason=str(exc))
        raise FileRefused(exc.status, unreadable) from None
    size = f"{info.format.upper()} {info.width}×{info.height}"
    prompt, workflow, broken = _metadata(info.texts)
    if prompt is None and workflow is None:
        if broken:
            note = f"its ComfyUI {broken} metadata is not valid JSON: attached as a plain image"
        elif info.format in ("png", "webp"):
            note = "no ComfyUI workflow in it: attached as a plain image"
        else:
            note = ""
        return FileReading("image", info.media_type, size, note=note, image=info)
    shown = prompt if prompt is not None else workflow
    nodes = node_count(shown)
    return FileReading(
        "comfy-image",
        info.media_type,
        f"{size}, ComfyUI workflow, {nodes} node{'s' * (nodes != 1)}",
        text=workflow_lines(shown, WORKFLOW_CHARS),
        workflow=workflow if workflow is not None else prompt,
        image=info,
    )


def _metadata(texts: dict[str, str]) -> tuple[Any, Any, str]:
    """(the prompt, the workflow, the name of one that is there but broken)."""
    found: dict[str, Any] = {}
    broken = ""
    for key in ("prompt", "workflow"):
        raw = texts.get(key)
        if raw is None:
            continue
        try:
            value = strict_json(raw)
        except NotStrictJSON:
            broken = key
            continue
        if workflow_format(value) is not None:
            found[key] = value
        else:
            broken = key
    return found.get("prompt"), found.get("workflow"), broken


def model_parts(
    attachment_id: str, name: str, reading: FileReading, data: bytes, vision: bool
) -> list[UIPart]:
    """The parts the model is sent for an attachment: the image (to a model that sees) and
    a text part saying what it is, with what it holds."""
    parts: list[UIPart] = []
    load = f"load it with loadWorkflow {compact_json({'attachment': attachment_id})}"
    if reading.image is not None:
        info = reading.image
        head = f"[attached image {name}, {info.width}×{info.height}"
        if vision:
            url = f"data:{info.media_type};base64,{base64.b64encode(data).decode()}"
            parts.append({"type": "file", "mediaType": info.media_type, "url": url})
        else:
            head += " — not shown: this model cannot see images"
        if reading.kind == "comfy-image":
            head += f"; ComfyUI made it, its workflow is below ({load})"
        parts.append({"type": "text", "text": head + "]" + _below(reading.text)})
    elif reading.kind == "workflow":
        text = f"[attached ComfyUI workflow {name} ({reading.summary}); {load}]"
        parts.append({"type": "text", "text": text + _below(reading.text)})
    else:
        parts.append({"type": "text", "text": f"[attached file {name}]" + _below(reading.text)})
    return parts


def _below(text: str) -> str:
    return f"\n{text}" if text else ""
