"""Memory in natural conversation: what the provider receives still holds the turns a question
needs? A benchmark not built for the engine (issue 22, item 6).

    .venv/bin/python bench/memory_prose.py [--seeds 5] [--tokens 15000,26000]
        [--windows 4096,8192,32768] [--variants fallback,model] [--jobs 2] [--quick]

Data (bench/lib/prose_*.py, seeded): a ComfyUI hobbyist and the assistant chat over weeks of
dated sessions ("Session 5, Tuesday 14 May"), 15-26K tokens (cl100k) each: small talk about
life, picture projects, how-to questions, and facts in everyday prose stated by both speakers
("We went hiking with the kids last weekend…", "For the drafts, try lowering the steps; it
should cut the waiting a lot.") with no distinctive token (no digit, made-up name or file
name: checked). Questions paraphrase (no content word shared with the fact: checked, the
generator fails otherwise); about a third need two facts (a suggestion and the user's later
word on how it went, or two unrelated facts). Each fact's key words (3-6) come together in
its own message only (checked).

Presence (bench/lib/prose_words.py): a fact is present in a request when its key words all
appear, lightly stemmed, within one line of one message; verbatim messages are one line, a
summary writes one statement per line, so a verbatim or a paraphrased statement both count.
Scored on the first request the provider receives for the question's turn (after any
compaction); the share is of the evidence turns the questions need.

Driven through our real server (bench/lib/chat_drive.py: the standalone app on 127.0.0.1, a
scripted provider whose answers are the assistant's turns of the data; `LLM_CONTEXT_WINDOW`):
  turn by turn  each `POST /api/assistant/chat` carries the thread so far and the new user
                message; the streamed answer, assembled, is appended (the headline);
  at once       per question, one POST whose messages are the conversation up to it, on a
                thread of its own.
Summaries: `fallback` (summary calls answered HTTP 500: the deterministic digest counts) and
`model` (bench/lib/prose_summary.py: 300 words, every statement of the part in order,
reported speech, thinned evenly; nothing favours digits or names).
Baselines at each question turn (turn by turn), the conversation's messages newest first,
whole, the question always in, the first that does not fit ending it:
  same tokens      in the tokens ours spent on the conversation (every message of our request
                   after the system message, counted as the engine counts);
  window-reserve   in the window minus the answer's reserve (the report's `tokens.reserve`,
                   core/provider/budget.py): a plain client without system prompt or tools.
Also per run: summary calls, tokens sent per turn (the report's `exact`).
TARGET lines (issue 36; issue 22's 1.5x and "above window − reserve" are withdrawn: without a
model the engine cannot know which everyday sentence a paraphrased question will need, and
that baseline carries no system prompt or tools): turn by turn at least 1.0x the same-tokens
baseline at 4K, 8K and 32K (what the summary costs earns at least what the newest messages
would in its place); turn by turn 100% with no summary when the thread so far fits the
history budget (the report's budget minus the system message); at 32K within 1 point of at
once. Exit code 0 either way. `--quick` (CI): one seed, a ~4K-token conversation, 4K and 8K,
fallback only; every TARGET line is printed (n/a where not measured).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from comfyui_assistant.bench.lib import chat_drive as drive
from comfyui_assistant.bench.lib.chat_drive import ChatServer, Msg
from comfyui_assistant.bench.lib.prose_conversation import (
    Conversation,
    Turn,
    check_kinds,
    conversation,
)
from comfyui_assistant.bench.lib.prose_summary import reported, sentences, summary_reply
from comfyui_assistant.bench.lib.prose_words import lines_of, present
from comfyui_assistant.core.base.ui_messages import to_openai_messages
from comfyui_assistant.core.summary.summarizer import chunks, transcript_lines
from comfyui_assistant.core.summary.summary_checks import problem
from comfyui_assistant.core.tokens.tokens import REPLY_PRIMING, counter_for
from comfyui_assistant.tests.scripted_provider import text_reply

DEBUG = bool(__import__("os").environ.get("MEMORY_PROSE_DEBUG"))
COLUMNS = ("once", "turn", "same", "plain")
TITLES = ("at once", "turn by turn", "newest-first, same tokens", "newest-first, window-reserve")


@dataclass
class Asked:
    """One question turn, scored: the ids of the needed facts each column's request holds."""

    turn: int
    needs: tuple[str, ...]
    found: dict[str, set[str]]
    fits: bool  # the thread so far fits the history budget
    summary: str | None  # the turn-by-turn request's summary: "model", "digest" or None


@dataclass
class Run:
    seed: int
    window: int
    variant: str
    tokens: int  # the conversation's
    asked: list[Asked] = field(default_factory=list)
    summary_calls: int = 0
    sent: list[int] = field(default_factory=list)  # tokens sent per turn, turn by turn
    # each summary put to use turn by turn: (messages it covers, its tokens)
    summaries: list[tuple[int, int]] = field(default_factory=list)
    # at once, per question: (messages summarized, the summary's tokens); (0, 0): none
    once: list[tuple[int, int]] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)  # the answers' tokens (completion)

    def share(self, column: str) -> float:
        needed = sum(len(a.needs) for a in self.asked)
        return sum(len(a.found[column]) for a in self.asked) / needed if needed else 1.0


def ui_user(turn: Turn) -> Msg:
    return {"id": f"u{turn.index}", "role": "user", "parts": [{"type": "text", "text": turn.user}]}


def found(conv: Conversation, turn: Turn, messages: Sequence[Msg]) -> set[str]:
    """The needed facts of `turn` present in `messages` (the presence rule)."""
    lines = lines_of([drive.text_of(messages)])
    return {fid for fid in turn.asks if present(lines, conv.facts[fid].keys)}


async def turn_by_turn(server: ChatServer, conv: Conversation, run: Run) -> None:
    provider, counter = server.provider, counter_for(drive.MODEL)
    calls, ui, system = provider.summary_calls, [], 0
    for turn in conv.turns:
        ui.append(ui_user(turn))
        provider.requests.clear()
        provider.enqueue(text_reply(turn.reply))
        message = await server.post(f"turns-{conv.seed}", ui, None)
        report = drive.context_report(message)
        assert report is not None, "no context report"
        received = drive.first_streamed(provider.requests)["messages"]
        run.sent.append(int(report["exact"]))
        run.answers.append(counter.text(turn.reply))
        used = (int(report["counts"]["summarized"]), int(report["tokens"]["summary"]))
        if used[0] and (not run.summaries or run.summaries[-1] != used):
            run.summaries.append(used)
        if DEBUG:  # (MEMORY_PROSE_DEBUG=1: each turn's report, on stderr)
            c, t = report["counts"], report["tokens"]
            print(
                f"{turn.index} kept={c['kept']} sum={c['summarized']} drop={c['dropped']} "
                f"hist={t['history']} summ={t['summary']} rec={t['recalled']} "
                f"rem={t['reminders']} sys={t['system']} tools={t['tools']} "
                f"exact={report['exact']} budget={report['budget']}",
                file=sys.stderr,
            )
        if turn.index == 1:
            system = counter.message(received[0])
            check_system(conv, received[0])
        if turn.asks:
            run.asked.append(scored(conv, turn, ui, received, report, system))
            if DEBUG:
                a = run.asked[-1]
                print(
                    f"Q{turn.index} asks={sorted(turn.asks)} found={sorted(a.found['turn'])} "
                    f"rec={report['tokens']['recalled']} sum={report['counts']['summarized']} "
                    f"fits={a.fits} exact={report['exact']} budget={report['budget']} "
                    f"window={server.window} seed={conv.seed}",
                    file=sys.stderr,
                )
        ui.append(message)
    run.summary_calls = provider.summary_calls - calls


def scored(
    conv: Conversation, turn: Turn, ui: list[Msg], received: list[Msg], report: Msg, system: int
) -> Asked:
    """A question turn: our request (`received`) and the two baselines over the thread so far
    (`ui`), and whether that thread fits the history budget (`system`: the system message's
    tokens)."""
    counter, window = counter_for(drive.MODEL), int(report["window"]["tokens"])
    history = to_openai_messages(ui)
    spent = sum(counter.message(m) for m in received[1:])
    plain = window - int(report["tokens"]["reserve"]) - REPLY_PRIMING
    found_in = {
        "turn": found(conv, turn, received),
        "same": found(conv, turn, drive.newest_first(history, spent)),
        "plain": found(conv, turn, drive.newest_first(history, plain)),
    }
    fits = system + counter.messages(history) <= int(report["budget"])
    return Asked(turn.index, tuple(turn.asks), found_in, fits, summary_kind(report))


def summary_kind(report: Msg) -> str | None:
    summary = report["summary"]
    return None if summary is None else "digest" if summary["fallback"] else "model"


async def at_once(server: ChatServer, conv: Conversation, run: Run) -> None:
    provider = server.provider
    by_turn = {a.turn: a for a in run.asked}
    for turn in conv.turns:
        if turn.asks:
            provider.requests.clear()
            provider.enqueue(text_reply(turn.reply))
            message = await server.post(
                f"once-{conv.seed}-{turn.index}", conv.ui(upto=turn.index), None
            )
            received = drive.first_streamed(provider.requests)["messages"]
            by_turn[turn.index].found["once"] = found(conv, turn, received)
            report = drive.context_report(message) or {}
            counts, tokens = report.get("counts", {}), report.get("tokens", {})
            run.once.append((int(counts.get("summarized", 0)), int(tokens.get("summary", 0))))


def check_system(conv: Conversation, system: Msg) -> None:
    """No fact's key words come together in the system prompt (it would count as present)."""
    lines = lines_of([drive.text_of([system])])
    clash = [f.id for f in conv.facts.values() if present(lines, f.keys)]
    assert not clash, f"the system prompt holds the key words of {clash}"


def self_check(convs: Sequence[Conversation]) -> None:
    """The kinds keep their rules; the scripted summary's paraphrase of a fact keeps its key
    words, and its running summary of each conversation, in parts of 600 tokens, passes the
    engine's checks (core/summary_checks), or the model variant would measure the digest
    instead (raises AssertionError)."""
    check_kinds()
    for conv in convs:
        for fact in conv.facts.values():  # the summary's paraphrase keeps the key words
            said = reported("User" if fact.speaker == "user" else "Assistant", fact.sentence)
            assert present([said], fact.keys), f"{fact.keys} not in {said!r}"
        lines, previous = transcript_lines(to_openai_messages(conv.ui())), ""
        for part in chunks(lines, 600, counter_for(drive.MODEL).text):
            prompt = f"Previous summary:\n{previous}\n\n" if previous else ""
            prompt += f"New part of the conversation:\n<conversation>\n{part}\n</conversation>"
            previous = summary_reply({"messages": [{"role": "user", "content": prompt}]})
            assert problem(previous, "stop", part) is None, problem(previous, "stop", part)


def measure_one(window: int, variant: str, convs: list[Conversation]) -> tuple[list[Run], float]:
    """Every conversation at one window with one kind of summary, on a server of its own
    (one process each: see --jobs)."""

    async def go() -> list[Run]:
        runs = [Run(c.seed, window, variant, c.tokens) for c in convs]
        async with ChatServer(window, summary_reply) as server:
            server.provider.summary_mode = variant
            for conv, run in zip(convs, runs, strict=True):
                await turn_by_turn(server, conv, run)
            for conv, run in zip(convs, runs, strict=True):
                await at_once(server, conv, run)
        return runs

    started = time.perf_counter()
    with drive.quiet_engine_logs():
        runs = asyncio.run(go())
    return runs, time.perf_counter() - started


# --- the report -----------------------------------------------------------------------------------


def median(runs: Sequence[Run], column: str) -> float:
    return statistics.median(r.share(column) for r in runs)


def k(window: int) -> str:
    return f"{window // 1024}K"


def describe(convs: Sequence[Conversation]) -> list[str]:
    facts = [f for c in convs for f in c.facts.values()]
    asked = [t for c in convs for t in c.turns if t.asks]
    ages = [t.index - c.facts[f].turn for c in convs for t in c.turns for f in t.asks]
    distinct = statistics.median(
        len(set(said)) / len(said)
        for said in ([s for t in c.turns for m in (t.user, t.reply) for s in sentences(m)]
                     for c in convs)
    )  # fmt: skip
    return [
        f"{len(convs)} conversations of {min(c.tokens for c in convs):,}-"
        f"{max(c.tokens for c in convs):,} tokens (cl100k), "
        f"{min(len(c.turns) for c in convs)}-{max(len(c.turns) for c in convs)} turns, "
        f"{min(c.turns[-1].session for c in convs)}-{max(c.turns[-1].session for c in convs)} "
        f"sessions; {len(facts)} facts ({sum(f.speaker == 'user' for f in facts)} stated by the "
        f"user), {len(asked)} questions ({sum(len(t.asks) == 2 for t in asked)} need two "
        f"facts), {len(ages)} evidence turns, {statistics.median(ages):.0f} turns old "
        f"(median; {min(ages)}-{max(ages)}); {distinct:.0%} of a conversation's sentences are "
        f"distinct (median)"
    ]


VARIANT_TITLES = {
    "fallback": "summaries fail (HTTP 500): the deterministic digest",
    "model": "the scripted model summary (300 words, reported speech, thinned evenly)",
}


def table(runs: Sequence[Run], variant: str, windows: Sequence[int]) -> list[str]:
    mine = [r for r in runs if r.variant == variant]
    seeds = len({r.seed for r in mine})
    lines = [
        f"\n{variant}: {VARIANT_TITLES[variant]}; share of evidence turns present in what the "
        f"provider receives, median over {seeds} seed(s)",
        "| window | " + " | ".join(TITLES) + " |",
        "| --- |" + " ---: |" * len(TITLES),
    ]
    for w in windows:
        at = [r for r in mine if r.window == w]
        lines.append(f"| {k(w)} | " + " | ".join(f"{median(at, c):.3f}" for c in COLUMNS) + " |")
    for w in windows:
        at = [r for r in mine if r.window == w]
        sent = [t for r in at for t in r.sent]
        seen = [a.summary for r in at for a in r.asked]
        lines.append(
            f"  {k(w)}: summary calls {statistics.median(r.summary_calls for r in at):.0f} per "
            f"conversation (median); tokens sent per turn {statistics.median(sent):,.0f} "
            f"(median; {max(sent):,} at most), {statistics.median(sum(r.sent) for r in at):,.0f} "
            f"per conversation; questions that saw a model summary {seen.count('model')}, the "
            f"digest {seen.count('digest')}, none {seen.count(None)}; per seed turn/same/plain: "
            + "  ".join(
                f"{r.share('turn'):.2f}/{r.share('same'):.2f}/{r.share('plain'):.2f}" for r in at
            )
        )
    for w in windows:
        lines.append(summaries_line([r for r in mine if r.window == w], w))
    return lines


def summaries_line(at: Sequence[Run], window: int) -> str:
    """The summaries each mode put to use, and their sizes; the answers' sizes."""
    made = [s for r in at for s in r.summaries]
    once = [s for r in at for s in r.once if s[0]]
    asked = sum(len(r.once) for r in at)
    answers = sorted(t for r in at for t in r.answers)

    def sizes(found: Sequence[tuple[int, int]]) -> str:
        if not found:
            return "none"
        covers, tokens = zip(*found, strict=True)
        return (
            f"{len(found)}, covering {statistics.median(covers):.0f} messages and "
            f"{statistics.median(tokens):,.0f} tokens (median; at most {max(tokens):,})"
        )

    p95 = answers[int(0.95 * (len(answers) - 1))] if answers else 0
    return (
        f"  {k(window)}: summaries put to use turn by turn {sizes(made)}; at once, questions "
        f"sent with a summary {len(once)} of {asked}: {sizes(once)}; answers "
        f"{statistics.median(answers) if answers else 0:.0f} tokens (median; p95 {p95}, at most "
        f"{max(answers, default=0)})"
    )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def targets(runs: Sequence[Run], variants: Sequence[str], windows: Sequence[int]) -> list[str]:
    lines = []
    for v in ("fallback", "model"):
        mine = [r for r in runs if r.variant == v]
        for w in (4096, 8192, 32768):
            at = [r for r in mine if r.window == w]
            name = f"TARGET {v} window={w} turn_by_turn_vs_same_tokens"
            if not at:
                lines.append(f"{name}=n/a (not measured)")
                continue
            turn, same = median(at, "turn"), median(at, "same")
            ratio = f"{turn / same:.2f}x" if same else "n/a x"
            lines.append(
                f"{name}={turn:.3f} vs {same:.3f} ({ratio}; {verdict(turn >= same)}, at least 1.0x)"
            )
        fitting = [(r, a) for r in mine for a in r.asked if a.fits]
        name = f"TARGET {v} fits_turn_by_turn"
        if not mine:
            lines.append(f"{name}=n/a (not measured)")
        elif not fitting:
            lines.append(f"{name}=n/a (no question whose thread fits the history budget)")
        else:
            needed = sum(len(a.needs) for _, a in fitting)
            share = sum(len(a.found["turn"]) for _, a in fitting) / needed
            summarized = sum(a.summary is not None for _, a in fitting)
            lines.append(
                f"{name}={share:.3f} over {len(fitting)} questions whose thread fits the history "
                f"budget, {summarized} of them with a summary "
                f"({verdict(share == 1.0 and summarized == 0)}, 1.000 and none)"
            )
        at = [r for r in mine if r.window == 32768]
        name = f"TARGET {v} window=32768 turn_by_turn_vs_at_once"
        if not at:
            lines.append(f"{name}=n/a (not measured)")
        else:
            turn, once = median(at, "turn"), median(at, "once")
            sizes = f"threads of {min(r.tokens for r in at):,}-{max(r.tokens for r in at):,}"
            lines.append(
                f"{name}={turn:.3f} vs {once:.3f} ({100 * (turn - once):+.1f} points, {sizes} "
                f"tokens; {verdict(turn >= once - 0.01)}, within 1 point)"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = drive.bench_arguments(__doc__, "conversations")
    parser.add_argument("--tokens", default="15000,26000", help="a conversation's size range")
    parser.add_argument("--jobs", type=int, default=2, help="processes (a window and variant each)")
    parser.add_argument("--quick", action="store_true", help="1 seed, ~4K tokens, 4K/8K fallback")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.tokens, args.windows = 1, "3500,4500", "4096,8192"
        args.variants = "fallback"
    lo, hi = (int(x) for x in args.tokens.split(","))
    seeds = range(args.seed, args.seed + args.seeds)
    windows = [int(w) for w in args.windows.split(",")]
    variants = args.variants.split(",")
    started = time.perf_counter()
    convs = [conversation(s, lo, hi) for s in seeds]
    self_check(convs)
    print("\n".join(describe(convs)))
    jobs = [(w, v) for v in variants for w in windows]
    if args.jobs > 1:
        with ProcessPoolExecutor(min(args.jobs, len(jobs))) as pool:
            done = list(pool.map(measure_one, *zip(*jobs, strict=True), [convs] * len(jobs)))
    else:
        done = [measure_one(w, v, convs) for w, v in jobs]
    runs = [r for made, _ in done for r in made]
    for (w, v), (_, seconds) in zip(jobs, done, strict=True):
        print(f"  {v} at {k(w)}: {seconds:.0f} s")
    for v in variants:
        print("\n".join(table(runs, v, windows)))
    print(f"\n({time.perf_counter() - started:.0f} s in all, {args.jobs} job(s))")
    print("\n".join(targets(runs, variants, windows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
