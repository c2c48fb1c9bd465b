"""Looking back, how matches are ranked and shown, on a real store with FTS5 and without: a
thread's words are weighed by that thread's own statistics, whatever other threads the store
holds; a time is a preference topped up from the rest of the thread; a hit comes with the
messages around it, merged where they touch, within the result's budget; the ranking by
meaning counts for SEMANTIC_WEIGHT of one by words (none: it is not even computed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import pytest
from comfyui_assistant.core.memory import neighbours, recall
from comfyui_assistant.core.store.migrations import NO_FTS5
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.core.store.threads import Threads

from .test_recall import by_words_only, said  # noqa: F401 (by words only: an autouse fixture)

# Caroline is named in most of the thread; the painting once.
CAROLINE = [
    said("u1", "user", "Caroline here again, good morning!"),
    said("a1", "assistant", "Morning Caroline, what are we making today?"),
    said("u2", "user", "Caroline's sister picked up painting again, mostly birds."),
    said("a2", "assistant", "Nice. Caroline, do you want a bird style for your renders?"),
    said("u3", "user", "Caroline is tired of the upscaler, it blurs faces."),
    said("a3", "assistant", "Then try 4x-UltraSharp, Caroline; it keeps skin."),
    said("u4", "user", "Caroline says bye for now."),
    said("a4", "assistant", "See you soon, Caroline!"),
]
# Other threads of the same store: painting said everywhere, Caroline nowhere.
HARBOUR = "Painting number {}: oil painting of a harbour at dusk."
OTHERS = [[said(f"o{i}", "user", HARBOUR.format(i)) for i in range(30)] for _ in range(3)]


@pytest.fixture(params=["fts5", "no fts5"])
async def store(request, monkeypatch, tmp_path) -> AsyncIterator[Store]:
    """A store on this SQLite and as on one without FTS5, with CAROLINE as thread t1."""
    if request.param == "no fts5":
        monkeypatch.setenv(NO_FTS5, "1")
    opened = await Store.open(tmp_path)
    assert opened.full_text is (request.param == "fts5")
    await Threads(opened).sync("t1", CAROLINE)
    yield opened
    await opened.close()


async def ranking(store: Store, query: str, **kw) -> list[tuple[str, float]]:
    return [(h.message_id, h.score) for h in await recall.search(store, "t1", query, **kw)]


async def test_a_thread_is_ranked_by_its_own_word_statistics(store):
    query = "Caroline painting"
    alone = await ranking(store, query, limit=8)
    # the word the thread says once weighs more than the name it says everywhere
    assert [mid for mid, _ in alone][:1] == ["u2"]
    assert {mid for mid, _ in alone} == {m["id"] for m in CAROLINE}
    for i, thread in enumerate(OTHERS):
        await Threads(store).sync(f"other{i}", thread)
    beside = await ranking(store, query, limit=8)
    assert beside == alone  # the same order and the same scores, whatever the store holds
    assert await ranking(store, "harbour dusk") == []  # nor another thread's messages


async def test_a_time_is_preferred_and_topped_up_from_the_rest(store):
    may = datetime(2025, 5, 14, 10).timestamp()
    june = datetime(2025, 6, 2, 18).timestamp()
    await store.write(lambda db: db.execute(
        "UPDATE messages SET created_at = CASE WHEN position < 4 THEN ? ELSE ? END", (may, june)
    ))  # fmt: skip
    june_range = (june - 3600, june + 3600)
    may_range = (may - 3600, may + 3600)
    # the match of June first, then the thread's best others
    found = [h.message_id for h in await recall.search(store, "t1", "upscaler painting",
                                                       prefer=june_range)]  # fmt: skip
    assert found == ["u3", "u2"]
    # nothing in May matches: the matches of other times, as without a time
    found = [h.message_id for h in await recall.search(store, "t1", "upscaler", prefer=may_range)]
    assert found == ["u3"]
    # a hard range stays one (the engine's)
    assert await ranking(store, "upscaler", after=may_range[0], before=may_range[1]) == []


async def test_hits_come_with_their_neighbours_merged_within_the_budget(store):
    hits = await recall.search(store, "t1", "painting upscaler", limit=2)
    assert {h.message_id for h in hits} == {"u2", "u3"}  # (adjacent: one stretch)
    shown = await neighbours.with_neighbours(store, "t1", hits)
    assert [(s.said.message_id, s.matched) for s in shown] == [
        ("a1", False), ("u2", True), ("a2", False), ("u3", True), ("a3", False)
    ]  # fmt: skip
    assert shown[1].said.text == next(h.text for h in hits if h.message_id == "u2")  # its passage
    assert shown[2].said.text == CAROLINE[3]["parts"][0]["text"]  # a neighbour its text
    # apart: a stretch each, the best hit's first; left out: not shown
    hits = await recall.search(store, "t1", "bye sister", limit=2)
    assert [h.message_id for h in hits] == ["u4", "u2"]
    shown = await neighbours.with_neighbours(store, "t1", hits, left_out={"a4"})
    assert [s.said.message_id for s in shown] == ["a3", "u4", "a1", "u2", "a2"]
    # the budget: hits always, neighbours while they fit (the best hit's first)
    tokens = sum(neighbours.estimate_tokens(h.text) for h in hits)
    a3 = neighbours.estimate_tokens(CAROLINE[5]["parts"][0]["text"])
    shown = await neighbours.with_neighbours(store, "t1", hits, budget=tokens + a3)
    assert [s.said.message_id for s in shown] == ["a3", "u4", "u2"]
    shown = await neighbours.with_neighbours(store, "t1", hits, budget=0)
    assert [s.said.message_id for s in shown] == ["u4", "u2"]


def test_meaning_counts_for_its_weight_and_never_outranks_words():
    by_words = [(i, f"w{i}", 1.0) for i in range(recall.FUSED)]
    by_meaning = [(100, "m", 0.9), (19, "w19", 0.8)]
    fused = recall.fuse(by_words, by_meaning, 0.5)
    scores = {mid: score for _, mid, score in fused}
    assert scores["m"] == pytest.approx(0.5 / (recall.RRF_K + 1))
    assert scores["w19"] == pytest.approx(1 / (recall.RRF_K + 20) + 0.5 / (recall.RRF_K + 2))
    assert scores["w0"] == pytest.approx(1 / (recall.RRF_K + 1))
    # a message found by meaning alone comes after every message found by words
    fused = recall.fuse(by_words, by_meaning)
    assert [mid for _, mid, _ in fused][-1] == "m"
    assert recall.SEMANTIC_WEIGHT < (recall.RRF_K + 1) / (recall.RRF_K + recall.FUSED)
    # at weight 0 it changes nothing
    assert recall.fuse(by_words, by_meaning, 0.0)[: recall.FUSED] == [
        (p, mid, 1 / (recall.RRF_K + rank)) for rank, (p, mid, _) in enumerate(by_words, 1)
    ]
