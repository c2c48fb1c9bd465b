"""Pieces of text packed, in order, into groups under a token budget: the one loop behind a
text's passages (core/tokens/passages.py), a message's indexed passages
(core/store/conversation_index.py) and a transcript's pieces for the summarizer
(core/summary/summarizer.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

# Whether a piece starts a new group: given the group's size so far and its size with the piece.
Closes = Callable[[int, int], bool]


def pack(
    pieces: Iterable[tuple[str, int]],
    sep: str,
    closes: Closes,
    count: Callable[[str], int] | None = None,
) -> list[tuple[str, int]]:
    """`pieces` (each a text and its tokens) joined by `sep` into groups, each with its size:
    a piece joins the group before it unless `closes` says otherwise. A group's size is the
    sum of its pieces' tokens, or, with `count`, the count of its text whole (the sum of its
    pieces' counts can be less); a group's first piece is then sized as given."""
    out: list[tuple[str, int]] = []
    group: list[str] = []
    size = 0
    for text, tokens in pieces:
        if group:
            grown = size + tokens if count is None else count(sep.join([*group, text]))
            if not closes(size, grown):
                group.append(text)
                size = grown
                continue
            out.append((sep.join(group), size))
        group, size = [text], tokens
    if group:
        out.append((sep.join(group), size))
    return out


def aiming(aim: int, most: int) -> Closes:
    """Groups of about `aim` tokens: a group takes no more pieces once it reaches `aim`, nor
    one that would take it past `most`."""
    return lambda size, grown: size >= aim or grown > most


def within(room: int) -> Closes:
    """Groups of at most `room` tokens (a single larger piece is a group of its own)."""
    return lambda _, grown: grown > room
