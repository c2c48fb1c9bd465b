"""The database schema as an ordered list of small named steps.

Each step that ran is recorded in the `migrations` table, so an older database is brought
forward step by step at start-up and no step ever runs twice. Add new steps at the end; never
edit one that has shipped.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Awaitable, Callable

import aiosqlite

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]


async def m001_settings(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE settings (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (namespace, key)
        )"""
    )


async def m002_user_context(db: aiosqlite.Connection) -> None:
    for table in ("rules", "reminders"):
        await db.execute(
            f"""CREATE TABLE {table} (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                text TEXT NOT NULL,
                enabled INTEGER NOT NULL DEFAULT 1,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            )"""
        )
    await db.execute(
        """CREATE TABLE personas (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            description TEXT NOT NULL DEFAULT '',
            instructions TEXT NOT NULL,
            replaces_system_prompt INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )"""
    )


async def m003_threads(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE threads (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            archived INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )"""
    )
    await db.execute(
        """CREATE TABLE messages (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            position INTEGER NOT NULL,
            role TEXT NOT NULL,
            parts TEXT NOT NULL,
            metadata TEXT,
            status TEXT NOT NULL DEFAULT 'complete',
            token_count INTEGER,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (thread_id, id)
        )"""
    )
    await db.execute("CREATE INDEX messages_by_thread ON messages (thread_id, position, seq)")
    await db.execute(
        """CREATE TABLE thread_state (
            thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
            summary TEXT,
            summary_until TEXT,
            context_report TEXT,
            updated_at REAL NOT NULL
        )"""
    )
    await db.execute(
        """CREATE TABLE tool_results (
            thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            tool_call_id TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            input TEXT,
            output TEXT NOT NULL,
            is_error INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            PRIMARY KEY (thread_id, tool_call_id)
        )"""
    )


async def m004_sent_turns(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE sent_turns (
            thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            note TEXT NOT NULL,
            text TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (thread_id, message_id)
        )"""
    )


async def m005_thread_workflow(db: aiosqlite.Connection) -> None:
    """The ComfyUI workflow a thread belongs to (its key: the path under `workflows/`, or a
    temporary tab's name); NULL for a thread bound to none (every thread made before)."""
    await db.execute("ALTER TABLE threads ADD COLUMN workflow TEXT")
    await db.execute("CREATE INDEX threads_by_workflow ON threads (workflow, updated_at)")


async def m006_delegations(db: aiosqlite.Connection) -> None:
    """Delegated tasks (the `delegate` tool): the child's full trace, by the parent's ids."""
    await db.execute(
        """CREATE TABLE delegations (
            id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            tool_call_id TEXT NOT NULL,
            status TEXT NOT NULL,
            trace TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (thread_id, tool_call_id)
        )"""
    )


async def m007_projects(db: aiosqlite.Connection) -> None:
    """Projects and their documents; each document split into passages, indexed by FTS5
    (`passage_index`, rowid = the passage's id, kept in step by triggers); a thread may
    belong to a project."""
    await db.execute(
        """CREATE TABLE projects (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )"""
    )
    await db.execute(
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            text TEXT NOT NULL,
            token_count INTEGER NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )"""
    )
    await db.execute("CREATE INDEX documents_project ON documents (project_id)")
    await db.execute(
        """CREATE TABLE passages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            project_id INTEGER NOT NULL,
            position INTEGER NOT NULL,
            text TEXT NOT NULL,
            token_count INTEGER NOT NULL
        )"""
    )
    await db.execute("CREATE INDEX passages_document ON passages (document_id, position)")
    if await fts5_available(db):
        await db.execute(
            "CREATE VIRTUAL TABLE passage_index "
            "USING fts5(title, text, tokenize='porter unicode61')"
        )
    else:  # the same columns, searched by core/store/text_search.py instead
        await db.execute(
            "CREATE TABLE passage_index (rowid INTEGER PRIMARY KEY, title TEXT, text TEXT)"
        )
    await db.execute(
        "CREATE TRIGGER passages_unindex AFTER DELETE ON passages BEGIN "
        "DELETE FROM passage_index WHERE rowid = old.id; END"
    )
    await db.execute(
        "ALTER TABLE threads ADD COLUMN project INTEGER REFERENCES projects(id) ON DELETE SET NULL"
    )


async def m008_attachments(db: aiosqlite.Connection) -> None:
    """Files attached in the composer, kept with their thread (point in time: never changed).
    A thread row may not exist yet at upload (a new chat), so no foreign key: a trigger removes
    a deleted thread's files; `sent` marks those a message holds (the rest are drafts)."""
    await db.execute(
        """CREATE TABLE attachments (
            id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL,
            name TEXT NOT NULL,
            media_type TEXT NOT NULL,
            kind TEXT NOT NULL,
            size INTEGER NOT NULL,
            tokens INTEGER NOT NULL,
            reading TEXT NOT NULL,
            data BLOB NOT NULL,
            sent INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        )"""
    )
    await db.execute("CREATE INDEX attachments_thread ON attachments (thread_id)")
    await db.execute(
        "CREATE TRIGGER threads_attachments AFTER DELETE ON threads BEGIN "
        "DELETE FROM attachments WHERE thread_id = old.id; END"
    )


async def m009_conversation_index(db: aiosqlite.Connection) -> None:
    """Every message's words, for looking back (core/store/conversation_index.py): its passages,
    deleted with it, indexed by FTS5 (`message_index`, rowid = the passage's id) where the
    project passages are; the threads stored before are indexed on their first search."""
    await db.execute(
        """CREATE TABLE message_passages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            thread_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            part INTEGER NOT NULL,
            text TEXT NOT NULL,
            FOREIGN KEY (thread_id, message_id) REFERENCES messages(thread_id, id)
                ON DELETE CASCADE
        )"""
    )  # (AUTOINCREMENT: an id is never reused, so an index row never names another passage)
    await db.execute(
        "CREATE INDEX message_passages_message ON message_passages (thread_id, message_id, part)"
    )
    if await full_text_index(db):  # (else searched by core/store/text_search.py, as the projects)
        await db.execute(
            "CREATE VIRTUAL TABLE message_index "
            "USING fts5(thread, text, tokenize='porter unicode61')"
        )
    await db.execute(
        """CREATE TABLE unindexed_threads (
            thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE
        )"""
    )
    await db.execute("INSERT INTO unindexed_threads (thread_id) SELECT id FROM threads")


async def m010_passage_vectors(db: aiosqlite.Connection) -> None:
    """The meaning of each conversation passage as a vector (core/store/embeddings.py), computed
    when its thread is first searched with embeddings; deleted with its passage (a foreign key: a
    regenerated answer's passages are replaced, a deleted message's go with it)."""
    await db.execute(
        """CREATE TABLE passage_vectors (
            passage_id INTEGER PRIMARY KEY REFERENCES message_passages(id) ON DELETE CASCADE,
            vector BLOB NOT NULL
        )"""
    )


async def m011_sent_turn_recall(db: aiosqlite.Connection) -> None:
    """What a user message was first sent with also holds the passages of earlier messages
    recalled for it (core/memory/turn_recall.py): JSON, its rendered block and what it came from."""
    await db.execute("ALTER TABLE sent_turns ADD COLUMN recall TEXT")


async def m012_checkpoints(db: aiosqlite.Connection) -> None:
    """The workflow as it was before an assistant turn changed it (core/store/checkpoints.py):
    one per (thread, assistant message), its graph stored once per distinct content
    (`checkpoint_blobs`, zlib) and removed with the last checkpoint that holds it."""
    await db.execute(
        """CREATE TABLE checkpoint_blobs (
            hash TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            data BLOB NOT NULL
        )"""
    )
    await db.execute(
        """CREATE TABLE checkpoints (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            workflow TEXT,
            hash TEXT NOT NULL REFERENCES checkpoint_blobs(hash),
            nodes INTEGER NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (thread_id, message_id)
        )"""
    )
    await db.execute("CREATE INDEX checkpoints_hash ON checkpoints (hash)")
    await db.execute("CREATE INDEX checkpoints_workflow ON checkpoints (workflow)")
    await db.execute(
        "CREATE TRIGGER checkpoints_unref AFTER DELETE ON checkpoints BEGIN "
        "DELETE FROM checkpoint_blobs WHERE hash = old.hash AND NOT EXISTS "
        "(SELECT 1 FROM checkpoints WHERE hash = old.hash); END"
    )


async def m013_thread_branches(db: aiosqlite.Connection) -> None:
    """The messages a conversation rewind set aside, kept whole to return to
    (core/store/branches.py): numbered per thread, after the message they followed."""
    await db.execute(
        """CREATE TABLE thread_branches (
            thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            after_id TEXT,
            message_count INTEGER NOT NULL,
            preview TEXT NOT NULL,
            data BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (thread_id, number)
        )"""
    )


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_settings", m001_settings),
    ("002_user_context", m002_user_context),
    ("003_threads", m003_threads),
    ("004_sent_turns", m004_sent_turns),
    ("005_thread_workflow", m005_thread_workflow),
    ("006_delegations", m006_delegations),
    ("007_projects", m007_projects),
    ("008_attachments", m008_attachments),
    ("009_conversation_index", m009_conversation_index),
    ("010_passage_vectors", m010_passage_vectors),
    ("011_sent_turn_recall", m011_sent_turn_recall),
    ("012_checkpoints", m012_checkpoints),
    ("013_thread_branches", m013_thread_branches),
]


async def applied_migrations(db: aiosqlite.Connection) -> list[str]:
    await db.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    async with db.execute("SELECT name FROM migrations ORDER BY name") as cursor:
        return [row[0] async for row in cursor]


NO_FTS5 = "COMFY_ASSISTANT_NO_FTS5"  # =1: behave as an SQLite built without FTS5 (tests)


async def fts5_available(db: aiosqlite.Connection) -> bool:
    """Whether this SQLite has FTS5, its full-text search (most builds do; some Python builds
    and distributions leave it out)."""
    if os.environ.get(NO_FTS5) == "1":
        return False
    try:
        await db.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    await db.execute("DROP TABLE temp.fts5_probe")
    return True


async def full_text_index(db: aiosqlite.Connection) -> bool:
    """Whether the passages are indexed by FTS5 here: the index was made with it (a database
    made without it keeps its plain table) and this SQLite has it."""
    rows = await db.execute_fetchall(
        "SELECT sql FROM sqlite_master WHERE name = 'passage_index' AND sql LIKE '%fts5%'"
    )
    return bool(list(rows)) and await fts5_available(db)


async def migrate(
    db: aiosqlite.Connection, migrations: list[tuple[str, Migration]] = MIGRATIONS
) -> list[str]:
    """Apply the steps not yet recorded, each in its own transaction; return their names."""
    done = set(await applied_migrations(db))
    await db.commit()
    ran = []
    for name, step in migrations:
        if name in done:
            continue
        await db.execute("BEGIN IMMEDIATE")
        try:
            await step(db)
            await db.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
            )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise
        ran.append(name)
    return ran
