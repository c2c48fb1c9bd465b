"""What `searchConversation` returns for a search: each hit with the message before and after
it, so that a match comes with what it answered or what answered it (a public
long-conversation benchmark: 0.681 of the evidence found with the neighbours of the top 5
hits, against 0.620 for the top 15 hits alone, the same number of messages). Hits that touch
or overlap are merged into one stretch, each message shown once; the stretch of the best hit
comes first, its messages in order. The hits are always shown (their matching passage); a
neighbour (its text, cut to NEIGHBOUR_CHARS) only while the result stays within
RESULT_TOKENS, the best hit's neighbours first."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from ..store import Store
from ..tokens import estimate_tokens
from . import recall

NEIGHBOUR_CHARS = 500  # of a message shown beside a hit (about 125 tokens)
RESULT_TOKENS = 1_600  # a search's documents together, at most (estimated), hits apart


@dataclass(frozen=True)
class Shown:
    said: recall.Said
    matched: bool  # a hit (its passage), or a neighbour of one (its text)


async def with_neighbours(
    store: Store,
    thread_id: str,
    hits: Sequence[recall.Hit],
    left_out: Collection[str] = (),
    budget: int = RESULT_TOKENS,
) -> list[Shown]:
    """`hits` (best first) and their neighbours, less the messages `left_out`, in stretches
    (the module docstring)."""
    shown = {h.position: Shown(_said(h), True) for h in hits}
    wanted = {p for h in hits for p in (h.position - 1, h.position + 1)} - set(shown)
    found = await recall.at_positions(store, thread_id, wanted)
    around = {m.position: m for m in found if m.message_id not in left_out}
    used = sum(estimate_tokens(h.text) for h in hits)
    for hit in hits:
        for position in (hit.position - 1, hit.position + 1):
            message = around.get(position)
            if message is None or position in shown:
                continue
            text = cut(message.text)
            if used + (cost := estimate_tokens(text)) <= budget:
                shown[position] = Shown(replace(message, text=text), False)
                used += cost
    rank = {h.position: i for i, h in enumerate(hits)}
    stretches: list[list[int]] = []
    for position in sorted(shown):
        if stretches and position == stretches[-1][-1] + 1:
            stretches[-1].append(position)
        else:
            stretches.append([position])
    stretches.sort(key=lambda s: min(rank.get(p, len(hits)) for p in s))
    return [shown[p] for stretch in stretches for p in stretch]


def _said(hit: recall.Hit) -> recall.Said:
    return recall.Said(hit.message_id, hit.position, hit.role, hit.created_at, hit.text)


def cut(text: str, chars: int = NEIGHBOUR_CHARS) -> str:
    """`text` within `chars`, cut at a word and marked."""
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " …"
