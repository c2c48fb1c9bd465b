"""Project documents: how well retrieval finds the passage that answers, and what the documents
cost per turn, whole or retrieved, with the block above the latest user message.

    PYTHONPATH=... .venv/bin/python bench/projects.py [--windows 4096,8192,32768] [--quick]

The project is bench/projects_data/: a style guide, three model cards (Flux dev, Juggernaut XL,
Wan 2.1), two shot lists, production notes and location notes for a short film, about 3,000
words (~4,000 cl100k tokens: the whole 4K window). Twenty questions, each with a phrase only
the passage that answers it holds. They go into the store's real FTS5 index (core/files/projects.py)
and through the real engine (build_context) turn by turn, as one thread, with a scripted
answer of ~60 tokens per turn.

Figures:
- retrieval: the answer's passage in BM25's top 1, 3, 5, and in what was sent at each window
  (within RETRIEVAL_SHARE);
- tokens per turn (median over the 20 turns; the re-processed tokens' mean too): the request,
  the documents block, and the tokens re-processed by a prefix cache (the request from its
  first message that differs from the previous request's, counted per message: as a server
  reusing the longest common prefix);
  "whole/1" moves the block to the latest user message every turn (the issue's placement),
  "whole/4" every fourth turn (ours: MOVE_EVERY), "pinned" records it with the first user
  message and resends it there for good (append-only), at 32K where the documents fit whole.

TARGET lines (guards at the figures the README quotes): the answer's passage in BM25's top 3
for at least 17 of the 20 questions; what is sent at 8K holds it for at least 17; at 32K,
moving the whole block every 4 turns re-processes at most a third of what moving it every turn
does (mean per turn). The run takes about a second: `--quick` (what CI runs) is the same run.
Exit code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "projects_data"

QUESTIONS: list[tuple[str, str]] = [
    ("What film grain do we put on final frames?", "intensity of 0.3 with a grain size of 1.2"),
    ("Which sampler and how many steps for Flux dev finals?", "finals use 28 steps"),
    ("What sampler and CFG should I use with Juggernaut XL?", "dpmpp_2m with the karras"),
    ("What shift do I set for the Wan clips?", "shift of 8.0"),
    ("What happens in shot 13?", "job offer letter"),
    ("Which shot is the first exterior without fog?", "first exterior without fog"),
    ("How strong can the maren_v3 LoRA go before it breaks?", "above 0.85 it bakes"),
    ("How do I fix the hands in shot 4?", "hand_yolov8s"),
    ("What is the approved seed for shot 14?", "for shot 14 it is 7704"),
    ("What colour temperature are the sodium lamps?", "2200 kelvin"),
    ("Should I use the SDXL refiner on the plates?", "We do not use the SDXL refiner"),
    ("Which ControlNet settings for the street plate?", "Depth Anything preprocessor"),
    ("What resolution and frame count for Wan?", "848 by 480 and 81 frames"),
    ("What is our shared negative prompt?", "lens flare, purple tint, oversaturated"),
    ("When does the director review stills?", "Tuesday and Thursday at 10:00"),
    ("Can we sell the film with Flux dev images in it?", "regenerated with Flux.1 pro"),
    ("Wan runs out of memory at the VAE decode, what now?", "block swap of 20 blocks"),
    ("What does Tobias wear?", "grey hooded sweatshirt"),
    ("How many street lamps are visible in wide shots of the high street?", "exactly five"),
    ("What is the monthly budget for API models?", "40 euros"),
]
ANSWER = "Noted. " + "I will apply that to the shot and keep the grade consistent. " * 5
SYSTEM = "You are ComfyUI Assistant. " + "Help the user build and run ComfyUI workflows. " * 40


def user(text: str, id: str) -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def answer(text: str, id: str) -> dict[str, Any]:
    return {"id": id, "role": "assistant", "parts": [{"type": "text", "text": text}]}


def reprocessed(previous: list[dict[str, Any]], current: list[dict[str, Any]], count: Any) -> int:
    same = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        same += 1
    return sum(count.message(m) for m in current[same:])


async def run(windows: list[int]) -> None:
    from comfyui_assistant.core.context.context_cache import BlockCache
    from comfyui_assistant.core.context.context_engine import ContextInputs, build_context
    from comfyui_assistant.core.files import project_documents
    from comfyui_assistant.core.files.project_documents import (
        DOCUMENTS_SHARE,
        RETRIEVAL_SHARE,
        question_of,
    )
    from comfyui_assistant.core.files.projects import Projects
    from comfyui_assistant.core.provider.budget import Window
    from comfyui_assistant.core.store.store import Store
    from comfyui_assistant.core.tokens.passages import MAX_PASSAGE_TOKENS, PASSAGE_TOKENS
    from comfyui_assistant.core.tokens.tokens import counter_for

    counter = counter_for("gpt-4")
    default_move = project_documents.MOVE_EVERY
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp))
        projects = Projects(store, counter)
        pid = int((await projects.create("Harbour Lights"))["id"])
        total_words = 0
        for path in sorted(DATA.glob("*.md")):
            text = path.read_text()
            total_words += len(text.split())
            await projects.add_document(pid, text.splitlines()[0].lstrip("# "), text)
        info = await projects.get(pid)
        assert info is not None
        passages = sum(d["passages"] for d in info["documents"])
        print(
            f"passages of ~{PASSAGE_TOKENS} tokens (at most {MAX_PASSAGE_TOKENS}); whole share "
            f"{DOCUMENTS_SHARE:.0%}, retrieval share {RETRIEVAL_SHARE:.0%}"
        )
        print(
            f"project: {info['documentCount']} documents, {total_words:,} words, "
            f"{info['tokens']:,} tokens, {passages} passages"
        )

        # retrieval quality: BM25 alone
        ranks = []
        for question, phrase in QUESTIONS:
            found = await projects.search(pid, question, 24)
            rank = next((i + 1 for i, p in enumerate(found) if phrase in p.text), None)
            ranks.append(rank)
            if rank is None or rank > 3:
                print(f"  miss@3: {question!r} (rank {rank})")
        n = len(QUESTIONS)
        for k in (1, 3, 5):
            hit = sum(r is not None and r <= k for r in ranks)
            print(f"answer passage in top {k}: {hit}/{n} ({hit / n:.0%})")
        top3 = sum(r is not None and r <= 3 for r in ranks)
        sent_hits: dict[int, int] = {}  # window -> questions whose sent documents hold the answer
        again_means: dict[str, float] = {}  # whole/1, whole/4 -> mean re-processed per turn

        print()
        header = (
            f"{'window':>7} {'mode':<10} {'sent has answer':>16} {'request':>8} "
            f"{'documents':>10} {'re-processed':>13} {'(mean)':>7}"
        )
        print(header)
        print("-" * len(header))
        for window in windows:
            for mode, move in (("none", 1), ("project", 1), ("project", 4), ("pinned", 1)):
                if (mode == "pinned" or move > 1) and window < 32768:
                    continue
                project_documents.MOVE_EVERY = move  # (restored below)
                ui: list[dict[str, Any]] = []
                previous: list[dict[str, Any]] = []
                requests, docs, again, hits = [], [], [], 0
                pinned_block = ""
                for turn, (question, phrase) in enumerate(QUESTIONS):
                    ui.append(user(question, f"u{turn}"))
                    context = None
                    if mode != "none":
                        context = await projects.context(
                            pid, question_of(ui), int(window * DOCUMENTS_SHARE)
                        )
                    inputs = ContextInputs(
                        system=SYSTEM, ui_messages=list(ui), tools=[], model="gpt-4",
                        window=Window(window, "settings", "bench"), max_output_tokens=1024,
                        project=context, cache_scope=mode,
                    )  # fmt: skip
                    assembled = build_context(inputs, counter, BlockCache())
                    messages = assembled.messages
                    report = assembled.report["documents"]
                    if mode == "pinned":
                        # the block recorded with the first user message, resent there
                        content = str(messages[-1]["content"])
                        if turn == 0:
                            pinned_block = content.split("</project-documents>")[0] + (
                                "</project-documents>\n\n"
                            )
                        messages = [dict(m) for m in messages]
                        if turn > 0:
                            last = messages[-1]
                            last["content"] = (
                                str(last["content"]).split("</project-documents>")[-1].lstrip("\n")
                            )
                            first = next(i for i, m in enumerate(messages) if m["role"] == "user")
                            messages[first]["content"] = pinned_block + str(
                                messages[first]["content"]
                            )
                    total = counter.messages(messages)
                    requests.append(total)
                    docs.append(report["tokens"] if report else 0)
                    if turn:
                        again.append(reprocessed(previous, messages, counter))
                    hits += any(phrase in str(m["content"]) for m in messages[1:])
                    previous = messages
                    ui.append(answer(ANSWER, f"a{turn}"))
                label = {"none": "none", "pinned": "pinned"}.get(mode, "")
                if not label and report:
                    label = report["mode"] + (f"/{move}" if report["mode"] == "whole" else "")
                has = "-" if mode == "none" else f"{hits}/{n}"
                if label == "retrieved":
                    sent_hits[window] = hits
                if label.startswith("whole/"):
                    again_means[label] = statistics.mean(again)
                print(
                    f"{window:>7} {label:<10} {has:>16} {statistics.median(requests):>8,.0f} "
                    f"{statistics.median(docs):>10,.0f} {statistics.median(again):>13,.0f} "
                    f"{statistics.mean(again):>7,.0f}"
                )
        project_documents.MOVE_EVERY = default_move
        await store.close()
    print(f"TARGET answer_in_top3={top3}/{n} ({'PASS' if top3 >= 17 else 'FAIL'}, guard >= 17)")
    if 8192 in sent_hits:
        got = sent_hits[8192]
        verdict = "PASS" if got >= 17 else "FAIL"
        print(f"TARGET window=8192 sent_has_answer={got}/{n} ({verdict}, guard >= 17)")
    if {"whole/1", "whole/4"} <= again_means.keys():
        share = again_means["whole/4"] / again_means["whole/1"]
        verdict = "PASS" if share <= 1 / 3 else "FAIL"
        print(
            f"TARGET window=32768 moved_every_4_reprocessed={share:.0%} of moved_every_turn "
            f"({verdict}, guard <= 33%)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", default="4096,8192,32768")
    parser.add_argument("--quick", action="store_true", help="the same run: it takes a second")
    args = parser.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    asyncio.run(run(windows))


if __name__ == "__main__":
    sys.exit(main())
