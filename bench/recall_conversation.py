"""Looking back in natural conversation: how often `searchConversation` returns the message that
holds what a question asks for, on multi-session chats grown turn by turn through a real store,
several threads in one store.

    .venv/bin/python bench/recall_conversation.py [--threads 6] [--weights 0.25,0.5,1] [--quick]

The data: bench/lib/prose_conversation.py's seeded conversations (a ComfyUI user and the
assistant over weeks of dated sessions, 15-26K tokens each; facts said in passing, questions in
later sessions that ask for them). `--threads` of them (seeds 1..N) are grown together, a turn
of each in turn, through `Threads.sync` into one store (each message dated by its session, as
the panel would have stored it then). When a turn asks a question, the tool is called the way
the model calls it, before the answer exists (the question itself left out, as the tool does):

- `asked`: the question as the user wrote it; it shares no content word with the fact it asks
  for (the generator checks that), so words alone find it only through what is said around it;
- `topic`: topic words, as the tool's description asks for them: the question's words less
  its framing ("Remind me", "what", "my"...) and one word the fact's frame names its subject
  by (its kind's first key word in prose_facts.yaml, "kids" for an outing; never the
  option's, the answer: "hiking"), standing for the synonym a model adds for the subject.
  What it measures is the ranking: that word is said in other messages too (small talk,
  other facts, questions, answers);
- `topic, right when` / `topic, wrong when`: the same with `when` = the month the fact was said
  in, or a month of the thread it was not said in.

A fact is found at k when its message is among the messages the tool returns for `limit=k`
(with the turns around each hit where the tool returns them); recall is over every (question,
fact) pair. Measured by words only (COMFY_ASSISTANT_NO_EMBEDDINGS=1) and, where wordllama is
installed (or `--site DIR` holds it), as the tool runs with it. Each call is timed.

TARGET lines: recall@5 of `topic` ≥ 0.55 by words only; the others are reported. `--weights`
measures the fusion at other weights of the side by meaning. `--quick`: 2 threads of 5-7K
tokens (CI).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from comfyui_assistant.core.memory import recall
from comfyui_assistant.core.memory.recall_tool import RecallFailure, search_conversation
from comfyui_assistant.core.store import embeddings
from comfyui_assistant.core.store.embeddings import NO_EMBEDDINGS
from comfyui_assistant.core.store.store import Store
from comfyui_assistant.core.store.threads import Threads
from comfyui_assistant.core.tools.documents import Citations
from lib.prose_conversation import Conversation, Turn, conversation
from lib.prose_kinds import kinds

KS = (5, 10)
FORMS = ("asked", "topic", "topic, right when", "topic, wrong when")
# What frames a question rather than naming its topic ("Remind me, what ... my ...?")
_FRAMING = """remind memory sieve terrible sorry lost track two things one random quick thing
again ago recent recently while back forgot forget remember recall think know tell said
suggested told asked mentioned got up picked"""
FRAMING = frozenset(_FRAMING.split())


@dataclass
class Asked:
    thread: str
    turn: Turn
    fact_messages: list[str]
    fact_months: list[str]  # "2024-03"
    month: str  # the question's
    topics: list[str]


def session_days(conv: Conversation) -> dict[int, datetime.datetime]:
    """Each session's day (noon), read from its header ("Session 3, Tuesday 16 January"); the
    year goes on from 2024 as the days do."""
    days: dict[int, datetime.datetime] = {}
    year, last = 2024, (0, 0)
    for turn in conv.turns:
        if turn.session in days:
            continue
        header = turn.user.split("\n", 1)[0]
        _, day, month = header.rsplit(" ", 2)
        parsed = datetime.datetime.strptime(f"{day} {month} 2000", "%d %B %Y")  # (a leap year)
        if (parsed.month, parsed.day) < last:
            year += 1
        last = (parsed.month, parsed.day)
        days[turn.session] = datetime.datetime(year, parsed.month, parsed.day, 12)
    return days


def topic_of(question: str, kind_topics: list[str]) -> str:
    """The topic words a model would search with: the question's content words less its
    framing, and the kinds' topic words."""
    words = [w for w in recall.query_terms(question) if w not in FRAMING]
    return " ".join([*words, *kind_topics])


def questions(conv: Conversation, thread: str, topics: dict[str, str]) -> list[Asked]:
    days = session_days(conv)
    out = []
    for turn in conv.turns:
        if not turn.asks:
            continue
        facts = [conv.facts[f] for f in turn.asks]
        months = [f"{days[f.session]:%Y-%m}" for f in facts]
        month = f"{days[turn.session]:%Y-%m}"
        messages = [f.message for f in facts]
        out.append(Asked(thread, turn, messages, months, month, [topics[f.kind] for f in facts]))
    return out


def wrong_month(asked: Asked, months: list[str]) -> str:
    """A month of the thread the facts were not said in, with messages by the question (the
    latest such), else one before the thread."""
    others = [m for m in months if m not in asked.fact_months and m <= asked.month]
    return others[-1] if others else "2023-01"


async def grow_and_ask(
    store: Store,
    convs: dict[str, Conversation],
    asked: dict[tuple[str, int], Asked],
    methods: list[str],
) -> dict[str, tuple[dict[tuple[str, int], int], list[float]]]:
    """Every thread stored turn by turn, a turn of each in turn, dated by its session; each
    question searched for when it is stored, before its answer (the tool leaves the question
    out). Returns per method the facts found per (form, k) and the calls' times."""
    threads = Threads(store)
    days = {tid: session_days(c) for tid, c in convs.items()}
    months = {tid: sorted({f"{d:%Y-%m}" for d in days[tid].values()}) for tid in convs}
    ui = {tid: c.ui() for tid, c in convs.items()}
    out = {m: ({(f, k): 0 for f in FORMS for k in KS}, []) for m in methods}
    longest = max(len(c.turns) for c in convs.values())
    for index in range(longest):
        for tid, conv in convs.items():
            if index >= len(conv.turns):
                continue
            turn = conv.turns[index]
            stamp = days[tid][turn.session].timestamp() + index * 60
            for upto in (2 * index + 1, 2 * index + 2):
                await threads.sync(tid, ui[tid][:upto])
                mid = str(ui[tid][upto - 1]["id"])
                await store.write(lambda db, s=stamp, t=tid, m=mid: db.execute(
                    "UPDATE messages SET created_at = ? WHERE thread_id = ? AND id = ?",
                    (s, t, m)))  # fmt: skip
                if upto % 2 and (tid, turn.index) in asked:
                    for method in methods:
                        await ask(store, asked[tid, turn.index], months[tid], method, out[method])
    return out


async def ask(
    store: Store,
    asked: Asked,
    months: list[str],
    method: str,
    into: tuple[dict[tuple[str, int], int], list[float]],
) -> None:
    found, times = into
    if method == "words":
        os.environ[NO_EMBEDDINGS] = "1"
    elif method.startswith("fused "):
        recall.SEMANTIC_WEIGHT = float(method.split()[1])
    try:
        for form in FORMS:
            for k in KS:
                ids, ms = await returned(store, asked, args_for(form, asked, months, k))
                found[form, k] += sum(m in ids for m in asked.fact_messages)
                times.append(ms)
    finally:
        os.environ.pop(NO_EMBEDDINGS, None)


async def returned(store: Store, asked: Asked, args: dict[str, Any]) -> tuple[list[str], float]:
    """The message ids the tool returns, and the call's time in ms."""
    start = time.perf_counter()
    try:
        result = await search_conversation(store, asked.thread, args, Citations(), now=2e9)
    except RecallFailure:
        result = {"documents": []}
    elapsed = (time.perf_counter() - start) * 1000
    ids = [d["metadata"]["messageId"] for d in result["documents"]]
    return ids, elapsed


def args_for(form: str, asked: Asked, months: list[str], k: int) -> dict[str, Any]:
    if form == "asked":
        return {"query": asked.turn.user, "limit": k}
    args: dict[str, Any] = {"query": topic_of(asked.turn.user, asked.topics), "limit": k}
    if form == "topic, right when":
        args["when"] = asked.fact_months[0]
    elif form == "topic, wrong when":
        args["when"] = wrong_month(asked, months)
    return args


async def run(count: int, weights: list[float], size: tuple[int, int]) -> None:
    users, assistants, outcome = kinds()
    topics = {k.name: k.keys[0] for k in (*users, *assistants, outcome)}
    convs = {f"c{seed}": conversation(seed, *size) for seed in range(1, count + 1)}
    asked = {(q.thread, q.turn.index): q for tid, c in convs.items()
             for q in questions(c, tid, topics)}  # fmt: skip
    pairs = sum(len(a.fact_messages) for a in asked.values())
    product = f"fused {getattr(recall, 'SEMANTIC_WEIGHT', 1.0):g}"  # (before `ask` sets it)
    methods = ["words"]
    if await embeddings.embedder() is not None:
        methods += (
            [f"fused {w:g}" for w in weights] if hasattr(recall, "SEMANTIC_WEIGHT") else ["fused"]
        )
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder))
        start = time.perf_counter()
        results = await grow_and_ask(store, convs, asked, methods)
        (messages,) = await store.fetchone("SELECT COUNT(*) FROM messages") or (0,)
        await store.close()
    print(f"{count} threads, {messages} messages stored turn by turn, searched at each "
          f"question ({time.perf_counter() - start:.0f} s); {len(asked)} questions, {pairs} "
          "(question, fact) pairs")  # fmt: skip
    for method, (found, times) in results.items():
        for form in FORMS:
            line = "  ".join(f"recall@{k}={found[form, k] / pairs:.3f}" for k in KS)
            print(f"{method:9} {form:18} {line}")
        median = statistics.median(times)
        p95 = statistics.quantiles(times, n=20)[-1]
        print(f"{method:9} per call: median {median:.1f} ms, p95 {p95:.1f} ms ({len(times)} calls)")
    words = {key: value / pairs for key, value in results["words"][0].items()}
    at5 = words["topic", 5]
    print(f"TARGET topic_recall@5={at5:.3f} >= 0.55: {'PASS' if at5 >= 0.55 else 'FAIL'}")
    print(f"TARGET topic_recall@10={words['topic', 10]:.3f} (reported)")
    print(f"TARGET asked_recall@5={words['asked', 5]:.3f} (reported)")
    print(f"TARGET wrong_when_recall@5={words['topic, wrong when', 5]:.3f} (reported)")
    fused = results.get(product) or results.get("fused")
    value = f"{fused[0]['topic', 5] / pairs:.3f} ({product})" if fused else "not measured"
    print(f"TARGET fused_topic_recall@5={value} (reported)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=6, help="conversations in the store")
    parser.add_argument("--site", help="a folder where wordllama is installed")
    parser.add_argument("--quick", action="store_true", help="2 threads of 5-7K tokens (CI)")
    parser.add_argument(
        "--weights",
        default="",
        help="semantic weights to fuse at, e.g. 0.25,0.5,1 (default: "
        "the product's, recall.SEMANTIC_WEIGHT, where it is not 0)",
    )
    args = parser.parse_args()
    if args.site:
        sys.path.insert(0, args.site)
    weights = [float(w) for w in args.weights.split(",") if w]
    if not weights:
        weights = [w for w in [getattr(recall, "SEMANTIC_WEIGHT", 1.0)] if w > 0]
    size = (5_000, 7_000) if args.quick else (15_000, 26_000)
    asyncio.run(run(2 if args.quick else args.threads, weights, size))


if __name__ == "__main__":
    sys.exit(main())
