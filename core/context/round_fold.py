"""The last resort for a turn whose tool rounds do not fit even as digests: a model that made 80
calls in one step at an 8K window. The calls past a step's limit did not run
(`base/step_limits.py`) and each was answered with a note of 40 tokens;
the round (and with it everything the model did this turn) was left out of the next request,
and the model made the same calls again, step after step.

Three smaller forms of such a turn's rounds, tried in turn by `context_stages.fit_turn` (`SMALLER`):

- `short_notes`: every call kept with its id, each over-the-limit note made short;
- `folded`: the calls over the limit left out of the call message with their notes, and one
  note on the last result kept says how many of which tool were made and not run. (200 calls of
  about 19 tokens each do not fit an 8K window's history even without results.)
- `terse`: besides, each digest without the items it lists ("-> 10 results: A, B, C, …" becomes
  "-> 10 results"), its recall id kept: the 80 results of a turn that made 80 calls then fit
  an 8K window, and the model does not make them again.

Either way every call the model made is answered (by its result's digest, its note, or the
note that counts it), and the request stays valid: each call kept has its result.
"""

from __future__ import annotations

import re
from collections import Counter

from ..base import OVER_LIMIT, content_text, with_content
from .context_blocks import Block, Message

SHORT_NOTE = "Not run: over the limit of {limit} tool calls in one step."
# (the note as the call was answered, or as `short_notes` made it)
_OVER = re.compile(
    "|".join(re.escape(note.split("{", 1)[0]) + r"(\d+)" for note in (OVER_LIMIT, SHORT_NOTE))
)
FOLD_NOTE = (
    "[{count} more calls of this step, left out here, were not run: a step may make at most "
    "{limit} tool calls ({tools}). Make the calls still needed in the next step.]"
)


# A digest's outcome after its count: "[digest] tool args -> 10 results: A, B, … (recall: id)"
_LISTED = re.compile(r"^(\[digest\] .*? -> [^:\n]*?): [^\n]*?( \(recall: [^)\n]*\))$", re.M)


def _limit(result: Message) -> int | None:
    """The per-step limit a result says its call was over, or None (it ran, or failed)."""
    found = _OVER.search(content_text(result.get("content")))
    return int(found.group(found.lastindex or 1)) if found else None


def short_notes(block: Block) -> Block:
    """The round with every over-the-limit note shortened (its calls and ids as they are)."""
    call, *results = block.messages
    out = []
    for result in results:
        limit = _limit(result)
        short = None if limit is None else SHORT_NOTE.format(limit=limit)
        out.append(result if short is None else with_content(result, short))
    return block.with_messages([call, *out], digested=True) if out != results else block


def folded(block: Block) -> Block:
    """The round without its over-the-limit calls, one note on the last result kept counting
    them by tool. A round whose every call was over the limit is kept as it is."""
    call, *results = block.messages
    limits = [_limit(r) for r in results]
    over = {r["tool_call_id"]: limit for r, limit in zip(results, limits, strict=True) if limit}
    if not over or len(over) == len(results):
        return block
    calls = call["tool_calls"]
    tools = Counter(c["function"]["name"] for c in calls if c["id"] in over)
    note = FOLD_NOTE.format(
        count=len(over),
        limit=max(over.values()),
        tools=", ".join(f"{name} ×{n}" for name, n in tools.most_common()),
    )
    kept = [r for r in results if r["tool_call_id"] not in over]
    content = kept[-1].get("content")
    if isinstance(content, list):  # (a result that shows an image: the note after its text)
        kept[-1] = with_content(kept[-1], [*content, {"type": "text", "text": note}])
    else:
        kept[-1] = with_content(kept[-1], f"{content or ''}\n{note}")
    call = {**call, "tool_calls": [c for c in calls if c["id"] not in over]}
    return block.with_messages([call, *kept], digested=True)


def terse_digest(text: str) -> str:
    """A digest's lines without the items each lists (its count and recall id kept)."""
    return _LISTED.sub(r"\1\2", text)


def terse(block: Block) -> Block:
    """The round with each digest's listed items left out (its count and recall id kept)."""
    call, *results = block.messages
    out = []
    for result in results:
        content = result.get("content")
        shorter = terse_digest(content) if isinstance(content, str) else content
        out.append(result if shorter == content else with_content(result, shorter))
    return block.with_messages([call, *out], digested=True) if out != results else block


# Tried in this order, each on the rounds the one before made; with the limit line it reports.
SMALLER = (
    (short_notes, "the notes of the turn's calls over a step's limit shortened"),
    (folded, "the turn's calls over a step's limit left out, counted in one note"),
    (terse, "the turn's digests without the items they list"),
)
