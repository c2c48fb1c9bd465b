"""Which ComfyUI workflow a thread belongs to.

A thread records the workflow tab it was started on — the workflow's key as the frontend names
it (its path under `workflows/`, e.g. `portraits/flux.json`, or a temporary tab's name such as
`Unsaved Workflow.json`) — or none (NULL: unbound, as every thread made before this existed).
The panel lists the active workflow's threads first, moves a thread to another workflow or
unbinds it, and moves every thread of a workflow when the frontend renames it (a temporary tab
saved under a path, a file renamed in the sidebar).
"""

from __future__ import annotations

import sqlite3

from .store import Store


async def bind(store: Store, thread_id: str, workflow: str | None) -> bool:
    """Move a thread to `workflow` (None: unbind it); whether the thread exists. Its
    `updated_at` stays: moving a thread is not a message."""

    def work(db: sqlite3.Connection) -> bool:
        cursor = db.execute("UPDATE threads SET workflow = ? WHERE id = ?", (workflow, thread_id))
        return bool(cursor.rowcount)

    return await store.write(work)


async def rebind(store: Store, old: str, new: str | None) -> int:
    """Move every thread of workflow `old` to `new` (None: unbind them); how many moved."""

    def work(db: sqlite3.Connection) -> int:
        cursor = db.execute("UPDATE threads SET workflow = ? WHERE workflow = ?", (new, old))
        return cursor.rowcount

    return await store.write(work)
