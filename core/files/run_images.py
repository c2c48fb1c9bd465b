"""What the newest run made, shown to a model that sees.

A `queueWorkflow` result names the files the run made as ComfyUI does ("x.png [output]"; it
also holds the facts about each, in words, for every model). For the newest run of the thread
the server adds, for a vision model, one picture of its images (`run_pictures`): read from
ComfyUI's own folders (`run_outputs`, never a path the model typed), fitted to the budget the
window affords and counted as the provider counts images. Only the newest run is shown: an
older run's result is its words alone (a line each once digested).

The picture is made once, when the run's result is first sent, and kept with the thread like an
attached file (`attachments`, id derived from the thread and the tool call): every later request
sends the same bytes (the request stays append-only), even after the files change or go.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import sqlite3
from collections.abc import Sequence

from ..base import UIMessage, UIPart, tool_name_of
from ..store import Store
from ..tokens import ImageCost
from .attachment_files import FileReading
from .attachments import Attachments
from .image_files import ImageInfo
from .run_outputs import OutputRef, OutputRefused, OutputSource, parse_annotated
from .run_pictures import SHEET_MAX, picture

RUN_TOOL = "queueWorkflow"
KIND = "run-image"  # the attachments' kind of a run's picture


def run_files(part: UIPart) -> list[OutputRef]:
    """The image files a successful run's result names, in its order (none for another part)."""
    if tool_name_of(part) != RUN_TOOL or part.get("state") != "output-available":
        return []
    return _made(part)


def _made(part: UIPart) -> list[OutputRef]:
    """The image files a run's result (`output-available`) names, when the run succeeded."""
    output = part.get("output")
    if part.get("preliminary") or not isinstance(output, dict) or output.get("ok") is not True:
        return []
    outputs = output.get("outputs")
    refs: list[OutputRef] = []
    for node in outputs.values() if isinstance(outputs, dict) else ():
        for files in node.values() if isinstance(node, dict) else ():
            for name in files if isinstance(files, list) else ():
                try:
                    ref = parse_annotated(name) if isinstance(name, str) else None
                except OutputRefused:
                    continue
                if ref is not None and ref.is_image and ref not in refs:
                    refs.append(ref)
    return refs


def newest_run(messages: Sequence[UIMessage]) -> tuple[int, int] | None:
    """(message, part) indexes of the thread's newest run that made images, or None."""
    for i in range(len(messages) - 1, -1, -1):
        parts = messages[i].get("parts") or []
        for j in range(len(parts) - 1, -1, -1):
            if tool_name_of(parts[j]) == RUN_TOOL and parts[j].get("state") == "output-available":
                return (i, j) if _made(parts[j]) else None
    return None


def picture_id(thread_id: str, call_id: str) -> str:
    return "run_" + hashlib.sha256(f"{thread_id}\0{call_id}".encode()).hexdigest()[:24]


Shown = tuple[str, dict[str, str]]  # (the run's tool call id, what its result shows: SHOWN)


async def run_picture(
    store: Store,
    outputs: OutputSource,
    thread_id: str,
    messages: Sequence[UIMessage],
    cost: ImageCost,
    budget: int,
) -> Shown | None:
    """The picture the newest run's result shows, when it made images and one fits `budget`
    tokens (`messages`: the thread with the answer it continues)."""
    found = newest_run(messages)
    if found is None:
        return None
    part = messages[found[0]]["parts"][found[1]]
    refs = _made(part)
    shown = await _shown(store, outputs, thread_id, part, refs, cost, budget)
    return None if shown is None else (str(part.get("toolCallId")), shown)


def with_shown(messages: list[UIMessage], shown: Shown | None) -> list[UIMessage]:
    """`messages` as the request is built from them: the run's tool part with its picture
    (`SHOWN`; never stored, never sent to the panel). The other messages are the same objects."""
    if shown is None:
        return messages
    call_id, value = shown
    for i in range(len(messages) - 1, -1, -1):
        parts = messages[i].get("parts") or []
        for j, part in enumerate(parts):
            if part.get("toolCallId") == call_id and tool_name_of(part) == RUN_TOOL:
                out, changed = list(messages), list(parts)
                changed[j] = {**part, "shown": value}
                out[i] = {**messages[i], "parts": changed}
                return out
    return messages


async def _shown(
    store: Store,
    outputs: OutputSource,
    thread_id: str,
    part: UIPart,
    refs: list[OutputRef],
    cost: ImageCost,
    budget: int,
) -> dict[str, str] | None:
    attachments = Attachments(store)
    aid = picture_id(thread_id, str(part.get("toolCallId")))
    kept = await attachments.of_thread(thread_id, [aid])
    if aid in kept:
        att, data = kept[aid]
        return _shown_json(att.reading.summary, att.media_type, data)
    files: list[tuple[str, bytes]] = []
    for ref in refs[:SHEET_MAX]:
        try:
            files.append((ref.annotated(), await outputs.read(ref)))
        except OutputRefused:
            continue  # (gone, or too large: the result's words say what it was)
    made = await asyncio.to_thread(picture, files, cost, budget) if files else None
    if made is None:
        return None
    output = part.get("output")
    prompt = str(output.get("promptId") or "") if isinstance(output, dict) else ""
    names = ", ".join(name for name, _ in files[:4]) + (
        f" (+{len(refs) - 4} more)" if len(refs) > 4 else ""
    )
    label = f"[What run {prompt} made, as you see it: {made.shows}. Files: {names}]"
    image = ImageInfo(made.media_type.removeprefix("image/"), made.width, made.height)
    reading = FileReading(KIND, made.media_type, label, image=image)
    name = f"run {prompt}"
    with contextlib.suppress(sqlite3.IntegrityError):  # (made by a request alongside: the same)
        await attachments.add(aid, thread_id, name, reading, made.data, made.tokens)
        await attachments.mark_sent(thread_id, [aid])
    return _shown_json(label, made.media_type, made.data)


def _shown_json(label: str, media_type: str, data: bytes) -> dict[str, str]:
    return {"label": label, "url": f"data:{media_type};base64,{base64.b64encode(data).decode()}"}
