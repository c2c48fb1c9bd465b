"""Which ComfyUI workflow a thread belongs to.

A thread records the workflow it was started on by the workflow's key (the panel makes it:
ui/src/host/comfy.ts `workflowKey`): a saved workflow's path under `workflows/` (e.g.
`portraits/flux.json`), or for an unsaved one `unsaved:` and the thread key its workflow JSON
keeps (`extra.comfyui_assistant_thread_key`, ui/src/host/threadKeys.ts: `unsaved:0b5c…`) — never a
tab's name, which ComfyUI gives again to other new tabs ("Unsaved Workflow.json"), nor the
workflow's `id`, which templates share — or none (NULL: unbound, as every thread made before this
existed). Threads an earlier version bound to `unsaved:<workflow id>` are moved by the panel.
The panel lists the active workflow's threads first, moves a thread to another workflow or
unbinds it, and moves every thread of a workflow when its key changes (an unsaved one saved
under a path, a file renamed in the sidebar). Threads an earlier version bound to a tab's name
are unbound by the panel unless a saved workflow has that path (the same key as before).
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
    """Move every thread of workflow `old` to `new` (None: unbind them); how many moved. The
    checkpoints of `old` (core/store/checkpoints.py) follow a new key; an unsaved workflow
    closed keeps its key on them (its thread key: opened again from a checkpoint, the tab has
    it again)."""

    def work(db: sqlite3.Connection) -> int:
        cursor = db.execute("UPDATE threads SET workflow = ? WHERE workflow = ?", (new, old))
        if new is not None:
            db.execute("UPDATE checkpoints SET workflow = ? WHERE workflow = ?", (new, old))
        return cursor.rowcount

    return await store.write(work)
