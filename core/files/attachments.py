"""Attached files, kept in the store with their thread, and what a chat request sends for them.

A file is read and counted when it is attached (`attachment_files.read_file`), stored whole
(its bytes and what was read of it), and never changed: the user message it came with holds a
`file` part whose url is `attachment:<id>`, and every request of the thread sends the same
parts for it ("point in time"), as `model_parts` built them. The browser only ever holds that
url; the bytes are served back by id for the panel to show.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..base import UIMessage, UIPart
from ..store import Store
from .attachment_files import FileReading, model_parts
from .image_files import ImageInfo

SCHEME = "attachment:"
DRAFT_SECONDS = 24 * 3600  # a file attached but never sent is removed after this long
GONE = "[an attached file {name} is no longer available]"


@dataclass(frozen=True)
class Attachment:
    id: str
    thread_id: str
    name: str
    size: int
    tokens: int
    reading: FileReading
    sent: bool

    @property
    def url(self) -> str:
        return SCHEME + self.id

    @property
    def media_type(self) -> str:
        return self.reading.media_type

    @property
    def kind(self) -> str:
        return self.reading.kind

    def as_json(self) -> dict[str, Any]:
        """What the panel is told (never the bytes)."""
        image = self.reading.image
        return {
            "id": self.id,
            "url": self.url,
            "name": self.name,
            "mediaType": self.media_type,
            "kind": self.kind,
            "size": self.size,
            "tokens": self.tokens,
            "summary": self.reading.summary,
            "note": self.reading.note,
            "width": image.width if image else None,
            "height": image.height if image else None,
            "workflow": self.reading.workflow is not None,
        }


def new_id() -> str:
    return "att_" + secrets.token_urlsafe(12)


def attachment_id(part: UIPart) -> str | None:
    """The id a message part refers to (`attachment:<id>`), or None."""
    url = part.get("url") if part.get("type") == "file" else None
    return url[len(SCHEME) :] if isinstance(url, str) and url.startswith(SCHEME) else None


def referenced(messages: Iterable[UIMessage]) -> list[str]:
    return [
        aid
        for m in messages
        if m.get("role") == "user"
        for part in m.get("parts", [])
        if (aid := attachment_id(part)) is not None
    ]


def _reading_json(reading: FileReading) -> str:
    image = reading.image
    return json.dumps(
        {
            "kind": reading.kind,
            "media_type": reading.media_type,
            "summary": reading.summary,
            "note": reading.note,
            "text": reading.text,
            "workflow": reading.workflow,
            "image": [image.format, image.width, image.height] if image else None,
        },
        ensure_ascii=False,
    )


def _reading(raw: str) -> FileReading:
    value = json.loads(raw)
    image = value["image"]
    return FileReading(
        value["kind"],
        value["media_type"],
        value["summary"],
        value["note"],
        value["text"],
        value["workflow"],
        ImageInfo(image[0], image[1], image[2]) if image else None,
    )


_COLUMNS = "id, thread_id, name, size, tokens, reading, sent"


def _row(row: Any) -> Attachment:
    return Attachment(row[0], row[1], row[2], row[3], row[4], _reading(row[5]), bool(row[6]))


class Attachments:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def add(
        self, aid: str, thread_id: str, name: str, reading: FileReading, data: bytes, tokens: int
    ) -> Attachment:
        now = time.time()

        def work(db: sqlite3.Connection) -> None:
            db.execute(  # drafts nobody sent, from any thread
                "DELETE FROM attachments WHERE sent = 0 AND created_at < ?", (now - DRAFT_SECONDS,)
            )
            db.execute(
                "INSERT INTO attachments (id, thread_id, name, media_type, kind, size, tokens, "
                "reading, data, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    aid, thread_id, name, reading.media_type, reading.kind, len(data), tokens,
                    _reading_json(reading), data, now,
                ),
            )  # fmt: skip

        await self.store.write(work)
        return Attachment(aid, thread_id, name, len(data), tokens, reading, False)

    async def get(self, aid: str) -> Attachment | None:
        row = await self.store.fetchone(f"SELECT {_COLUMNS} FROM attachments WHERE id = ?", (aid,))
        return None if row is None else _row(row)

    async def data(self, aid: str) -> bytes | None:
        row = await self.store.fetchone("SELECT data FROM attachments WHERE id = ?", (aid,))
        return None if row is None else bytes(row[0])

    async def of_thread(
        self, thread_id: str, ids: Sequence[str]
    ) -> dict[str, tuple[Attachment, bytes]]:
        """The thread's attachments among `ids`, with their bytes (another thread's: none)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(set(ids)))
        rows = await self.store.fetchall(
            f"SELECT {_COLUMNS}, data FROM attachments WHERE thread_id = ? AND id IN ({marks})",
            (thread_id, *set(ids)),
        )
        return {row[0]: (_row(row), bytes(row[7])) for row in rows}

    async def mark_sent(self, thread_id: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        marks = ",".join("?" * len(ids))

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                f"UPDATE attachments SET sent = 1 WHERE thread_id = ? AND id IN ({marks})",
                (thread_id, *ids),
            )

        await self.store.write(work)

    async def delete_draft(self, aid: str) -> bool | None:
        """Remove an attachment no message holds yet: True; None when there is none; False
        when a message holds it (it stays with the thread)."""

        def work(db: sqlite3.Connection) -> bool | None:
            row = db.execute("SELECT sent FROM attachments WHERE id = ?", (aid,)).fetchone()
            if row is None:
                return None
            if row[0]:
                return False
            db.execute("DELETE FROM attachments WHERE id = ?", (aid,))
            return True

        return await self.store.freeing(work)


def with_files(
    messages: Sequence[UIMessage], files: dict[str, tuple[Attachment, bytes]], vision: bool
) -> list[UIMessage]:
    """The messages as the model is sent them: each `attachment:` part replaced by the parts
    its file gives (`model_parts`); one that is gone by a note. Other messages are the same
    objects."""
    out: list[UIMessage] = []
    for message in messages:
        if message.get("role") != "user" or not any(
            attachment_id(p) for p in message.get("parts", [])
        ):
            out.append(message)
            continue
        parts: list[UIPart] = []
        for part in message["parts"]:
            aid = attachment_id(part)
            if aid is None:
                parts.append(part)
            elif aid in files:
                att, data = files[aid]
                parts.extend(model_parts(att.id, att.name, att.reading, data, vision))
            else:
                name = part.get("filename") or aid
                parts.append({"type": "text", "text": GONE.format(name=name)})
        out.append({**message, "parts": parts})
    return out


async def with_thread_files(
    store: Store, thread_id: str, messages: Sequence[UIMessage], vision: bool
) -> tuple[list[UIMessage], bool]:
    """`messages` with the thread's attached files in place (`with_files`), and whether an
    image among them was sent as a note (the model cannot see it). The files are marked sent:
    a message holds them now."""
    ids = referenced(messages)
    if not ids:
        return list(messages), False
    attachments = Attachments(store)
    files = await attachments.of_thread(thread_id, ids)
    await attachments.mark_sent(thread_id, [aid for aid, (att, _) in files.items() if not att.sent])
    unseen = not vision and any(att.reading.image is not None for att, _ in files.values())
    return with_files(messages, files, vision), unseen
