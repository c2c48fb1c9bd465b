"""What is kept: the SQLite store and its migrations, threads and their messages, the per-thread
state and what each turn was sent as, delegated traces, the graph's checkpoints, the user's own
context, and the conversation's search index (words, and meaning where embeddings are installed).

May import: base, tokens, tools.
"""

from . import embeddings, text_search
from .branches import Branches, Moved
from .checkpoints import MAX_CHECKPOINTS, MAX_THREAD_BYTES, Checkpoints
from .conversation_index import ensure_indexed, thread_term, vectors_of
from .delegations import Delegations
from .sent_turns import Recall, Recalled, SentTurn, SentTurns, due_note
from .store import DiskFull, Store, StoreUnavailable, is_disk_full
from .thread_state import ThreadState
from .threads import Threads
from .user_data import FILES, TEXT_LIMIT, ListTable, UserData, install_defaults, sendable

__all__ = [
    "FILES",
    "MAX_CHECKPOINTS",
    "MAX_THREAD_BYTES",
    "TEXT_LIMIT",
    "Branches",
    "Checkpoints",
    "Delegations",
    "DiskFull",
    "ListTable",
    "Moved",
    "Recall",
    "Recalled",
    "SentTurn",
    "SentTurns",
    "Store",
    "StoreUnavailable",
    "ThreadState",
    "Threads",
    "UserData",
    "due_note",
    "embeddings",
    "ensure_indexed",
    "install_defaults",
    "is_disk_full",
    "sendable",
    "text_search",
    "thread_term",
    "vectors_of",
]
