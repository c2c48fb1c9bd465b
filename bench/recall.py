"""Looking back: how long `recall.search` takes on a long thread (the memory issue's target:
under 20 ms on a 2,000-message thread), by words only and fused with embeddings (wordllama,
where installed: core/store/embeddings.py), with FTS5 and with the fallback of an SQLite without it,
and what the index costs where messages are written.

    PYTHONPATH=... .venv/bin/python bench/recall.py [--messages 2000] [--others 9] [--quick]

A generated thread of `--messages` messages (a user request and an answer per turn, about a
third of the answers with a tool call, 60 days of timestamps) in a store beside `--others`
threads of 500 messages (their words share the index), stored as the panel stores them
(`Threads.sync`, the index written in the same transaction). 24 queries of 2 to 8 words, each
searched three ways: words only, words within one week (`when`), words less the latest 15%
(300 of 2,000: what a request already holds, as the engine will exclude them), each timed per
call (an `await` from the event loop, as a tool call runs it), a warm-up round first.

Also: the time to split a message into its indexed passages, to store one more message on the
long thread (its index included), and to index a thread stored before the index existed (on
its first search).

TARGET lines: search median and p95 under 20 ms with FTS5, by words (`search`) and fused
(`search_fused`), and without FTS5 (reported); fused ones say "not measured" where wordllama
is not installed. `--quick`: a 300-message thread beside 2 others, one round (CI).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from comfyui_assistant.core.memory import recall
from comfyui_assistant.core.store import embeddings
from comfyui_assistant.core.store.conversation_index import passages_of
from comfyui_assistant.core.store.embeddings import NO_EMBEDDINGS
from comfyui_assistant.core.store.migrations import NO_FTS5
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.core.store.threads import Threads

TARGET_MS = 20.0
NOT_MEASURED = f"not measured (wordllama is not installed, or {NO_EMBEDDINGS}=1)"
DAY = 86_400.0
NODES = [
    "KSampler",
    "VAEDecode",
    "CheckpointLoaderSimple",
    "LoraLoader",
    "ControlNetApply",
    "UpscaleModelLoader",
    "ImageUpscaleWithModel",
    "CLIPTextEncode",
    "EmptyLatentImage",
    "VAEDecodeTiled",
    "FaceDetailer",
    "IPAdapterApply",
    "LatentUpscaleBy",
    "SaveImage",
]
TOPICS = ["portrait of an old fisherman", "foggy harbour at dawn", "neon street in the rain",
          "watercolour fox in the snow", "product shot of a perfume bottle", "castle on a cliff",
          "cyberpunk market stall", "children's book illustration of a bear", "film still of a "
          "train station", "logo for a bakery", "astronaut in a sunflower field"]  # fmt: skip
USER = ["Can you make the {topic} sharper? The {node} settings look off.",
        "Let's try {n} steps and cfg {cfg} on the {topic}.",
        "The {topic} came out too dark, what should I change in {node}?",
        "Add a {node} after the sampler, I want the {topic} at 2x.",
        "Use seed {seed} for the {topic} from now on.",
        "Why does {node} fail with out of memory on the {topic}?",
        "Remember that I prefer {sampler} with the karras scheduler.",
        "Switch the checkpoint to {model} for the {topic}."]  # fmt: skip
ANSWER = ["I set {node} to {n} steps at cfg {cfg} with {sampler}.",
          "The {topic} needs more contrast: I raised the denoise to 0.{d} in {node}.",
          "{node} ran out of memory at {w}x{h}; VAEDecodeTiled with tiles of 512 fixes that.",
          "Done: seed {seed} is set on the KSampler, and the batch size is {b}.",
          "For {model} the recommended sampler is {sampler}, {n} steps, guidance 3.5.",
          "I connected the LORA output to the model input of {node}; strength 0.{d}."]  # fmt: skip
SAMPLERS = ["euler", "dpmpp_2m", "dpmpp_sde", "uni_pc", "heun", "ddim"]
MODELS = ["flux1-dev", "juggernautXL_v9", "sd15_dreamshaper", "wan2.1_t2v", "pony_v6"]
QUERIES = [
    "upscaler for the portrait",
    "what did we decide about the lora strength",
    "vae decode out of memory",
    "seed 7704",
    "dpmpp_2m karras",
    "flux guidance steps",
    "watercolour fox",
    "which checkpoint for the castle",
    "batch size",
    "denoise contrast",
    "foggy harbour dark",
    "FaceDetailer",
    "neon street rain sharper",
    "cfg 6.5",
    "perfume bottle product shot",
    "sampler heun 40 steps",
    "tiles of 512",
    "what did I say about the scheduler",
    "astronaut sunflower",
    "juggernautXL",
    "logo bakery",
    "train station film still",
    "IPAdapterApply",
    "recommended sampler",
]


def fill(template: str, rng: random.Random) -> str:
    return template.format(
        topic=rng.choice(TOPICS), node=rng.choice(NODES), n=rng.choice([20, 25, 30, 40]),
        cfg=rng.choice([4.5, 6.5, 7, 8]), seed=rng.randrange(10_000), sampler=rng.choice(SAMPLERS),
        model=rng.choice(MODELS), d=rng.randrange(2, 9), w=rng.choice([1024, 1536, 2048]),
        h=rng.choice([1024, 1536]), b=rng.randrange(1, 5),
    )  # fmt: skip


def thread(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 2 == 0:
            parts: list[dict[str, Any]] = [{"type": "text", "text": fill(rng.choice(USER), rng)}]
            out.append({"id": f"m{seed}-{i}", "role": "user", "parts": parts})
            continue
        parts = [{"type": "step-start"}]
        if rng.random() < 0.35:
            node = rng.choice(NODES)
            parts.append({
                "type": "tool-getNodeDefinition", "toolCallId": f"c{seed}-{i}",
                "state": "output-available", "input": {"nodeType": node},
                "output": {"type": node, "inputs": [{"name": "model"}, {"name": "seed"}]},
            })  # fmt: skip
        text = " ".join(fill(rng.choice(ANSWER), rng) for _ in range(rng.randrange(2, 6)))
        parts.append({"type": "text", "text": text})
        out.append({"id": f"m{seed}-{i}", "role": "assistant", "parts": parts})
    return out


async def build(data: Path, n: int, others: int) -> tuple[Store, list[dict[str, Any]], float]:
    store = await Store.open(data)
    threads = Threads(store)
    for k in range(others):
        await threads.sync(f"other-{k}", thread(500, 100 + k))
    long = thread(n, 1)
    start = time.perf_counter()
    await threads.sync("long", long)
    stored = time.perf_counter() - start
    base = time.time() - 60 * DAY
    step = 60 * DAY / n
    await store.write(lambda db: db.execute(
        "UPDATE messages SET created_at = ? + position * ? WHERE thread_id = 'long'", (base, step)
    ))  # fmt: skip
    return store, long, stored


def ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95)] * 1000


async def timed_searches(
    store: Store, long: list[dict[str, Any]], rounds: int
) -> dict[str, list[float]]:
    week = (time.time() - 30 * 86_400, time.time() - 23 * 86_400)
    latest = [m["id"] for m in long[-len(long) * 3 // 20 :]]
    ways: dict[str, dict[str, Any]] = {
        "words": {},
        "words + a week": {"after": week[0], "before": week[1]},
        f"words - latest {len(latest)}": {"exclude_ids": latest},
    }
    times: dict[str, list[float]] = {way: [] for way in ways}
    for query in QUERIES:  # warm-up: pages in the cache, as on a thread in use
        await recall.search(store, "long", query)
    for _ in range(rounds):
        for way, kw in ways.items():
            for query in QUERIES:
                start = time.perf_counter()
                await recall.search(store, "long", query, limit=5, **kw)
                times[way].append(time.perf_counter() - start)
    return times


async def write_and_backfill(store: Store, long: list[dict[str, Any]]) -> tuple[float, float]:
    threads = Threads(store)
    costs = []
    history = list(long)
    rng = random.Random(9)
    for i in range(20):
        text = fill(rng.choice(USER), rng)
        history.append(
            {"id": f"new-{i}", "role": "user", "parts": [{"type": "text", "text": text}]}
        )
        start = time.perf_counter()
        await threads.sync("long", history)
        costs.append(time.perf_counter() - start)
    await store.write(lambda db: db.execute("DELETE FROM message_passages"))  # (a bench only)
    if store.full_text:
        await store.write(lambda db: db.execute("DELETE FROM message_index"))  # (a bench only)
    await store.write(lambda db: db.execute("INSERT INTO unindexed_threads VALUES ('long')"))
    start = time.perf_counter()
    await recall.search(store, "long", "seed")
    return statistics.median(costs) * 1000, (time.perf_counter() - start) * 1000


async def first_fused(store: Store) -> str:
    """The first search with embeddings on the long thread: its vectors are computed then."""
    model = await embeddings.embedder()
    if model is None:
        return NOT_MEASURED
    before = model.texts_embedded
    start = time.perf_counter()
    await recall.search(store, "long", QUERIES[0])
    seconds = time.perf_counter() - start
    return f"{(model.texts_embedded - before):,} vectors computed in {seconds * 1000:,.0f} ms"


async def run(n: int, others: int, rounds: int) -> None:
    semantic = embeddings.available()  # (before this bench switches them off and on)
    results: dict[str, tuple[float, float] | None] = {}
    for kind in ("FTS5", "no FTS5"):
        if kind == "no FTS5":
            os.environ[NO_FTS5] = "1"
        with tempfile.TemporaryDirectory() as folder:
            store, long, stored = await build(Path(folder), n, others)
            (passages,) = await store.fetchone(
                "SELECT COUNT(*) FROM message_passages WHERE thread_id = 'long'"
            ) or (0,)
            print(f"{kind}: a {n:,}-message thread ({passages:,} passages) beside {others} "
                  f"threads of 500; stored whole in {stored:.2f} s")  # fmt: skip
            start = time.perf_counter()
            for message in long:
                passages_of(message)
            split = (time.perf_counter() - start) / len(long) * 1e6
            print(f"  a message split into its passages: {split:.0f} µs on average")
            for fused in (False, True):
                key = f"{kind}, fused" if fused else kind
                if not fused:
                    os.environ[NO_EMBEDDINGS] = "1"
                elif not semantic:
                    print(f"  fused with embeddings: {NOT_MEASURED}")
                    results[key] = None
                    continue
                else:
                    print(f"  fused with embeddings; the first search: {await first_fused(store)}")
                times = await timed_searches(store, long, rounds)
                os.environ.pop(NO_EMBEDDINGS, None)
                for way, values in times.items():
                    median, p95 = ms(values)
                    print(f"  search{' fused' if fused else ''}, {way:<20} median {median:6.2f} "
                          f"ms  p95 {p95:6.2f} ms ({len(values)} searches)")  # fmt: skip
                results[key] = ms([v for values in times.values() for v in values])
            os.environ[NO_EMBEDDINGS] = "1"  # (the index of words, as before embeddings)
            write, backfill = await write_and_backfill(store, long)
            os.environ.pop(NO_EMBEDDINGS)
            print(f"  one more message stored (index included): median {write:.1f} ms; "
                  f"a thread stored before the index, indexed at its first search: "
                  f"{backfill:,.0f} ms")  # fmt: skip
            await store.close()
    os.environ.pop(NO_FTS5, None)
    for key, kind in (("search", "FTS5"), ("search_without_fts5", "no FTS5"),
                      ("search_fused", "FTS5, fused"),
                      ("search_fused_without_fts5", "no FTS5, fused")):  # fmt: skip
        result = results[kind]
        for i, name in enumerate(("median", "p95")):
            if result is None:
                print(f"TARGET {key}_{name}_ms={NOT_MEASURED}")
                continue
            value = result[i]
            verdict = "PASS" if value < TARGET_MS else "FAIL"
            print(f"TARGET {key}_{name}_ms={value:.2f} at {n:,} messages ({verdict}, "
                  f"target < {TARGET_MS:.0f})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--others", type=int, default=9, help="threads of 500 messages beside")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="300 messages, 2 others (CI)")
    args = parser.parse_args()
    if args.quick:
        args.messages, args.others, args.rounds = 300, 2, 1
    asyncio.run(run(args.messages, args.others, args.rounds))


if __name__ == "__main__":
    sys.exit(main())
