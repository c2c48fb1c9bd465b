"""Projects: documents the user pins (notes, style guides, model cards, a shot list) that the
threads of the project see on every turn (docs/DESIGN.md §4, project documents).

A document is stored whole with its token count at upload, and split into passages of about
PASSAGE_TOKENS at paragraph boundaries; each passage is indexed by SQLite's FTS5 (the table
`passage_index`, its rowid the passage's id), so a project too large to send whole is searched
per turn with BM25, in the store, with no service to run.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from ..base import StatusError, coded
from ..store import Store, text_search
from ..tokens import TokenCounter, counter_for, split_passages

MAX_DOCUMENT_BYTES = 512 * 1024  # UTF-8 bytes of one document's text
MAX_DOCUMENTS = 200  # per project
MAX_NAME_CHARS = 100
MAX_TITLE_CHARS = 200
QUERY_TERMS = 48  # the most words of a question that go into the FTS5 query

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WORD = re.compile(r"\w+", re.UNICODE)


class ProjectError(StatusError):
    """A client mistake: `status` is the HTTP status to answer with."""


@dataclass(frozen=True)
class Passage:
    id: int
    document_id: int
    title: str  # the document's
    position: int  # in the document
    text: str
    tokens: int


@dataclass(frozen=True)
class DocumentText:
    id: int
    title: str
    text: str
    tokens: int


@dataclass(frozen=True)
class ProjectContext:
    """What the context engine gets of a thread's project for one turn: the documents whole
    (empty when they cannot fit the whole-documents share: not even loaded), and the passages
    BM25 ranked best for the turn's question, best first."""

    id: int
    name: str
    document_count: int
    tokens: int  # all documents, as counted at upload
    documents: tuple[DocumentText, ...] = ()
    passages: tuple[Passage, ...] = ()
    query: str = ""


# --- validation -----------------------------------------------------------------------------


def check_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ProjectError(400, coded("project.name_empty"))
    name = value.strip()
    if len(name) > MAX_NAME_CHARS:
        raise ProjectError(
            400, coded("project.name_too_long", length=len(name), limit=MAX_NAME_CHARS)
        )
    if _CONTROL.search(name) or "\n" in name or "\r" in name or "\t" in name:
        raise ProjectError(400, coded("project.name_lines"))
    return name


def check_title(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ProjectError(400, coded("project.title_empty"))
    title = " ".join(value.split())
    if len(title) > MAX_TITLE_CHARS:
        raise ProjectError(
            400, coded("project.title_too_long", length=len(title), limit=MAX_TITLE_CHARS)
        )
    if _CONTROL.search(title):
        raise ProjectError(400, coded("project.title_control"))
    return title


def check_text(value: Any) -> str:
    if not isinstance(value, str):
        raise ProjectError(400, "'text' must be a string (the document's text)")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_DOCUMENT_BYTES:
        raise ProjectError(
            413, coded("project.document_too_big", size=size, limit=MAX_DOCUMENT_BYTES)
        )
    found = _CONTROL.search(value)
    if found:
        codepoint, position = f"{ord(found.group()):04X}", str(found.start())
        raise ProjectError(
            400, coded("project.text_control", codepoint=codepoint, position=position)
        )
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise ProjectError(400, coded("project.text_empty"))
    return text


def fts_query(text: str) -> str:
    """An FTS5 query matching any word of `text` (each quoted: no operator can slip in),
    distinct words in order, at most QUERY_TERMS."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) > 1 or word.isdigit():
            seen.setdefault(word.replace('"', ""), None)
        if len(seen) >= QUERY_TERMS:
            break
    return " OR ".join(f'"{w}"' for w in seen)


# --- the store ------------------------------------------------------------------------------


def _project_json(row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "documentCount": row["document_count"],
        "tokens": row["tokens"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def _document_json(row: Any, text: bool = False) -> dict[str, Any]:
    out = {
        "id": row["id"],
        "projectId": row["project_id"],
        "title": row["title"],
        "tokens": row["token_count"],
        "passages": row["passages"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }
    if text:
        out["text"] = row["text"]
    return out


_PROJECT_SQL = (
    "SELECT p.id, p.name, p.created_at, p.updated_at, "
    "(SELECT COUNT(*) FROM documents d WHERE d.project_id = p.id) AS document_count, "
    "(SELECT COALESCE(SUM(d.token_count), 0) FROM documents d WHERE d.project_id = p.id) "
    "AS tokens FROM projects p"
)
_DOCUMENT_SQL = (
    "SELECT d.id, d.project_id, d.title, d.token_count, d.created_at, d.updated_at, {text}"
    "(SELECT COUNT(*) FROM passages s WHERE s.document_id = d.id) AS passages "
    "FROM documents d"
)


def _index(
    db: sqlite3.Connection, project_id: int, document_id: int, title: str, passages: Any
) -> None:
    db.execute("DELETE FROM passages WHERE document_id = ?", (document_id,))
    for position, (text, tokens) in enumerate(passages):
        cursor = db.execute(
            "INSERT INTO passages (document_id, project_id, position, text, token_count) "
            "VALUES (?,?,?,?,?)",
            (document_id, project_id, position, text, tokens),
        )
        db.execute(
            "INSERT INTO passage_index (rowid, title, text) VALUES (?,?,?)",
            (cursor.lastrowid, title, text),
        )


class Projects:
    def __init__(self, store: Store, counter: TokenCounter | None = None) -> None:
        self.store = store
        self.counter = counter or counter_for(None)

    async def all(self) -> list[dict[str, Any]]:
        rows = await self.store.fetchall(_PROJECT_SQL + " ORDER BY p.name COLLATE NOCASE, p.id")
        return [_project_json(r) for r in rows]

    async def get(self, project_id: int) -> dict[str, Any] | None:
        row = await self.store.fetchone(_PROJECT_SQL + " WHERE p.id = ?", (project_id,))
        if row is None:
            return None
        docs = await self.store.fetchall(
            _DOCUMENT_SQL.format(text="") + " WHERE d.project_id = ? ORDER BY d.id", (project_id,)
        )
        return {**_project_json(row), "documents": [_document_json(d) for d in docs]}

    async def create(self, name: str) -> dict[str, Any]:
        now = time.time()

        def work(db: sqlite3.Connection) -> int:
            try:
                cursor = db.execute(
                    "INSERT INTO projects (name, created_at, updated_at) VALUES (?,?,?)",
                    (name, now, now),
                )
            except sqlite3.IntegrityError:
                raise ProjectError(409, coded("project.exists", name=name)) from None
            assert cursor.lastrowid is not None
            return cursor.lastrowid

        created = await self.get(await self.store.write(work))
        assert created is not None
        return created

    async def rename(self, project_id: int, name: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            try:
                cursor = db.execute(
                    "UPDATE projects SET name = ?, updated_at = ? WHERE id = ?",
                    (name, time.time(), project_id),
                )
            except sqlite3.IntegrityError:
                raise ProjectError(409, coded("project.exists", name=name)) from None
            return bool(cursor.rowcount)

        return await self.store.write(work)

    async def delete(self, project_id: int) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            return bool(db.execute("DELETE FROM projects WHERE id = ?", (project_id,)).rowcount)

        return await self.store.freeing(work)

    async def document(self, project_id: int, document_id: int) -> dict[str, Any] | None:
        row = await self.store.fetchone(
            _DOCUMENT_SQL.format(text="d.text, ") + " WHERE d.project_id = ? AND d.id = ?",
            (project_id, document_id),
        )
        return None if row is None else _document_json(row, text=True)

    async def add_document(self, project_id: int, title: str, text: str) -> dict[str, Any] | None:
        """The new document (None: no such project)."""
        tokens = self.counter.text(text)
        passages = split_passages(text, self.counter)
        now = time.time()

        def work(db: sqlite3.Connection) -> int | None:
            if db.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone() is None:
                return None
            (count,) = db.execute(
                "SELECT COUNT(*) FROM documents WHERE project_id = ?", (project_id,)
            ).fetchone()
            if count >= MAX_DOCUMENTS:
                raise ProjectError(
                    400, coded("project.too_many_documents", count=count, limit=MAX_DOCUMENTS)
                )
            cursor = db.execute(
                "INSERT INTO documents (project_id, title, text, token_count, created_at, "
                "updated_at) VALUES (?,?,?,?,?,?)",
                (project_id, title, text, tokens, now, now),
            )
            assert cursor.lastrowid is not None
            _index(db, project_id, cursor.lastrowid, title, passages)
            db.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (now, project_id))
            return cursor.lastrowid

        document_id = await self.store.write(work)
        return None if document_id is None else await self.document(project_id, document_id)

    async def update_document(
        self, project_id: int, document_id: int, title: str | None, text: str | None
    ) -> bool:
        tokens = None if text is None else self.counter.text(text)
        passages = None if text is None else split_passages(text, self.counter)
        now = time.time()

        def work(db: sqlite3.Connection) -> bool:
            row = db.execute(
                "SELECT title, text FROM documents WHERE id = ? AND project_id = ?",
                (document_id, project_id),
            ).fetchone()
            if row is None:
                return False
            new_title = row[0] if title is None else title
            db.execute(
                "UPDATE documents SET title = ?, text = COALESCE(?, text), token_count = "
                "COALESCE(?, token_count), updated_at = ? WHERE id = ?",
                (new_title, text, tokens, now, document_id),
            )
            if passages is not None or new_title != row[0]:
                fresh = passages or split_passages(row[1], self.counter)
                _index(db, project_id, document_id, new_title, fresh)
            db.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (now, project_id))
            return True

        return await self.store.write(work)

    async def delete_document(self, project_id: int, document_id: int) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            cursor = db.execute(
                "DELETE FROM documents WHERE id = ? AND project_id = ?", (document_id, project_id)
            )
            if cursor.rowcount:
                db.execute(
                    "UPDATE projects SET updated_at = ? WHERE id = ?", (time.time(), project_id)
                )
            return bool(cursor.rowcount)

        return await self.store.freeing(work)

    async def search(self, project_id: int, text: str, limit: int = 20) -> list[Passage]:
        """The project's passages that best match `text` (BM25, a document's title weighing
        twice its text), best first."""
        query = fts_query(text)
        if not query:
            return []
        if not self.store.full_text:
            return await self._search_without_fts5(project_id, text, limit)
        rows = await self.store.fetchall(
            "SELECT s.id, s.document_id, d.title, s.position, s.text, s.token_count "
            "FROM passage_index JOIN passages s ON s.id = passage_index.rowid "
            "JOIN documents d ON d.id = s.document_id "
            "WHERE passage_index MATCH ? AND s.project_id = ? "
            "ORDER BY bm25(passage_index, 2.0, 1.0), s.id LIMIT ?",
            (query, project_id, limit),
        )
        return [Passage(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

    async def _search_without_fts5(self, project_id: int, text: str, limit: int) -> list[Passage]:
        """`search` where SQLite has no FTS5: the passages holding any query word (LIKE), ranked
        by BM25 here (core/store/text_search.py)."""
        terms = list(dict.fromkeys(w for w in text_search.words(text) if len(w) > 1 or w.isdigit()))
        terms = terms[:QUERY_TERMS]
        if not terms:
            return []
        match = " OR ".join(
            ["s.text LIKE ? ESCAPE '\\' OR d.title LIKE ? ESCAPE '\\'"] * len(terms)
        )
        patterns = [text_search.like_pattern(t) for t in terms for _ in (0, 1)]
        rows = await self.store.fetchall(
            "SELECT s.id, s.document_id, d.title, s.position, s.text, s.token_count "
            "FROM passages s JOIN documents d ON d.id = s.document_id "
            f"WHERE s.project_id = ? AND ({match})",
            (project_id, *patterns),
        )
        scores = text_search.bm25(terms, [(r[2], r[4]) for r in rows])
        ranked = sorted(
            (pair for pair in zip(scores, rows, strict=True) if pair[0] > 0),
            key=lambda pair: (-pair[0], pair[1][0]),
        )
        return [Passage(r[0], r[1], r[2], r[3], r[4], r[5]) for _, r in ranked[:limit]]

    async def of_thread(self, thread_id: str) -> int | None:
        row = await self.store.fetchone("SELECT project FROM threads WHERE id = ?", (thread_id,))
        return None if row is None or row[0] is None else int(row[0])

    async def set_thread(self, thread_id: str, project_id: int | None) -> bool:
        """Put a thread in a project (None: out of any); whether the thread exists."""

        def work(db: sqlite3.Connection) -> bool:
            if (
                project_id is not None
                and db.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone()
                is None
            ):
                raise ProjectError(404, coded("not_found.project", project=str(project_id)))
            cursor = db.execute(
                "UPDATE threads SET project = ? WHERE id = ?", (project_id, thread_id)
            )
            return bool(cursor.rowcount)

        return await self.store.write(work)

    async def context(
        self, project_id: int, question: str, whole_limit: int, candidates: int = 24
    ) -> ProjectContext | None:
        """The project for one turn: its documents whole when their stored counts total at
        most `whole_limit` (else not loaded), and the passages ranked for `question`."""
        row = await self.store.fetchone(_PROJECT_SQL + " WHERE p.id = ?", (project_id,))
        if row is None or not row["document_count"]:
            return None
        documents: tuple[DocumentText, ...] = ()
        # ranked even when the documents may go whole: their rendering may not fit after all
        passages = tuple(await self.search(project_id, question, candidates))
        if row["tokens"] <= whole_limit:
            docs = await self.store.fetchall(
                "SELECT id, title, text, token_count FROM documents WHERE project_id = ? "
                "ORDER BY id",
                (project_id,),
            )
            documents = tuple(DocumentText(d[0], d[1], d[2], d[3]) for d in docs)
        return ProjectContext(
            row["id"], row["name"], row["document_count"], row["tokens"], documents, passages,
            question,
        )  # fmt: skip
