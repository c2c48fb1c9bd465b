"""The deterministic digest (core/fallback_summary): both speakers, ranked by what a line
names, dates or counts, the user's instructions first, the weakest out first, in tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest
from comfyui_assistant.core.summary.fallback_summary import (
    facts_block,
    facts_of,
    fallback_summary,
    parse_previous,
    split_facts,
)
from comfyui_assistant.core.tokens.tokens import counter_for
from hypothesis import given, settings
from hypothesis import strategies as st

COUNT = counter_for("scripted-model").text


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


CONVERSATION: list[dict[str, Any]] = [
    user("Build a txt2img workflow with dreamshaper_8.safetensors\nAlways use seed 123456789."),
    {
        "role": "assistant",
        "content": "Adding the loader and the sampler.",
        "tool_calls": [
            call("call_1", "addNode", {"nodeType": "CheckpointLoaderSimple"}),
            call("call_2", "addNode", {"nodeType": "KSampler", "widgets": {"steps": 30}}),
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"nodeId":4}'},
    {"role": "tool", "tool_call_id": "call_2", "content": '{"nodeId":12}'},
    assistant('The sampler is node 12. Prompt: "a red fox in the snow".'),
    {"role": "user", "content": [{"type": "text", "text": "Thanks, now run it"}]},
    {"role": "assistant", "content": None, "tool_calls": [call("call_3", "queueWorkflow", {})]},
    {
        "role": "tool",
        "tool_call_id": "call_3",
        "content": "Error: Required input is missing: clip (node 6)",
    },
    assistant("The text encoder is not connected; shall I fix it?"),
]


def digest(messages: list[dict[str, Any]], max_tokens: int, previous: str | None = None) -> str:
    out = fallback_summary(messages, previous, max_tokens, COUNT)
    assert COUNT(out) <= max_tokens  # the budget, counted as the engine counts
    return out


def test_the_whole_digest_in_conversation_order_attributed() -> None:
    assert digest(CONVERSATION, 1000, "## Goals\n- a fox picture") == (
        "Earlier:\n"
        "## Goals\n"
        "- a fox picture\n"
        "Digest (oldest first) (3 weaker lines left out):\n"
        "- user: Build a txt2img workflow with dreamshaper_8.safetensors\n"
        "- user: Always use seed 123456789.\n"
        "- tool: addNode CheckpointLoaderSimple -> node 4 (recall: call_1)\n"
        "- tool: addNode KSampler -> node 12 (recall: call_2)\n"
        "- assistant: The sampler is node 12.\n"
        '- assistant: Prompt: "a red fox in the snow".\n'
        "- tool: queueWorkflow -> error: Required input is missing: clip (node 6)"
        " (recall: call_3)"
    )  # (left out, naming nothing: "Adding the loader…", "Thanks, now run it", a question)


def test_what_a_line_names_dates_or_counts() -> None:
    assert facts_of("I set the seed to 4417 and saved it as renders/fox_v2.png.") == (
        "seed to 4417",
        "renders/fox_v2.png",
    )
    assert facts_of("Your deadline is March 3; we need seven variations by Friday 3pm.") == (
        "March 3",
        "seven variations",
        "Friday",
        "3pm",
    )
    assert facts_of("I titled its group Kalomi Upscale on node 27, preset Kalo-42.") == (
        "Kalomi Upscale",
        "node 27",
        "Kalo-42",
    )
    assert facts_of("Thanks, looks good. I think so.") == ()


def test_what_the_assistant_stated_survives_pressure_and_chatter_never_enters() -> None:
    messages = [
        user("Can you help me with the fox render?"),
        assistant("I set the seed to 4417 and saved it as renders/fox_v2.png."),
        user("ok great"),
        assistant("Your deadline is March 3, so I queued the final batch of 8 images."),
        user("Thanks!"),
        assistant("Glad it works."),
    ]
    assert digest(messages, 1000) == (  # chatter costs tokens and answers nothing later
        "Digest (oldest first) (4 weaker lines left out):\n"
        "- assistant: I set the seed to 4417 and saved it as renders/fox_v2.png.\n"
        "- assistant: Your deadline is March 3, so I queued the final batch of 8 images."
    )
    tight = digest(messages, 55)  # the statements shrink to what they name
    assert "4417" in tight and "renders/fox_v2.png" in tight and "March 3" in tight
    assert "(facts)" in tight and "help" not in tight


def test_the_users_instructions_outlast_everything_else() -> None:
    messages = [user("Never use the Kalomi LoRA, it ruins faces.")]
    for k in range(30):
        messages += [
            user(f"Can you help with the sampler {k}?"),
            assistant(f"Added sampler {k} as node {k + 100} with 20 steps."),
            user("Thanks, looks good."),
        ]
    for budget in range(400, 30, -5):  # whole while anything else is
        out = digest(messages, budget)
        if "- assistant: Added" in out or "looks good" in out or "help" in out:
            assert "- user: Never use the Kalomi LoRA, it ruins faces." in out
    out = digest(messages, 60)  # every other line shrank before it did
    assert "looks good" not in out and "help" not in out and "- assistant:" not in out
    assert "- assistant (facts): 29; node 129; 20 steps" in out  # (the newest of equals)
    tighter = digest(messages, 30)  # it shrinks last, keeping what makes it an instruction
    assert "- user (facts): never: Kalomi LoRA" in tighter
    assert "sampler" not in tighter and "node 1" not in tighter


def test_eviction_order_repeats_and_chatter_then_values_then_instructions() -> None:
    messages = [
        user("Run it."),  # repeated by the last line
        user("Hmm, let me think about it."),  # chatter
        user("Make it 1024x1024 and call it portrait_v3."),  # an instruction
        assistant("The sampler runs 30 steps on node 9, saved as fox_final.png."),  # values
        user("Run it."),
    ]

    def present(out: str) -> list[str]:
        marks = {"chat": "let me think", "value": "fox_final.png", "instruction": "portrait_v3"}
        return (["rep"] if out.count("Run it.") == 2 else []) + [
            name for name, mark in marks.items() if mark in out
        ]

    gone_below: dict[str, int] = {}  # the largest budget at which each is gone
    for budget in range(120, 0, -1):
        now = present(digest(messages, budget))
        for name in {"rep", "chat", "value", "instruction"} - set(now):
            gone_below.setdefault(name, budget)
    assert gone_below["rep"] >= gone_below["chat"] > gone_below["value"]
    assert gone_below["value"] > gone_below["instruction"]


def test_a_shrunk_line_keeps_what_it_names_and_the_rest_still_reads_in_order() -> None:
    messages = [
        assistant("First I loaded the checkpoint juggernaut_xl.safetensors for you, as asked."),
        user("Thanks."),
        assistant("Then the upscaler went to node 14 with a 2x model, ready to run."),
    ]
    out = digest(messages, 45)
    lines = out.splitlines()[1:]
    assert lines == [
        "- assistant (facts): juggernaut_xl.safetensors",
        "- assistant (facts): node 14; 2x",
    ]


def test_tool_lines_go_whole_before_statements_and_never_shrink() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "getWorkflow", {})]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"nodes": [1, 2, 3]})},
        assistant("Your graph has the sampler on node 2."),
    ]
    whole = digest(messages, 200)
    assert "- tool: getWorkflow -> 3 nodes (recall: c1)" in whole
    out = digest(messages, COUNT(whole) - 3)
    assert "getWorkflow" not in out and "- assistant: Your graph has the sampler on node 2" in out


def test_a_missing_result_says_not_run() -> None:
    messages = [{"role": "assistant", "tool_calls": [call("c9", "getWorkflow", {})]}]
    assert digest(messages, 100) == "Digest (oldest first) (1 weaker lines left out):"
    named = [{"role": "assistant", "tool_calls": [call("c9", "getImage", {"name": "fox_v2.png"})]}]
    assert "- tool: getImage" in digest(named, 100) and "not run (recall: c9)" in digest(named, 100)


def test_a_long_message_offers_its_strongest_sentences_only() -> None:
    paste = "It failed again, here's the log:\n" + "\n".join(
        f'File "/ComfyUI/nodes_{k}.py", line {k}, in run_{k}' for k in range(20)
    )
    out = digest([user(paste)], 2000)
    assert out.count("- user:") == 3


@pytest.mark.parametrize("budget", [0, 1, 5, 17, 64, 333])
def test_the_token_budget_holds_exactly(budget: int) -> None:
    long = CONVERSATION * 30 + [user("Finally: make it 1024x1024 please")]
    out = digest(long, budget, "## Goals\n" + "- keep it warm\n" * 200)
    if budget >= 64:
        assert COUNT(out) >= budget - 20  # the room is used, not wasted
        assert out.count("- user: Always use seed 123456789.") == 1  # the newest copy


def test_repeats_go_first_and_the_newest_copy_stays() -> None:
    messages = [
        user("Always use seed 777."),
        *([user("Run it."), assistant("Done: fox.png.")] * 10),
    ]
    # the same words said again by the same speaker: one line, the newest, and how often
    assert digest(messages, 1000) == (
        "Digest (oldest first) (1 weaker lines left out):\n- user: Always use seed 777.\n"
        "- assistant: Done: fox.png. (said 10 times)"
    )
    # chained: a digest's counted line said again counts on
    again = digest([assistant("Done: fox.png.")], 1000, digest(messages, 1000))
    assert "- assistant: Done: fox.png. (said 11 times)" in again and again.count("fox.png") == 1


def test_deterministic() -> None:
    outputs = {digest(CONVERSATION * 5, 150, "prev") for _ in range(3)}
    assert len(outputs) == 1


def test_chained_on_a_previous_digest_its_lines_are_ranked_again() -> None:
    first = digest(
        [user("From now on save everything under renders/flux_tests."), user("Run it.")], 200
    )
    assert parse_previous(first).lines[0].tier == 3  # parsed back as an instruction
    later = [
        assistant("Noted, see flux.png."),
        user("Run it."),
        *([assistant("Sure, done."), user("ok")] * 5),
    ]
    for budget in range(80, 30, -1):
        second = digest(later, budget, first)
        assert "renders/flux_tests" in second
        assert "flux_tests.\n- user: Run it." not in second or second.count("Run it.") == 2
    assert "weaker lines left out" in second and "Run it" not in second
    third = digest([user("ok")], 1000, second)  # what was left out is still counted
    assert parse_previous(third).omitted >= parse_previous(second).omitted


def test_chained_on_a_model_summary_it_is_kept_as_the_earlier_block_and_shortened() -> None:
    model = "\n".join(
        [
            *("## Goals", "- a fox picture", "## Decisions"),
            *(f"- idea {k}" for k in range(60)),
            *("## Open requests", "- a portrait version"),
        ]
    )
    facts = "Kept verbatim:\n- user: Always use seed 4417."
    out = digest([assistant("I saved it as fox_v2.png.")], 120, f"{model}\n\n{facts}")
    earlier, _, rest = out.partition("\nDigest")
    assert earlier.startswith("Earlier:\n## Goals\n- a fox picture")
    assert earlier.endswith("- a portrait version") and "\n…\n" in earlier
    assert "- user: Always use seed 4417." in rest  # the facts block's lines re-enter
    assert "fox_v2.png" in rest
    assert COUNT(earlier) >= 50  # at least about half the budget stays with it


def test_an_older_format_summary_is_kept_as_the_earlier_block() -> None:
    old = "User requests:\n- Build it\nFacts: seed 5; a.png"
    assert parse_previous(old).earlier == old and parse_previous(old).lines == []


def test_the_facts_block_keeps_both_speakers_without_chatter_or_repeats() -> None:
    messages = [
        user("Always use seed 4417."),
        assistant("I saved the preset as Kalo-42."),
        assistant("The render is fox.png."),
        user("Thanks!"),
        assistant("Saved: fox.png."),
    ]
    block = facts_block(messages, None, 200, COUNT)
    assert block == (
        "Kept verbatim:\n- user: Always use seed 4417.\n"
        "- assistant: I saved the preset as Kalo-42.\n- assistant: Saved: fox.png."
    )
    text, facts = split_facts(f"summary\n\n{block}")
    assert text == "summary" and facts.startswith("\n- user")
    chained = facts_block([user("ok")], f"summary\n\n{block}", 200, COUNT)
    assert chained == block  # the previous block's lines carry forward
    small = facts_block(messages * 20, None, 25, COUNT)
    assert COUNT(small) <= 25 and "4417" in small


def test_fast_on_pathological_text() -> None:
    for text in ("a" * 100_000, "seed" + " " * 20_000 + "x", "model/" * 20_000, "1 " * 50_000):
        assert digest([user(text)], 500).startswith("Digest")


MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool"]), "content": st.text(max_size=300)},
        optional={
            "tool_call_id": st.sampled_from(["a", "b"]),
            "tool_calls": st.lists(
                st.builds(
                    call,
                    st.sampled_from(["a", "b"]),
                    st.sampled_from(["addNode", "x"]),
                    st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=50)),
                ),
                max_size=3,
            ),
        },
    ),
    max_size=15,
)


@settings(max_examples=150, deadline=None)
@given(messages=MESSAGES, previous=st.none() | st.text(max_size=2000), cap=st.integers(0, 600))
def test_property_within_the_budget_and_deterministic(
    messages: list[dict[str, Any]], previous: str | None, cap: int
) -> None:
    summary = digest(messages, cap, previous)
    assert fallback_summary(messages, previous, cap, COUNT) == summary
    again = digest(messages, cap, summary)  # chained on itself: still within the budget
    assert COUNT(again) <= cap


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a count keeps its unit: the setting pattern does not take "frames" from "49 frames"
        ("For video clips, render 49 frames at 16 fps.", ("49 frames", "16 fps")),
        ("set steps to 30 and cfg 7.5", ("steps to 30", "cfg 7.5")),
        # a product and its number stay one fact
        ("My GPU is an RTX 3060 with 12 GB of VRAM.", ("GPU", "RTX 3060", "12 GB", "VRAM")),
        # a quantity named by the word before it
        ("Save the finals as WebP at quality 92.", ("WebP", "quality 92")),
        ("It took 20 seconds from 3 nodes.", ("20 seconds", "3 nodes")),
        # a weekday with its date
        ("The deliverable is due on Friday the 4th.", ("Friday the 4th",)),
    ],
)
def test_what_a_line_names_is_kept_in_one_piece(text, facts):
    # (session_sim at 8K: shrunk lines had split "RTX; 3060", "Friday; 4th", lost "49")
    assert facts_of(text) == facts


def test_template_tokens_our_reminders_and_pasted_json_are_never_lines() -> None:
    """Seen in the stored digests of a real 30-turn replay on a small local model: its answers
    echoed the reminder block and the chat template's end token, and pasted JSON became
    "facts"."""
    echo = (
        "<system-reminder>\n- Current date and time: 2026-05-14 10:00 UTC (Thursday)\n"
        "</system-reminder> We went hiking with the kids at Loch Ness.<|im_end|>"
    )
    messages = [
        user(echo),
        assistant("- Current date and time: 2026-05-14 10:00 UTC (Thursday) <|im_end|>"),
        assistant("Sure! <end_of_turn> She started painting again at Kalomi Studio [/INST]"),
        user('Here is the node:\n{\n"id": 1,\n"type": "KSampler",\n"inputs": [],\n},'),
        user("Use 512 by 768, and set seed=42 please."),
    ]
    out = digest(messages, 1000)
    assert out == (  # ("Sure!", "Here is the node:" name nothing: left out)
        "Digest (oldest first) (2 weaker lines left out):\n"
        "- user: We went hiking with the kids at Loch Ness.\n"
        "- assistant: She started painting again at Kalomi Studio\n"
        "- user: Use 512 by 768, and set seed=42 please."
    )


def test_only_lines_that_earn_their_tokens_enter_the_digest() -> None:
    """What the newest messages cannot stand in for: the user's instructions, and lines that
    name a thing rare in the thread. Everyday prose, small talk, questions, a session's date, a
    count in words, a capitalized common word and a name the whole thread uses are left out
    and counted (bench/memory_prose.py: such lines held less of what later questions needed
    than the same tokens of the newest messages)."""
    messages = [
        user("Session 5, Thursday 29 February"),
        user("We went hiking with the kids last weekend up by the lake."),
        assistant("That sounds lovely!"),
        user("I'm learning Japanese on an app these days, mostly on the bus."),
        user("Never use the Kalomi LoRA, it ruins faces."),
        user("What is the Save Image node for?"),
        assistant("Around twenty steps is plenty for a first pass."),
        assistant("Ah, Definitely, it definitely helps."),
        *(user(f"Not ComfyUI related, but the {pet} is sick.") for pet in ("cat", "dog", "fish")),
        user("I keep imagining a lighthouse at dusk."),
    ]
    assert digest(messages, 1000) == (
        "Digest (oldest first) (10 weaker lines left out):\n"
        "- user: I'm learning Japanese on an app these days, mostly on the bus.\n"
        "- user: Never use the Kalomi LoRA, it ruins faces."
    )
    # nothing that earns: the heading alone says what was left out
    assert digest(messages[:3], 1000) == "Digest (oldest first) (3 weaker lines left out):"
    assert digest([], 1000) == ""
