"""bench/fidelity.py keeps working: its data, its baseline's arithmetic, and a tiny run through
our real server (the figures themselves are the benchmark's to report, not asserted here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from comfyui_assistant.core.summary.summary_checks import problem
from comfyui_assistant.core.tokens.tokens import REPLY_PRIMING, counter_for

from .helpers import assistant_message, user

BENCH = Path(__file__).resolve().parent.parent / "bench" / "fidelity.py"


@pytest.fixture(scope="module")
def fidelity() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fidelity_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_conversations_are_seeded_and_each_token_is_stated_once(fidelity):
    for profile in ("tools", "chat"):
        one = fidelity.conversation(3, 80, "", profile=profile)
        assert one == fidelity.conversation(3, 80, "", profile=profile)
        facts = fidelity.all_facts(one)
        assert {f.speaker for f in facts.values()} == {"user", "assistant"}
        questions = [t for t in one if t.needs]
        assert len(questions) >= 3
        for turn in questions:
            for fid in turn.needs:  # asked after it was stated, and never by its token
                assert facts[fid].turn < turn.index
                assert facts[fid].token not in turn.user
        fidelity.check_tokens(one)  # raises when a token occurs outside its own turn
    small = fidelity.conversation(5, 12, "", small=True)
    assert small[-1].needs == list(fidelity.all_facts(small))  # the last asks for every fact


def test_the_baseline_keeps_newest_whole_messages_in_the_budget(fidelity):
    counter = counter_for(fidelity.MODEL)
    system = "You are a test."
    fixed = counter.message({"role": "system", "content": system}) + REPLY_PRIMING
    thread = [user("seed 111 " + "word " * 300, "u1"), assistant_message("ok", "a1")]
    thread += [user("the latest says Zorvel", "u2")]
    history = fidelity.to_openai_messages(thread)
    costs = [counter.message(m) for m in history]
    # everything fits: everything is sent
    whole = fidelity.baseline_request(thread, system, fixed + sum(costs))
    assert whole[1:] == history
    # one token short: the oldest message goes, and nothing older than a gap is taken
    short = fidelity.baseline_request(thread, system, fixed + sum(costs) - 1)
    assert short[1:] == history[1:]
    # no room at all: the latest message is still sent, and its fact is found
    tiny = fidelity.baseline_request(thread, system, 0)
    assert tiny[1:] == history[-1:] and "Zorvel" in fidelity.text_of(tiny[1:])
    # skipping: a message that does not fit is passed over, older ones that fit are taken
    big = [user("x " * 2000, "u0"), assistant_message("small", "a0"), *thread]
    msgs = fidelity.to_openai_messages(big)
    room = fixed + sum(counter.message(m) for m in msgs) - counter.message(msgs[0]) + 1
    skipped = fidelity.baseline_request(big, system, room, skip=True)
    assert skipped[1:] == msgs[1:]
    thread[0]["parts"][0]["text"] = "x " * 2000  # now the oldest is the big one, then a gap
    gap = [*thread[:1], assistant_message("tiny", "a9"), user("y " * 3000, "u9"), *thread[1:]]
    msgs = fidelity.to_openai_messages(gap)
    room = fixed + sum(counter.message(m) for m in msgs[3:]) + counter.message(msgs[1])
    assert fidelity.baseline_request(gap, system, room)[1:] == msgs[3:]
    assert fidelity.baseline_request(gap, system, room, skip=True)[1:] == [msgs[1], *msgs[3:]]


def test_the_scripted_summary_keeps_valued_sentences_within_350_words(fidelity):
    transcript = (
        "User: Always use seed 4242. Thanks!\nAssistant: I named it Kalo-12. Nice day.\n"
        "Tool result: seed 999 [digest]\nUser: What seed was it again 7?"
    )
    body = {"messages": [{"role": "system"}, {"role": "user", "content": (
        "Previous summary:\n## Decisions\n- User: My checkpoint is a_b.safetensors\n\n"
        f"New part of the conversation:\n{transcript}")}]}  # fmt: skip
    summary = fidelity.summary_reply(body)
    assert problem(summary, "stop", transcript) is None  # a summary the checks accept
    decisions = summary.split("## Decisions\n")[1].split("\n## ")[0]
    assert decisions.splitlines() == [
        "- User: My checkpoint is a_b.safetensors",
        "- User: Always use seed 4242.",
        "- Assistant: I named it Kalo-12.",
    ]
    body["messages"][1]["content"] = "New part of the conversation:\n" + "User: 1 2 3 4.\n" * 200
    made = fidelity.summary_reply(body)
    kept = made.split("## Decisions\n")[1].split("\n## ")[0].splitlines()
    assert 60 <= len(kept) < 200  # the newest lines, up to 350 words
    assert sum(len(line.removeprefix("- ").split()) for line in kept) <= 350


def test_a_tiny_run_through_our_server(fidelity, capsys):
    assert fidelity.main(
        ["--seeds", "1", "--turns", "30", "--small-turns", "8", "--windows", "4096,32768",
         "--profiles", "tools"]
    ) == 0  # fmt: skip
    out = capsys.readouterr().out
    targets = [line for line in out.splitlines() if line.startswith("TARGET")]
    assert len(targets) == 2 * 3 + 2  # per variant: 2 windows + the 4K margin; fits per window
    assert "TARGET window=32768 fits 100.0% of the needed facts when the thread fits (PASS" in out


async def test_facts_in_the_latest_messages_are_found_and_a_thread_that_fits_is_whole(fidelity):
    turns = fidelity.conversation(7, 10, "", small=True)
    async with fidelity.Bench(32768) as bench:
        run = await bench.run(turns, "fits", "fallback")
        (question,) = run.questions
        assert question.fits and not question.summary and run.compactions == 0
        for strategy in fidelity.STRATEGIES:
            assert question.found[strategy] == {f.id for f in question.needs}
        assert run.shares() == dict.fromkeys(fidelity.STRATEGIES, 1.0)
    # at 4K a long thread is summarized; a fact stated in the turn right before a question
    # is always in the request, whatever the summary
    long = fidelity.conversation(2, 40, "", profile="tools")
    async with fidelity.Bench(4096) as bench:
        run = await bench.run(long, "long", "fallback")
    assert run.compactions > 0 and any(q.summary for q in run.questions)
    for q in run.questions:
        for fact in q.needs:
            if q.turn - fact.turn == 1:
                assert fact.id in q.found["ours"] and fact.id in q.found["baseline"]
        assert q.found["baseline"] <= q.found["skipping"]
