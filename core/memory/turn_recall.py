"""Recall per turn: when a user message is first sent, the passages of the thread's earlier
messages that are no longer in the request (under the summary, or left out by the window)
and best match it are attached to it, within LLM_RECALL_SHARE of the budget (docs/DESIGN.md
§4, looking back). They are stored with the message as it was sent (core/store/sent_turns.py) and
resent byte for byte, so requests stay append-only and a prefix cache keeps working: the
recalled lines are part of the new message, re-processed once, with it.

The search is the conversation index's (core/memory/recall.py): the words of the message, and its
meaning where static embeddings are installed. A message with nothing searchable in it
("ok, do it") is searched with the assistant message before it, the task it answers. Recall
is kept for what the message is about: a passage is attached when it shares at least
MIN_SHARED of the query's words and two thirds of them when the query has many (one common word,
"change", would bring back every stretch of graph work, every turn), and only for a message
that looks back ("remind me…", "what did we…", "the seed you suggested…": `MEMORY_CUES`):
attached to any message with shared words, the passages were mostly chit-chat that happened
to share two words, resent until the next summary (bench/memory_prose.py, 3 conversations,
fallback summaries: evidence kept 0.53 against 0.61 at 8K). By meaning alone, no:
attached to each message that asks about the past, the two best passages by meaning were
seldom what it asked about and, resent with it until the next summary, took the room of the
verbatim history that held the answers (bench/memory_prose.py at 8K, one conversation:
evidence kept 0.44 against 0.63 without recall); asking by meaning is left to the model
(`searchConversation`). A passage already recalled for a message still in the request is not
attached again, and recall takes only the room the request leaves (making it overflow took a
deeper summary).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from ..base import UIMessage, text_of
from ..store import Recall, Recalled, Store, text_search
from . import recall
from .recall_tool import day_text

RECALL_SHARE = 0.05  # of the budget, at most: the default of LLM_RECALL_SHARE (context_inputs)
CANDIDATES = 12  # hits looked at, best first
LINE_CHARS = 700  # a recalled passage is a line of at most this (an index passage: ~60-120 tokens)
MIN_TERMS = 2  # a message with fewer searchable words is searched with the answer before it
MIN_SHARED = 2  # query words a passage must hold (and two thirds of them: `relevant`)
# A message that looks back at what was said (English).
MEMORY_CUES = re.compile(
    r"\b(remind|remember|recall|forg[eo]t|memory|lost track|earlier|last time|previous|before|"
    r"again|same|(you|we|i) (said|told|suggested|recommended|mentioned|decided|agreed|picked|"
    r"chose|used|liked|discussed|talked)|did (i|we|you|my|our)|what (was|were))\b",
    re.IGNORECASE,
)
HEAD = (
    "<recalled>\nSaid earlier in this conversation, no longer in the messages above "
    "(recalled for this message; may be out of date):"
)
TAIL = "</recalled>"


def query_for(messages: Sequence[UIMessage]) -> str:
    """What the latest user message is searched by: its text, and the assistant's message
    before it when it says too little by itself."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return ""
    at = users[-1]
    query = text_of(messages[at])
    before = messages[at - 1] if at else None
    if len(recall.query_terms(query)) < MIN_TERMS and before and before.get("role") == "assistant":
        query = f"{text_of(messages[at - 1])}\n{query}"
    return query


async def recall_for_turn(
    store: Store,
    thread_id: str,
    messages: Sequence[UIMessage],
    present: Collection[str],
    recalled: Collection[str],
    room: int,
    count: Callable[[str], int],
    now: float,
) -> Recall | None:
    """The passages to attach to the latest user message of `messages`: of the messages not
    `present` in the request, the best matches that fit `room` tokens (our count) with the
    block's frame, shown oldest first; None when there is nothing evicted or nothing found.
    `recalled`: messages already recalled for a user message still in the request."""
    evicted = [str(m.get("id") or "") for m in messages if str(m.get("id") or "") not in present]
    query = query_for(messages)
    frame = count(f"{HEAD}\n{TAIL}") + 2
    if not evicted or not query or room <= frame or not MEMORY_CUES.search(query):
        return None
    excluded = {*present, *recalled}
    hits = await recall.search(store, thread_id, query, exclude_ids=excluded, limit=CANDIDATES)
    terms = recall.query_terms(query)
    chosen: list[tuple[recall.Hit, str, int]] = []
    left = room - frame
    for hit in hits:
        if not relevant(hit.text, terms):
            continue
        line = _line(hit, now)
        tokens = count(line) + 1
        if tokens <= left:
            chosen.append((hit, line, tokens))
            left -= tokens
    if not chosen:
        return None
    chosen.sort(key=lambda c: c[0].position)
    block = "\n".join([HEAD, *(line for _, line, _ in chosen), TAIL])
    passages = tuple(Recalled(h.message_id, h.role, h.created_at, t) for h, _, t in chosen)
    return Recall(block, passages)


def relevant(text: str, terms: Sequence[str]) -> bool:
    """Whether a passage holds at least MIN_SHARED of the query's words, and two thirds of them
    (words compared by their stem, roughly: "painting" holds "paint")."""
    stems = {_stem(w) for w in text_search.words(text)}
    shared = sum(_stem(t) in stems for t in terms)
    return shared >= max(MIN_SHARED, -(-2 * len(terms) // 3)) or shared == len(terms) > 0


def _stem(word: str) -> str:
    return word[:5]  # (paint, painting, painted; change, changes)


def _line(hit: recall.Hit, now: float) -> str:
    text = " ".join(hit.text.split())
    if len(text) > LINE_CHARS:
        text = text[:LINE_CHARS].rsplit(" ", 1)[0] + " …"
    return f"- {hit.role}, {day_text(hit.created_at, now)}: {text}"
