"""Documents: what a tool returns when its content is something to cite (a node's
documentation; later retrieved passages, project documents, web pages).

A document result reaches the model as

    {"documents": [{"citation_id": 3, "title": "KSampler", "contents": "...",
                    "metadata": {"source": "node docs", "node_type": "KSampler"}}],
     "cite": "Cite what you use from these by citation_id, like [3]."}

and the model cites `[3]`; the panel turns `[3]` into a chip that opens the source.

Citation ids are numbered thread-wide: the next id is one more than the largest id in any
tool output already in the thread (the history the client sent plus the answer so far), so
`[n]` names one document across all the lookups of a turn and across turns, in the model's
context and in the panel alike. The id is computed once, when the tool runs, and stored in its
output: a resent request carries the very same bytes (nothing is renumbered later). A history
cut short (an edited or retried message) numbers on from what remains, which is again unique
within the thread the model and the panel see.

`metadata.source` says where the document came from and how the panel opens it: "node docs"
(`node_type`), "url" (`url`, http/https only) or "project" (`path`; project documents are
still to come: the panel shows their contents).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..base import CitedDocument, DocumentsResult, UIMessage

DOCUMENTS = "documents"
NODE_DOCS = "node docs"


def cite_note(ids: list[int]) -> str:
    """The reminder that travels with a document result (never as a separate message: nothing
    may stand between a tool result and the answer, and nothing moves in a resent request)."""
    example = ids[0] if ids else 1
    return f"Cite what you use from these by citation_id, like [{example}]."


@dataclass
class Citations:
    """Hands out the citation ids of one step's tool calls, from `next_id` on."""

    next_id: int = 1

    def take(self) -> int:
        taken = self.next_id
        self.next_id += 1
        return taken


def document(
    citation_id: int, title: str, contents: str, metadata: dict[str, Any]
) -> CitedDocument:
    return {"citation_id": citation_id, "title": title, "contents": contents, "metadata": metadata}


def documents_result(docs: list[CitedDocument]) -> DocumentsResult:
    """A tool result made of documents, with the note to cite them."""
    return {"documents": docs, "cite": cite_note([d["citation_id"] for d in docs])}


def documents_of(value: Any) -> list[dict[str, Any]]:
    """The well-formed documents in a tool output (anything else: none)."""
    if not isinstance(value, dict):
        return []
    docs = value.get(DOCUMENTS)
    if not isinstance(docs, list):
        return []
    return [
        d
        for d in docs
        if isinstance(d, dict)
        and type(d.get("citation_id")) is int
        and d["citation_id"] > 0
        and isinstance(d.get("title"), str)
    ]


def _outputs(messages: Iterable[UIMessage]) -> Iterable[Any]:
    for message in messages:
        parts = message.get("parts")
        if message.get("role") != "assistant" or not isinstance(parts, list):
            continue
        for part in parts:
            output = part.get("output") if isinstance(part, dict) else None
            if isinstance(output, dict) and DOCUMENTS in output:
                yield output


def next_citation_id(messages: Iterable[UIMessage]) -> int:
    """One more than the largest citation id in the tool outputs of `messages` (1 if none)."""
    largest = 0
    for output in _outputs(messages):
        for doc in documents_of(output):
            largest = max(largest, doc["citation_id"])
    return largest + 1
