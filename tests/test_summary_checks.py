"""A model summary is used only when it can be trusted; long stretches are summarized in
pieces that fit the model's window, each building on the one before."""

from __future__ import annotations

from comfyui_assistant.core.summary.summarizer import chunks, summarize
from comfyui_assistant.core.summary.summary_checks import problem
from comfyui_assistant.core.tokens.tokens import counter_for

from .helpers import assistant_message, summary_text, user
from .scripted_provider import Completion, ScriptedProvider

GOOD = summary_text("a warm portrait with seed 1234")
SOURCE = "User: make it warm, seed 1234\nAssistant: done, node 3 now uses seed 1234."


def test_a_good_summary_passes_and_each_kind_of_bad_one_is_named():
    assert problem(GOOD, "stop", SOURCE) is None
    assert problem(GOOD, "length", SOURCE) == "it hit its token limit"
    assert problem(GOOD + "\n<|im_end|>", "stop", SOURCE) == "it contains chat template tokens"
    assert problem(GOOD + "\n<start_of_turn>model", "stop", SOURCE) is not None
    looping = GOOD + "\n" + "- the seed is 1234 and it stays\n" * 3
    assert problem(looping, "stop", SOURCE) == "it repeats itself"
    assert problem("The user wants a warm portrait.", "stop", SOURCE).startswith("it lacks")
    long_source = "\n".join(  # thirty distinct lines: the summary copies them all
        "User: " + " ".join(f"w{i}x{j}" for j in range(12)) for i in range(30)
    )
    echoed = summary_text(long_source)
    assert problem(echoed, "stop", long_source) == (
        "it copies the conversation instead of summarizing it"
    )


def test_the_transcript_is_cut_into_pieces_that_fit_oldest_first():
    count = counter_for("gpt-4").text
    lines = [f"User: request {i} " + "word " * 50 for i in range(40)]
    pieces = chunks(lines, 400, count)
    assert len(pieces) > 4 and all(count(p) <= 400 for p in pieces)
    assert "\n".join(pieces) == "\n".join(lines)  # nothing lost, in order
    huge = chunks(["User: " + "paste " * 5000], 400, count)
    assert len(huge) == 1 and count(huge[0]) <= 400 and "[…]" in huge[0]


async def test_a_long_stretch_is_summarized_in_chained_requests_that_fit_the_window():
    provider = ScriptedProvider()
    await provider.start()
    try:
        from comfyui_assistant.core.provider.provider import Provider
        from comfyui_assistant.core.provider.provider_config import resolve

        client = Provider(resolve({}, {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m"}))
        ui = []
        for i in range(60):
            ui += [user(f"Request {i}: " + "make it warmer " * 30, f"u{i}")]
            ui += [assistant_message(f"Answer {i}: " + "done " * 30, f"a{i}")]
        ids = [m["id"] for m in ui]
        provider.enqueue(*(Completion(summary_text(f"part {k}")) for k in range(10)))
        made = await summarize(client, "m", None, ui, ids, window=4096)
        count = counter_for("m")
        calls = provider.requests
        assert len(calls) > 2  # several pieces
        assert all(count.messages(c["messages"]) + c["max_tokens"] <= 4096 for c in calls)
        # each builds on the summary before it; the last one is kept
        assert summary_text("part 0") in calls[1]["messages"][1]["content"]
        assert made.text.startswith(summary_text(f"part {len(calls) - 1}"))
        assert not made.fallback
        # a summary cut at its token limit is not used: the digest stands in
        provider.replies.clear()
        provider.enqueue(Completion(GOOD, finish_reason="length"))
        cut = await summarize(client, "m", None, ui[:4], ids[:4], window=32_000)
        # (its four messages name nothing: the digest says they were left out)
        assert cut.fallback and cut.text == "Digest (oldest first) (4 weaker lines left out):"
        await client.close()
    finally:
        await provider.stop()


async def test_a_summary_that_takes_too_long_is_replaced_and_the_log_says_why(caplog):
    provider = ScriptedProvider()
    await provider.start()
    try:
        from comfyui_assistant.core.provider.provider import Provider
        from comfyui_assistant.core.provider.provider_config import resolve

        client = Provider(resolve({}, {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m"}))
        ui = [user("Make it warm, seed 1234.", "u0"), assistant_message("Done.", "a0")]
        provider.enqueue(Completion(GOOD, delay=2.0))
        with caplog.at_level("WARNING", logger="comfyui_assistant"):
            made = await summarize(client, "m", None, ui, ["u0", "a0"], timeout=0.2)
        assert made.fallback and "seed 1234" in made.text
        # (a timeout's own text is empty: the line names it)
        assert "summarizing failed (no summary within 0.2 s)" in caplog.text
        await client.close()
    finally:
        await provider.stop()


async def test_a_model_whose_summaries_keep_being_rejected_rests_then_is_asked_again(caplog):
    """Each rejected summary costs a whole generation on a compaction turn (about 30 s of a
    60 s wait on Gemma 3 270M at 8K): after two in a row the digest stands in without asking,
    for REST summaries; then the model is asked again, and a good summary trusts it again.
    Another model on the same server is asked meanwhile."""
    from comfyui_assistant.core.provider.provider import Provider
    from comfyui_assistant.core.provider.provider_config import resolve
    from comfyui_assistant.core.summary.summary_trust import REST

    provider = ScriptedProvider()
    await provider.start()
    client = Provider(resolve({}, {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m"}))
    ui = [user("Make it warm, seed 1234.", "u0"), assistant_message("Done.", "a0")]
    ids = ["u0", "a0"]
    try:
        provider.enqueue(*(Completion(GOOD, finish_reason="length") for _ in range(2)))
        for _ in range(2):
            assert (await summarize(client, "m", None, ui, ids, window=32_000)).fallback
        assert len(provider.requests) == 2
        caplog.set_level("WARNING", logger="comfyui_assistant")
        for _ in range(REST):
            made = await summarize(client, "m", None, ui, ids, window=32_000)
            assert made.fallback and "seed 1234" in made.text
        assert len(provider.requests) == 2  # not asked while it rests
        assert (
            "not asking for a summary (the model's last 2 summaries were not usable (it hit its"
            " token limit); not asking it this time, asking again after 7 more)" in caplog.text
        )
        assert "asking again the next one" in caplog.text
        provider.enqueue(Completion(GOOD), Completion(GOOD))
        assert not (await summarize(client, "other", None, ui, ids, window=32_000)).fallback
        assert not (await summarize(client, "m", None, ui, ids, window=32_000)).fallback
        assert len(provider.requests) == 4  # asked again after its rest; trusted again
        provider.enqueue(Completion(GOOD, finish_reason="length"), Completion(GOOD))
        assert (await summarize(client, "m", None, ui, ids, window=32_000)).fallback
        assert not (await summarize(client, "m", None, ui, ids, window=32_000)).fallback
        assert len(provider.requests) == 6  # one rejection after a good one: still asked
        # a summary that takes longer than its timeout costs as much: two in a row, a rest
        provider.enqueue(*(Completion(GOOD, delay=1.0) for _ in range(2)))
        for _ in range(3):
            assert (await summarize(client, "m", None, ui, ids, timeout=0.2)).fallback
        assert len(provider.requests) == 8
        assert "were not usable (no summary within 0.2 s)" in caplog.text
    finally:
        await client.close()
        await provider.stop()
