"""Looking back by meaning: does a question find the message that answers it when the two share
no word? Recall@5 of `recall.search` itself (what `searchConversation` and per-turn recall use)
by words only (BM25, FTS5 with porter stemming: COMFY_ASSISTANT_NO_EMBEDDINGS=1), by meaning
only (its semantic side, `recall.by_meaning`: wordllama's static embeddings, stored vectors)
and fused (what it does where wordllama is installed), on paraphrased questions and on keyword
questions.

    PYTHONPATH=... .venv/bin/python bench/recall_paraphrase.py [--site DIR] [--quick]

The thread: 30 facts said in passing (a daughter who paints again, the upscaler agreed on, a
deadline, an allergy, a licence decision, ...) among `--filler` messages of graph work
(bench/recall.py's generator), stored through `Threads.sync` in a real store. Each fact has a
paraphrase question that shares no content word with it (checked here, after stemming:
"what hobby did my kid pick back up?" for "My daughter started painting again") and a keyword
question (the words a user who remembers would type). A hit: the fact's message among the
five results.

wordllama is an optional dependency (the `semantic` extra); `--site DIR` names another folder
where it is installed. Without it the semantic and fused lines say "not measured". TARGET
lines report the figures (the choice between lexical, semantic and both was made on them:
docs/DESIGN.md §4). `--quick`: 100 filler messages (CI).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from comfyui_assistant.core.memory import recall
from comfyui_assistant.core.store import embeddings
from comfyui_assistant.core.store.embeddings import NO_EMBEDDINGS
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.core.store.threads import Threads
from recall import thread as filler_thread  # bench/recall.py's (this script's folder)

# (fact, paraphrase sharing no content word, keyword question)
FACTS: list[tuple[str, str, str]] = [
    ("My daughter started painting again, mostly watercolours of birds.",
     "What hobby did my kid pick back up?", "daughter painting watercolours"),
    ("We agreed to use 4x-UltraSharp for every upscale from now on.",
     "Which enlarger did we settle on?", "which upscale model did we agree on"),
    ("I moved to Lisbon last spring, the light here is amazing.",
     "Which city do I live in these days?", "where did I move, Lisbon"),
    ("The client wants the bakery logo in teal and cream, no gradients.",
     "What colours did the customer ask for on the bread shop emblem?", "bakery logo colours"),
    ("My laptop has an RTX 3060 with 12 GB of VRAM.",
     "How much graphics memory does my computer have?", "VRAM of my laptop"),
    ("Never run the queue without asking me first.",
     "What rule did I give about starting generations?", "run the queue without asking"),
    ("Deadline for the wedding album is the 14th of June.",
     "When is the marriage photo book due?", "wedding album deadline"),
    ("I prefer portrait orientation, 832 by 1216.",
     "Which picture shape do I like?", "portrait orientation 832"),
    ("Our cat Miso knocked the tablet off the desk again.",
     "What did the pet break?", "cat Miso tablet"),
    ("Keep the LoRA strength at 0.7, higher values burn the face.",
     "How strong should the style adapter be set?", "LoRA strength"),
    ("I'm allergic to shellfish, so no seafood in the food photos.",
     "What can't I eat?", "allergic shellfish seafood"),
    ("The exhibition opens at the Tate Modern in October.",
     "Where and when is the gallery show?", "exhibition Tate Modern October"),
    ("My brother Tom is getting married in Porto.",
     "Which sibling has a wedding coming up?", "brother Tom married Porto"),
    ("We switched the scheduler to karras because the default looked noisy.",
     "What sampling timetable did we go with, and for what reason?", "scheduler karras"),
    ("I teach piano on Tuesday evenings, so I'm offline then.",
     "When am I unavailable each week?", "piano Tuesday evenings"),
    ("The mural for the school must avoid any religious symbols.",
     "What should the wall art for the kids' academy leave out?", "mural school religious"),
    ("Backups go to the external SSD every Friday.",
     "Where do I keep copies of my files, and how often?", "backups external SSD Friday"),
    ("I finally quit smoking three months ago.",
     "What habit did I give up?", "quit smoking"),
    ("The anime checkpoint ponyDiffusion handles hands badly.",
     "Which model struggles with fingers?", "ponyDiffusion hands"),
    ("Budget for cloud GPUs is 40 euros a month.",
     "How much can I spend on rented compute?", "cloud GPU budget euros"),
    ("My grandmother's recipe book is what we are restoring.",
     "Whose cooking notes are we repairing?", "grandmother recipe book restoring"),
    ("The festival poster should feature a lighthouse at night.",
     "What scene goes on the concert flyer?", "festival poster lighthouse"),
    ("I run a small pottery studio in the countryside.",
     "What kind of business do I own?", "pottery studio"),
    ("Use the negative prompt 'blurry, extra limbs, watermark' everywhere.",
     "Which unwanted terms do we always exclude?", "negative prompt watermark"),
    ("We decided against Flux for the book because of its licence.",
     "Why did we reject that image generator for the novel?", "Flux licence book"),
    ("My partner is a nurse and works night shifts.",
     "What job does my spouse do?", "partner nurse night shifts"),
    ("Save every final render as PNG with the workflow embedded.",
     "What file format for finished outputs?", "final render PNG embedded"),
    ("The dog's name is Pixel and she is a beagle.",
     "What breed is our puppy?", "dog Pixel beagle"),
    ("I'm colour-blind, red and green look the same to me.",
     "Which vision problem do I have?", "colour-blind red green"),
    ("Video clips should be 81 frames at 16 fps.",
     "How long are the movies supposed to be?", "video clips frames fps"),
]  # fmt: skip
K = 5


def stems(text: str) -> set[str]:
    """Content words, crudely stemmed (a check that a paraphrase shares none)."""
    out = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in recall.STOPWORDS or len(word) < 3:
            continue
        for suffix in ("ing", "ed", "es", "s", "er", "y"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


def messages(filler: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The thread, and each fact's message id."""
    out = filler_thread(filler, 7)
    ids = []
    step = max(1, len(out) // len(FACTS))
    for i, (fact, _, _) in enumerate(FACTS):
        mid = f"fact-{i}"
        role = "user" if i % 3 else "assistant"
        out.insert(i * (step + 1), {"id": mid, "role": role,
                                    "parts": [{"type": "text", "text": fact}]})  # fmt: skip
        ids.append(mid)
    return out, ids


async def ranked(store: Store, method: str, question: str) -> list[str]:
    """The ids of the first K messages `recall.search` (or its semantic side) finds."""
    if method == "semantic":
        model = await embeddings.embedder()
        assert model is not None
        everything = (-float("inf"), float("inf"))
        nearest = await recall.by_meaning(store, model, "t", question, everything)
        return [mid for _, mid, _ in recall.per_message(nearest, set(), K)]
    if method == "lexical":
        os.environ[NO_EMBEDDINGS] = "1"
    try:
        return [h.message_id for h in await recall.search(store, "t", question, limit=K)]
    finally:
        os.environ.pop(NO_EMBEDDINGS, None)


async def run(filler: int) -> None:
    thread, fact_ids = messages(filler)
    shared = [(i, stems(f) & stems(p)) for i, (f, p, _) in enumerate(FACTS)]
    shared = [(i, words) for i, words in shared if words]
    assert not shared, f"paraphrases that share words with their fact: {shared}"
    methods = ["lexical"]
    if await embeddings.embedder() is not None:
        methods += ["semantic", "both"]
    absent = (
        "not measured (no embeddings: wordllama is not installed (pip install -e '.[semantic]', "
        f"or --site), or {NO_EMBEDDINGS}=1)"
    )
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder))
        await Threads(store).sync("t", thread)
        (passages,) = await store.fetchone("SELECT COUNT(*) FROM message_passages") or (0,)
        print(f"{len(thread)} messages ({len(FACTS)} facts), {passages} passages; FTS5: "
              f"{store.full_text}; methods: {', '.join(methods)}")  # fmt: skip
        if len(methods) > 1:
            start = time.perf_counter()
            await recall.search(store, "t", FACTS[0][2])
            print(f"the first search by meaning computed and stored the {passages} vectors: "
                  f"{(time.perf_counter() - start) * 1000:.0f} ms")  # fmt: skip
        results: dict[tuple[str, str], int] = {}
        for kind, column in (("paraphrase", 1), ("keyword", 2)):
            for method in methods:
                results[kind, method] = 0
                for fact_id, fact in zip(fact_ids, FACTS, strict=True):
                    results[kind, method] += fact_id in await ranked(store, method, fact[column])
        await store.close()
    n = len(FACTS)
    for kind in ("paraphrase", "keyword"):
        for method in ("lexical", "semantic", "both"):
            hits = results.get((kind, method))
            value = absent if hits is None else f"{hits}/{n} ({hits / n:.0%})"
            print(f"TARGET {method}_{kind}_recall@{K}={value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--filler", type=int, default=400, help="messages of graph work")
    parser.add_argument("--site", help="a folder where wordllama is installed")
    parser.add_argument("--quick", action="store_true", help="100 filler messages (CI)")
    args = parser.parse_args()
    if args.site:
        sys.path.insert(0, args.site)
    asyncio.run(run(100 if args.quick else args.filler))


if __name__ == "__main__":
    sys.exit(main())
