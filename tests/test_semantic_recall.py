"""Looking back by meaning: with wordllama installed (the `semantic` extra), `recall.search`
fuses the ranking by words with one by meaning, so a question that shares no word with its
answer finds it; without it (or COMFY_ASSISTANT_NO_EMBEDDINGS=1) search is by words only. The
passages' vectors are computed at the first search, stored once, and go with their passages;
exclusions and time ranges hold on the side of meaning too; a model that fails to load is
reported once and search goes on by words."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.memory import recall
from comfyui_assistant.core.store import embeddings
from comfyui_assistant.core.store.embeddings import NO_EMBEDDINGS
from comfyui_assistant.core.store.migrations import NO_FTS5
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.core.store.threads import Threads

from .helpers import chat_body, user
from .scripted_provider import text_reply
from .test_recall import HISTORY as WORDS_HISTORY
from .test_recall import said
from .test_recall_tool import call, calls_reply, searches

# (never skipped: scripts/setup installs the semantic extra, and a test that did not run
# must not pass)
assert importlib.util.find_spec("wordllama") is not None, (
    "wordllama is not installed: pip install -e '.[semantic]' (scripts/setup does)"
)


HISTORY = [
    *WORDS_HISTORY,  # (tests/test_recall.py's, then)
    said("u4", "user", "I'm allergic to shellfish, so no seafood in the food photos."),
    said("a4", "assistant", "Noted: the food shots will avoid prawns and mussels."),
    said("u5", "user", "The dog's name is Pixel and she is a beagle."),
    said("a5", "assistant", "Pixel it is. Want a portrait of her in the garden?"),
    said("u6", "user", "Backups go to the external SSD every Friday."),
    said("a6", "assistant", "Good habit: the output folder is included."),
]
IDS = {m["id"] for m in HISTORY}
# Questions that share no word with their answer (after stemming, common words aside).
PUPPY = "What breed is our puppy?"  # -> u5
EAT = "What can't I eat?"  # -> u4


@pytest.fixture(params=["fts5", "no fts5"])
async def store(request, monkeypatch, tmp_path) -> AsyncIterator[Store]:
    """A store with HISTORY as thread t1, on this SQLite and as on one without FTS5."""
    monkeypatch.delenv(NO_EMBEDDINGS, raising=False)
    if request.param == "no fts5":
        monkeypatch.setenv(NO_FTS5, "1")
    opened = await Store.open(tmp_path)
    await Threads(opened).sync("t1", HISTORY)
    yield opened
    await opened.close()


async def found(store: Store, query: str, **kw: Any) -> list[str]:
    return [hit.message_id for hit in await recall.search(store, "t1", query, **kw)]


async def vectors(store: Store) -> int:
    """How many vectors are stored; checked to belong to passages that exist."""
    (orphans,) = await store.fetchone(
        "SELECT COUNT(*) FROM passage_vectors WHERE passage_id NOT IN "
        "(SELECT id FROM message_passages)"
    ) or (0,)
    assert orphans == 0
    (count,) = await store.fetchone("SELECT COUNT(*) FROM passage_vectors") or (0,)
    return int(count)


async def passages(store: Store) -> int:
    (count,) = await store.fetchone("SELECT COUNT(*) FROM message_passages") or (0,)
    return int(count)


async def embedded_by(search: Any) -> int:
    """How many texts the model embedded while `search` (awaitable) ran."""
    model = await embeddings.embedder()
    assert model is not None
    before = model.texts_embedded
    await search
    return model.texts_embedded - before


async def test_a_paraphrase_is_found_by_meaning_and_not_by_words_alone(store, monkeypatch):
    monkeypatch.setenv(NO_EMBEDDINGS, "1")
    assert await found(store, PUPPY) == [] and await found(store, EAT) == []
    assert await vectors(store) == 0  # by words only, none is computed
    monkeypatch.delenv(NO_EMBEDDINGS)
    assert (await found(store, PUPPY))[0] == "u5"
    assert (await found(store, EAT))[0] == "u4"
    # words still lead where they match: what both rankings put first comes first
    hits = await recall.search(store, "t1", "watercolours painting")
    assert hits[0].message_id == "u2"
    # first by words and by meaning
    assert hits[0].score == pytest.approx((1 + recall.SEMANTIC_WEIGHT) / (recall.RRF_K + 1))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.message_id for h in hits}) == len(hits) == 5  # one hit per message
    assert await found(store, "what did we say about it") == []  # common words name nothing


async def test_exclusions_and_time_ranges_hold_by_meaning(store):
    assert "u5" not in await found(store, PUPPY, exclude_ids={"u5"})
    everything = await found(store, PUPPY, limit=20, exclude_ids=["u5", "a5"])
    assert set(everything) == IDS - {"u5", "a5"}  # ranked by meaning: every other one
    may = datetime(2025, 5, 14, 10).timestamp()
    june = datetime(2025, 6, 2, 18).timestamp()
    await store.write(lambda db: db.execute(
        "UPDATE messages SET created_at = CASE WHEN id IN ('u5', 'a5') THEN ? ELSE ? END",
        (june, may),
    ))  # fmt: skip
    assert set(await found(store, PUPPY, limit=20, before=june)) == IDS - {"u5", "a5"}
    assert await found(store, PUPPY, limit=20, after=june) == ["u5", "a5"]
    assert await found(store, PUPPY, after=june, exclude_ids={"u5"}) == ["a5"]
    assert await found(store, PUPPY, before=may) == []  # nothing in the range
    # preferred: May's matches by words first; by meaning every May message is near in some
    # degree, and those would fill the result
    may_range = (may - 3600, may + 3600)
    assert (await found(store, "beagle Pixel", prefer=may_range))[0] == "u5"
    words = await found(store, "upscaler beagle", prefer=may_range, limit=2)
    assert words == ["u1", "u5"]  # the word match of May, then the thread's best


async def test_at_weight_zero_meaning_is_not_used(store, monkeypatch):
    monkeypatch.setattr(recall, "SEMANTIC_WEIGHT", 0.0)
    assert await found(store, PUPPY) == []
    assert await vectors(store) == 0  # nor computed


async def test_vectors_are_computed_at_the_first_search_and_stored_once(store):
    assert await vectors(store) == 0  # writing messages computes none
    count = await passages(store)
    assert await embedded_by(found(store, PUPPY)) == count
    assert await vectors(store) == count
    assert await embedded_by(found(store, PUPPY)) == 0
    assert await embedded_by(found(store, EAT, exclude_ids={"u4"})) == 0
    await Threads(store).sync("t1", [*HISTORY, said("u7", "user", "Our cat is called Miso.")])
    assert await embedded_by(found(store, PUPPY)) == 1  # only the new message's passage
    assert await vectors(store) == count + 1


async def test_vectors_go_with_their_passages(store):
    threads = Threads(store)
    await found(store, PUPPY)
    assert await vectors(store) == await passages(store) == len(HISTORY)
    # an answer saved again (as when it streams, then ends): its old passage's vector goes
    await threads.save_answer("t1", said("a5", "assistant", "A beagle puppy, noted."), 9,
                              "complete")  # fmt: skip
    assert await vectors(store) == len(HISTORY) - 1
    # a regenerated answer: it and what followed go, vectors included
    regenerated = said("a4b", "assistant", "No crustaceans in any shot then.")
    await threads.sync("t1", [*HISTORY[:7], regenerated], replaces="a4")
    assert await vectors(store) == 7  # u1 .. u4's
    assert await embedded_by(found(store, EAT)) == 1  # a4b's, at the next search
    assert "a4" not in await found(store, "shellfish prawns mussels", limit=20)
    # a deleted thread: every vector goes
    assert await threads.delete("t1")
    assert await vectors(store) == 0


async def test_the_tool_finds_a_paraphrase(assistant, provider, sdk, monkeypatch):
    monkeypatch.delenv(NO_EMBEDDINGS, raising=False)
    provider.enqueue(
        calls_reply(call({"query": PUPPY, "limit": 1}, "s1")),
        text_reply("A beagle [1]."),
    )
    question = user("Remind me about our pet?", "u7")
    status, body = await assistant.chat(chat_body(*HISTORY, question))
    assert status == 200
    (part,) = searches(sdk.check(body)["message"])
    docs = part["output"]["documents"]
    # the best match, with the messages around it
    assert [(d["metadata"]["messageId"], d["metadata"]["matched"]) for d in docs] == [
        ("a4", False), ("u5", True), ("a5", False)
    ]  # fmt: skip
    assert docs[1]["contents"] == "The dog's name is Pixel and she is a beagle."


BROKEN_MODEL = """
class WordLlama:
    @staticmethod
    def load(**options):
        raise OSError("weights unreadable")
"""
SEARCHES = """
import asyncio, json, logging, sys, tempfile
from pathlib import Path
from comfyui_assistant.core.memory import recall
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.core.store.threads import Threads

records = []
handler = logging.Handler()
handler.emit = records.append
logging.getLogger("comfyui_assistant").addHandler(handler)

async def main():
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder))
        await Threads(store).sync("t1", json.loads(sys.argv[1]))
        found = [[h.message_id for h in await recall.search(store, "t1", query)]
                 for query in ("watercolours", "What breed is our puppy?")]
        await store.close()
    warnings = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    print(json.dumps({"found": found, "warnings": warnings}))

asyncio.run(main())
"""


def test_a_model_that_fails_to_load_is_reported_once_and_words_are_searched(tmp_path: Path):
    """A broken wordllama (here one whose load raises, first on the path) in a process of its
    own: the assistant's model is loaded once per process."""
    (tmp_path / "wordllama").mkdir()
    (tmp_path / "wordllama" / "__init__.py").write_text(BROKEN_MODEL)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    env.pop(NO_EMBEDDINGS, None)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SEARCHES), json.dumps(HISTORY)],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["found"] == [["u2"], []]  # by words only
    (warning,) = result["warnings"]
    assert "wordllama could not be loaded (OSError: weights unreadable)" in warning
    assert "searched by their words only" in warning


LOGGING_AFTER_LOAD = """
import asyncio, json, logging
from comfyui_assistant.core.store import embeddings

root = logging.getLogger()
before = (root.level, len(root.handlers))
model = asyncio.run(embeddings.embedder())
print(json.dumps({"loaded": model is not None, "before": before,
                  "after": (root.level, len(root.handlers))}))
"""


def test_loading_the_model_leaves_the_process_logging_as_it_was():
    # wordllama calls logging.basicConfig(level=INFO) when imported: in the standalone server
    # every library's INFO lines (each HTTP request) then went to the terminal
    env = {k: v for k, v in os.environ.items() if k != NO_EMBEDDINGS}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(LOGGING_AFTER_LOAD)],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["loaded"] is True
    assert result["after"] == result["before"] == [logging.WARNING, 0]
