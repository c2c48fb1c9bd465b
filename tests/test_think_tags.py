from __future__ import annotations

from itertools import pairwise

import pytest
from comfyui_assistant.core.stream.think_tags import Kind, ThinkTagSplitter, visible_text
from hypothesis import given, settings
from hypothesis import strategies as st

Segments = list[tuple[Kind, str]]


def run(chunks: list[str]) -> Segments:
    splitter = ThinkTagSplitter()
    out: Segments = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    out.extend(splitter.flush())
    return out


def merge(segments: Segments) -> Segments:
    merged: Segments = []
    for kind, text in segments:
        if merged and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return merged


def split_at(s: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(cuts), len(s)]
    return [s[a:b] for a, b in pairwise(bounds)]


def test_plain_text_passes_through_unchanged() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("Hello ") == [("text", "Hello ")]
    assert splitter.feed("world\n") == [("text", "world\n")]
    assert splitter.flush() == []


def test_think_block_then_answer() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>The user wants a node.</think>\n\nSure.") == [
        ("reasoning", "The user wants a node."),
        ("text", "Sure."),
    ]
    assert splitter.flush() == []


THINK = "<think>plan it</think>\n\nThe answer"
EXPECTED: Segments = [("reasoning", "plan it"), ("text", "The answer")]


@pytest.mark.parametrize("cut", range(len(THINK) + 1))
def test_tags_split_at_every_position(cut: int) -> None:
    assert merge(run([THINK[:cut], THINK[cut:]])) == EXPECTED


def test_tags_split_at_every_pair_of_positions() -> None:
    for a in range(len(THINK) + 1):
        for b in range(a, len(THINK) + 1):
            chunks = [THINK[:a], THINK[a:b], THINK[b:]]
            assert merge(run(chunks)) == EXPECTED, chunks


def test_one_character_at_a_time() -> None:
    assert merge(run(list(THINK))) == EXPECTED


def test_nothing_is_emitted_while_the_opening_tag_is_incomplete() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("  <th") == []
    assert splitter.feed("ink>") == []
    assert splitter.feed("idea</th") == [("reasoning", "idea")]
    assert splitter.feed("ink>ok") == [("text", "ok")]
    assert splitter.flush() == []


def test_leading_whitespace_before_think_is_dropped() -> None:
    assert run([" \n\t<think>x</think>y"]) == [("reasoning", "x"), ("text", "y")]
    assert run(["\n", " ", "<think>x</think>y"]) == [("reasoning", "x"), ("text", "y")]


def test_text_after_close_has_leading_whitespace_stripped() -> None:
    assert run(["<think>x</think>\n\n  Hello\n\nWorld \n"]) == [
        ("reasoning", "x"),
        ("text", "Hello\n\nWorld \n"),
    ]
    assert run(["<think>x</think>", "\n", "\n", "Hello"]) == [
        ("reasoning", "x"),
        ("text", "Hello"),
    ]


def test_leading_whitespace_of_plain_text_is_kept() -> None:
    assert merge(run(["  ", "\nHello"])) == [("text", "  \nHello")]


def test_empty_think_block() -> None:
    assert run(["<think></think>answer"]) == [("text", "answer")]
    assert run(["<think>\n</think>\n"]) == [("reasoning", "\n")]


def test_think_tag_in_prose_after_visible_text_stays_text() -> None:
    assert merge(run(["Use a <think> tag like <think>this</think> in the prompt."])) == [
        ("text", "Use a <think> tag like <think>this</think> in the prompt.")
    ]
    assert merge(run(["Hi\n", "<think>", "x</think>"])) == [("text", "Hi\n<think>x</think>")]
    assert merge(run(["<think>a</think>Answer ", "<think>b</think>"])) == [
        ("reasoning", "a"),
        ("text", "Answer <think>b</think>"),
    ]


def test_close_tag_without_open_is_text() -> None:
    assert run(["</think>hello"]) == [("text", "</think>hello")]


def test_similar_tags_are_text() -> None:
    assert merge(run(["<thinking>", "x</thinking>"])) == [("text", "<thinking>x</thinking>")]
    assert merge(run(["<thi", "nk"])) == [("text", "<think")]


def test_second_think_block_before_any_text_is_reasoning() -> None:
    assert merge(run(["<think>a</think>\n<think>b</think>c"])) == [
        ("reasoning", "ab"),
        ("text", "c"),
    ]


def test_unfinished_think_block_flushes_as_reasoning() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>still thinking") == [("reasoning", "still thinking")]
    assert splitter.flush() == []

    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>almost done</thi") == [("reasoning", "almost done")]
    assert splitter.flush() == [("reasoning", "</thi")]

    splitter = ThinkTagSplitter()
    assert splitter.feed("<think>a <") == [("reasoning", "a ")]
    assert splitter.flush() == [("reasoning", "<")]


def test_reasoning_keeps_angle_brackets_that_are_not_the_close_tag() -> None:
    assert merge(run(["<think>if a <", "/b> or </thin", "g> then</", "think>ok"])) == [
        ("reasoning", "if a </b> or </thing> then"),
        ("text", "ok"),
    ]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["<"], [("text", "<")]),
        (["<thi"], [("text", "<thi")]),
        ([" <thi"], [("text", " <thi")]),
        (["<think"], [("text", "<think")]),
        (["<think>a</think>", "<"], [("reasoning", "a"), ("text", "<")]),
        (["<think>a</think>\n", "<th"], [("reasoning", "a"), ("text", "<th")]),
        (["Hello <"], [("text", "Hello <")]),
    ],
)
def test_partial_tag_at_end_of_stream_is_flushed_as_text(
    chunks: list[str], expected: Segments
) -> None:
    splitter = ThinkTagSplitter()
    fed: Segments = []
    for chunk in chunks:
        fed.extend(splitter.feed(chunk))
    assert merge(fed + splitter.flush()) == expected


@pytest.mark.parametrize("chunks", [[""], ["   "], [" ", "\n\t"], ["<think>a</think>", "\n\n"]])
def test_whitespace_only_remainder_is_dropped(chunks: list[str]) -> None:
    expected: Segments = [("reasoning", "a")] if "<think>a</think>" in chunks else []
    assert run(chunks) == expected


def test_flush_is_idempotent() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("<thi") == []
    assert splitter.flush() == [("text", "<thi")]
    assert splitter.flush() == []


# Text built from the pieces that matter, so tags and their fragments are common.
TOKENS = st.sampled_from(
    ["<think>", "</think>", "<", "</", "<thi", "think>", "</thin", ">", " ", "\n", "a", "Hi", "é"]
)
# Most streams open with a think block (the only place tags matter), some with whitespace first.
OPENINGS = st.sampled_from(["", " ", "\n", "<think>", "<think>", " <think>", "\n\n<think>"])
STREAMS = st.builds(
    lambda head, body: head + "".join(body),
    OPENINGS,
    st.lists(TOKENS | st.text(max_size=4), max_size=12),
)


@st.composite
def stream_and_cuts(draw: st.DrawFn) -> tuple[str, list[int]]:
    s = draw(STREAMS)
    cuts = draw(st.lists(st.integers(0, len(s)), max_size=8))
    return s, cuts


@settings(max_examples=300, deadline=None)
@given(stream_and_cuts())
def test_chunking_never_changes_the_result(case: tuple[str, list[int]]) -> None:
    s, cuts = case
    assert merge(run(split_at(s, cuts))) == merge(run([s]))


@settings(max_examples=200, deadline=None)
@given(STREAMS)
def test_one_character_at_a_time_matches_whole(s: str) -> None:
    assert merge(run(list(s))) == merge(run([s]))


@settings(max_examples=200, deadline=None)
@given(STREAMS)
def test_segments_are_never_empty_and_text_is_never_lost_without_tags(s: str) -> None:
    segments = run(list(s))
    assert all(text for _, text in segments)
    if "<think>" not in s:
        # Without an opening tag everything is text; only whitespace-only streams vanish.
        assert merge(segments) == ([("text", s)] if s.strip() else [])


def test_a_whole_answer_loses_its_leading_reasoning_only() -> None:
    assert visible_text("<think>plan it</think>\n\nThe summary.") == "The summary."
    assert visible_text("  <think>a\nb</think>Done") == "Done"
    assert visible_text("Use <think> tags like this: <think>x</think>") == (
        "Use <think> tags like this: <think>x</think>"
    )
    assert visible_text("<think>never closed") == ""
