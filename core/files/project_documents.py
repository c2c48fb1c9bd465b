"""A project's documents as the model gets them: one block near the end of the request, at the
head of a recent user message (the latest, for retrieved passages).

Whole when the documents fit DOCUMENTS_SHARE of the budget; else the passages BM25 ranked best
for the turn's question (core/files/projects.py), best first, within RETRIEVAL_SHARE. Both are sent
in one shape, `{"documents": [{"citation_id", "title", "contents", "metadata"}]}`
(`documents_payload`), so a document the model cites can be named by its id, and so other
sources of documents can share it.

Shares. The whole documents take at most 20% of the budget: the system prompt may take up to
half of it before it is cut, the running summary 20%, one tool result 25%; 20% leaves the
conversation at least as much room as the summary and keeps a 32K window's project whole (the
bench's style guide, three model cards, two shot lists and notes: 4,441 tokens). Retrieved
passages take at most 10%: they change every turn, so they are re-processed every turn
(below); passages are ~120 tokens (core/files/projects.py), so 10% of an 8K budget holds four or
five of them, and the answer was among them for 17 of 20 questions (bench/projects.py; at 4K,
one or two passages: 9 of 20).

Placement and the prefix cache. The block heads a user message (a message of its own there
would make two user messages in a row) and is resent byte for byte while the documents do not
change. Moved to the latest user message every turn, as the issue first asked, it would make
each request differ from the previous one from the previous user message on: a server's
prefix cache re-processes the block, that message and its answer every turn
(bench/projects.py: 5,010 tokens per turn for a 4,900-token block, against 87 without
documents). Recorded once with the first user message for good (as sent_turns does for
reminders) it costs nothing per turn (87), but sinks ever further from the question. So whole
documents stay where they were put and move to the latest user message every MOVE_EVERY (4)
user turns: between moves each request is the previous one plus new messages, the block is
never more than 3 turns from the end, and the cost is a quarter (1,179 tokens per turn on
average; 88 median). Retrieved passages answer this turn's question, so they head the latest
user message and are re-processed every turn; RETRIEVAL_SHARE bounds that (739 tokens per
turn at 8K). Within a turn (tool rounds) nothing moves. A change to a document changes the
block: re-processed once from where it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import UIMessage, compact_json
from .projects import DocumentText, Passage, ProjectContext, Projects

DOCUMENTS_SHARE = 0.2
RETRIEVAL_SHARE = 0.1
MOVE_EVERY = 4  # whole documents move to the latest user message every this many user turns

HEADER_WHOLE = (
    "<project-documents>\nThe documents pinned to the project {name}, whole. Use them where "
    "they apply; cite one by its citation_id.\n"
)
HEADER_RETRIEVED = (
    "<project-documents>\nThe passages of the project {name}'s documents that best match the "
    "latest message (the documents are too large to send whole). Use them where they apply; "
    "cite one by its citation_id.\n"
)
FOOTER = "\n</project-documents>"


def document_entry(
    citation_id: str, title: str, contents: str, metadata: dict[str, Any]
) -> dict[str, Any]:
    return {"citation_id": citation_id, "title": title, "contents": contents, "metadata": metadata}


def documents_payload(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The shape documents are sent in (to be unified with other document sources)."""
    return {"documents": entries}


def whole_entry(document: DocumentText) -> dict[str, Any]:
    return document_entry(f"doc-{document.id}", document.title, document.text, {})


def passage_entry(passage: Passage) -> dict[str, Any]:
    return document_entry(
        f"doc-{passage.document_id}-p{passage.position}",
        passage.title,
        passage.text,
        {"passage": passage.position + 1},
    )


def render(project: ProjectContext, entries: list[dict[str, Any]], whole: bool) -> str:
    header = (HEADER_WHOLE if whole else HEADER_RETRIEVED).format(name=project.name)
    return header + compact_json(documents_payload(entries)) + FOOTER


def anchor(
    messages: Sequence[UIMessage], whole: bool, summarized: frozenset[str] = frozenset()
) -> str | None:
    """The UI id of the user message the block heads. Retrieved passages answer this turn's
    question: the latest. Whole documents stay where they were put and move to the latest
    user message every MOVE_EVERY user turns (turns 1, 5, 9, ...), so between moves every
    request is the previous one plus new messages, and the block is never more than
    MOVE_EVERY - 1 turns from the end. A message under the running summary is not sent: then
    the first user message after the summary (as stable until the next move)."""
    users = [str(m.get("id") or "") for m in messages if m.get("role") == "user"]
    if not users:
        return None
    if not whole:
        return users[-1]
    at = (len(users) - 1) // MOVE_EVERY * MOVE_EVERY
    return next((u for u in users[at:] if u not in summarized), users[-1])


def question_of(messages: list[UIMessage]) -> str:
    """What retrieval searches for: the latest user message's text, then the one before it
    (a follow-up such as "and for the second shot?" leans on it)."""
    texts: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        parts = message.get("parts", [])
        texts.append(" ".join(str(p.get("text", "")) for p in parts if p.get("type") == "text"))
        if len(texts) == 2:
            break
    return "\n".join(texts)


async def for_turn(
    projects: Projects, thread_id: str, messages: list[UIMessage], window_tokens: int
) -> ProjectContext | None:
    """The thread's project for this turn, or None: its documents whole when their counts at
    upload could fit DOCUMENTS_SHARE of the window, and the passages ranked for the question."""
    project_id = await projects.of_thread(thread_id)
    if project_id is None:
        return None
    limit = int(window_tokens * DOCUMENTS_SHARE)
    return await projects.context(project_id, question_of(messages), limit)
