"""Looking back: the conversation index follows the stored messages (written, streamed,
regenerated, deleted), on an SQLite with FTS5 and on one without; search by words, by time,
less what the caller has; reading a stretch; threads stored before the index; time
expressions."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from comfyui_assistant.core.memory import recall
from comfyui_assistant.core.memory.when import WhenError, time_range
from comfyui_assistant.core.store.conversation_index import MAX_INDEXED_CHARS, passages_of
from comfyui_assistant.core.store.embeddings import NO_EMBEDDINGS
from comfyui_assistant.core.store.migrations import MIGRATIONS, NO_FTS5, migrate
from comfyui_assistant.core.store.store import DB_NAME, Store
from comfyui_assistant.core.store.threads import Threads
from comfyui_assistant.core.tokens.tokens import counter_for

COUNTER = counter_for(None)


def said(mid: str, role: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": role, "parts": [{"type": "text", "text": text}]}


HISTORY = [
    said("u1", "user", "Which upscaler should I use for old family photos?"),
    said("a1", "assistant", "Use 4x-UltraSharp with ImageUpscaleWithModel: it keeps skin."),
    said("u2", "user", "My daughter started painting again, watercolours mostly."),
    said("a2", "assistant", "Lovely! Shall we build an img2img workflow for her paintings?"),
    said("u3", "user", "Later. Set the sampler to dpmpp_2m with 30 steps."),
    said("a3", "assistant", "Done: KSampler now uses dpmpp_2m, 30 steps."),
]


@pytest.fixture(autouse=True)
def by_words_only(monkeypatch) -> None:
    """Search by words: these tests are about the index of words (by meaning too:
    tests/test_semantic_recall.py)."""
    monkeypatch.setenv(NO_EMBEDDINGS, "1")


@pytest.fixture(params=["fts5", "no fts5"])
async def store(request, monkeypatch, tmp_path) -> AsyncIterator[Store]:
    """A store on this SQLite (FTS5 built in), and as on an SQLite built without FTS5."""
    if request.param == "no fts5":
        monkeypatch.setenv(NO_FTS5, "1")
    opened = await Store.open(tmp_path)
    assert opened.full_text is (request.param == "fts5")
    yield opened
    await opened.close()


async def indexed(store: Store, thread_id: str) -> list[tuple[str, str]]:
    """(message id, passage) of the thread, in order; checked against the FTS5 index."""
    rows = await store.fetchall(
        "SELECT id, message_id, text FROM message_passages WHERE thread_id = ? ORDER BY id",
        (thread_id,),
    )
    if store.full_text:
        fts = await store.fetchall("SELECT rowid, text FROM message_index ORDER BY rowid")
        everything = await store.fetchall("SELECT id, text FROM message_passages ORDER BY id")
        assert [tuple(r) for r in fts] == [tuple(r) for r in everything]  # in step
    return [(r[1], r[2]) for r in rows]


async def found(store: Store, query: str, **kw: Any) -> list[str]:
    return [hit.message_id for hit in await recall.search(store, "t1", query, **kw)]


async def test_messages_are_indexed_when_stored_and_found_by_their_words(store):
    await Threads(store).sync("t1", HISTORY)
    assert [mid for mid, _ in await indexed(store, "t1")] == [m["id"] for m in HISTORY]
    assert await found(store, "which upscaler for the photos?") == ["u1"]
    assert (await found(store, "what did she take up? painting"))[0] == "u2"
    hits = await recall.search(store, "t1", "sampler steps dpmpp_2m")
    assert {h.message_id for h in hits} == {"u3", "a3"}
    assert hits[0].score >= hits[1].score > 0
    assert (hits[0].role, hits[0].position) in {("user", 4), ("assistant", 5)}
    assert await found(store, "what did we say about it") == []  # common words name nothing
    assert await found(store, "spaceship") == []
    if store.full_text:  # porter stemming: "paintings" finds "painting"
        assert await found(store, "paintings daughters") == ["u2", "a2"]


async def test_exclusion_and_limit(store):
    await Threads(store).sync("t1", HISTORY)
    assert set(await found(store, "dpmpp_2m")) == {"u3", "a3"}
    assert await found(store, "dpmpp_2m", exclude_ids={"a3"}) == ["u3"]
    assert await found(store, "dpmpp_2m", exclude_ids=["u3", "a3"]) == []
    assert len(await found(store, "dpmpp_2m", limit=1)) == 1


async def test_search_by_time(store):
    await Threads(store).sync("t1", HISTORY)
    may = datetime(2025, 5, 14, 10).timestamp()
    june = datetime(2025, 6, 2, 18).timestamp()
    await store.write(lambda db: db.execute(
        "UPDATE messages SET created_at = CASE WHEN position < 2 THEN ? ELSE ? END", (may, june)
    ))  # fmt: skip
    words = "upscaler ultrasharp painting lovely sampler ksampler"
    everything = await found(store, words, limit=10)
    assert set(everything) == {"u1", "a1", "u2", "a2", "u3", "a3"}
    start, end = time_range("in may", datetime(2025, 6, 10))
    assert set(await found(store, words, after=start, before=end)) == {"u1", "a1"}
    start, end = time_range("2025-06-01..2025-06-05", datetime(2025, 6, 10))
    assert set(await found(store, words, after=start, before=end)) == {"u2", "a2", "u3", "a3"}
    assert await found(store, words, before=may) == []
    assert await found(store, words, after=june + 1) == []


async def test_the_index_follows_answers_regenerates_and_deletes(store):
    threads = Threads(store)
    await threads.sync("t1", HISTORY[:5])
    # an answer streams (partial saves), then is saved whole: only the last words stay
    partial = said("a3", "assistant", "Done: KSampler now")
    await threads.save_answer("t1", partial, 5, "streaming")
    assert await found(store, "ksampler") == ["a3"]
    await threads.save_answer("t1", said("a3", "assistant", "Changed the euler sampler."), 5,
                              "complete")  # fmt: skip
    assert await found(store, "ksampler") == []
    assert await found(store, "euler") == ["a3"]
    # a regenerate of the second answer: it and what followed go, the new answer is indexed
    regenerated = said("a2b", "assistant", "A gouache workflow then?")
    await threads.sync("t1", [*HISTORY[:3], regenerated], replaces="a2")
    assert [mid for mid, _ in await indexed(store, "t1")] == ["u1", "a1", "u2", "a2b"]
    assert await found(store, "euler") == [] and await found(store, "img2img") == []
    assert await found(store, "gouache") == ["a2b"]
    # another thread with the same words, then this one deleted: the other one stays found
    await threads.sync("t2", [said("x1", "user", "gouache upscaler")])
    assert await threads.delete("t1")
    assert await indexed(store, "t1") == []
    assert [h.message_id for h in await recall.search(store, "t2", "gouache")] == ["x1"]
    assert await found(store, "gouache") == []


async def test_tool_calls_are_indexed_by_their_digest_not_their_output(store):
    call = {
        "type": "tool-getNodeDefinition", "toolCallId": "c1", "state": "output-available",
        "input": {"nodeType": "LatentUpscaleBy"},
        "output": {"type": "LatentUpscaleBy", "inputs": [{"name": "zebra_secret"}]},
    }  # fmt: skip
    answer = {"id": "a1", "role": "assistant", "parts": [{"type": "step-start"}, call,
              {"type": "text", "text": "It scales the latent."}]}  # fmt: skip
    assert passages_of(answer) == [
        "getNodeDefinition LatentUpscaleBy -> 1 input (recall: c1) It scales the latent."
    ]
    await Threads(store).sync("t1", [said("u1", "user", "latent upscale?"), answer])
    assert await found(store, "LatentUpscaleBy") == ["a1"]
    assert await found(store, "zebra_secret") == []


def test_long_messages_are_split_into_sentence_groups():
    sentence = "The sampler ran thirty steps with a karras schedule on the portrait. "
    message = said("a1", "assistant", sentence * 40 + "\n\n" + "x" * 5000)
    passages = passages_of(message)
    prose = [p for p in passages if "portrait" in p]
    assert len(prose) == 8
    assert all(p.endswith("portrait.") for p in prose)  # cut at sentence ends
    assert all(60 <= COUNTER.text(p) <= 120 for p in prose)  # ~60-120 tokens
    assert "".join(passages).count("x") == 5000  # a run without spaces is cut, not lost


async def test_reading_a_stretch_around_a_message(store):
    await Threads(store).sync("t1", HISTORY)
    stretch = await recall.read(store, "t1", around="u2", max_tokens=40)
    assert stretch is not None
    ids = [m.message_id for m in stretch.messages]
    assert "u2" in ids and len(ids) < len(HISTORY)
    assert ids == sorted(ids, key=[m["id"] for m in HISTORY].index)  # in order
    assert "user: My daughter started painting again" in stretch.text
    whole = await recall.read(store, "t1", around="u2", max_tokens=1000)
    assert whole is not None and len(whole.messages) == len(HISTORY)
    assert await recall.read(store, "t1", around="nope") is None
    cut = await recall.read(store, "t1", around="u1", max_tokens=5)
    assert cut is not None and [m.message_id for m in cut.messages] == ["u1"]
    assert cut.messages[0].text.endswith("…")
    span = await recall.read(store, "t1", positions=(2, 3))
    assert span is not None and [m.message_id for m in span.messages] == ["u2", "a2"]


async def test_threads_stored_before_the_index_are_indexed_on_their_first_search(
    tmp_path: Path,
):
    async with aiosqlite.connect(tmp_path / DB_NAME) as old:
        await migrate(old, MIGRATIONS[:8])  # the schema before the index
        await old.execute(
            "INSERT INTO threads (id, title, created_at, updated_at) VALUES ('old', '', 1, 1)"
        )
        for position, message in enumerate(HISTORY):
            await old.execute(
                "INSERT INTO messages (thread_id, id, position, role, parts, created_at, "
                "updated_at) VALUES ('old', ?, ?, ?, ?, 1, 1)",
                (message["id"], position, message["role"], json.dumps(message["parts"])),
            )
        await old.commit()
    store = await Store.open(tmp_path)
    try:
        waiting = await store.fetchall("SELECT thread_id FROM unindexed_threads")
        assert [r[0] for r in waiting] == ["old"]
        hits = await recall.search(store, "old", "watercolours")
        assert [h.message_id for h in hits] == ["u2"]
        assert await store.fetchall("SELECT thread_id FROM unindexed_threads") == []
        await Threads(store).sync("new", [said("n1", "user", "watercolours")])
        assert await store.fetchall("SELECT thread_id FROM unindexed_threads") == []
    finally:
        await store.close()


NOW = datetime(2025, 5, 21, 15, 30)  # a Wednesday


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("today", "2025-05-21", "2025-05-22"),
        ("Yesterday", "2025-05-20", "2025-05-21"),
        ("last week", "2025-05-12", "2025-05-19"),
        ("this month", "2025-05-01", "2025-06-01"),
        ("last month", "2025-04-01", "2025-05-01"),
        ("in May", "2025-05-01", "2025-06-01"),
        ("june", "2024-06-01", "2024-07-01"),  # the latest June: last year's
        ("tuesday", "2025-05-20", "2025-05-21"),
        ("on Wednesday", "2025-05-14", "2025-05-15"),  # before today
        ("3 days ago", "2025-05-18", "2025-05-19"),
        ("a week ago", "2025-05-12", "2025-05-19"),
        ("past 2 weeks", "2025-05-05", "2025-05-21 15:30"),
        ("2025-05-14", "2025-05-14", "2025-05-15"),
        ("14 May", "2025-05-14", "2025-05-15"),
        ("May 14, 2024", "2024-05-14", "2024-05-15"),
        ("2025-05", "2025-05-01", "2025-06-01"),
        ("2024", "2024-01-01", "2025-01-01"),
        ("2025-05-01..2025-05-14", "2025-05-01", "2025-05-15"),
        ("from march to april", "2025-03-01", "2025-05-01"),
        ("between 1 may and 10 may", "2025-05-01", "2025-05-11"),
        ("since May", "2025-05-01", "2025-05-21 15:30"),
        ("last year", "2024-01-01", "2025-01-01"),
    ],
)
def test_time_expressions(text: str, start: str, end: str) -> None:
    assert time_range(text, NOW) == (
        datetime.fromisoformat(start).timestamp(),
        datetime.fromisoformat(end).timestamp(),
    )


@pytest.mark.parametrize("text", ["next week", "31 feb", "banana", "2025-13-01", "may june 2"])
def test_time_expressions_not_understood_say_what_is(text: str) -> None:
    with pytest.raises(WhenError, match='Use forms like "today", "yesterday"'):
        time_range(text, NOW)


def test_a_pasted_document_is_indexed_up_to_a_bound():
    paste = said("u1", "user", "Here is my novel. " + "lorem ipsum dolor. " * 300_000)  # 5.7 MB
    passages = passages_of(paste)
    assert passages[0].startswith("Here is my novel.")
    assert MAX_INDEXED_CHARS - 200 < sum(len(p) + 1 for p in passages) <= MAX_INDEXED_CHARS + 1
