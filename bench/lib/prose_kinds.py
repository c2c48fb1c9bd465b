"""The kinds of fact bench/memory_prose.py plants in its conversations, and their checks.

A kind is a fact's frame in everyday prose ("We went {x} with the kids last weekend…"), said by
one speaker in one of several phrasings, with a slot filled by one of its options ("hiking"),
and the clause a question asks for it by ("what my children and I got up to on our days off"),
which shares no content word with any phrasing. Its key words (the frame's and the option's,
3-6 in all) are in every phrasing: the presence rule looks for them (prose_words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .prose_words import STOPWORDS, content_stems, has_keys, words

# Proper words a fact may hold (an ordinary place or language), besides "I" and a first word.
ORDINARY_PROPER = frozenset({"Italy", "Norway", "Spanish", "Italian", "Japanese"})


@dataclass(frozen=True)
class Option:
    phrase: str  # what fills {x}
    keys: tuple[str, ...]  # its key words
    answer: str  # the assistant's short answer when asked
    short: str = ""  # how the user refers to it later ("your idea about {short}"), for tips


@dataclass(frozen=True)
class Kind:
    name: str
    speaker: str  # "user" or "assistant": who states it
    keys: tuple[str, ...]  # the frame's key words, in every phrasing
    says: tuple[str, ...]  # one sentence each; {x} is the option's phrase
    asks: tuple[str, ...]  # clauses a question embeds ("what I …"); no word of the fact
    options: tuple[Option, ...]
    around: tuple[str, ...]  # user kinds: the assistant's reactions; assistant kinds: the lead
    tip: bool = False  # the user may report later how it went (the "outcome" kind)


FACTS = Path(__file__).with_name("prose_facts.yaml")


def _option(text: str) -> Option:
    """ "phrase | key words | answer | short" (the last two may be left out or empty)."""
    phrase, keys, answer, short = [*(p.strip() for p in text.split("|")), "", ""][:4]
    return Option(phrase, tuple(keys.split()), answer or phrase, short or phrase)


def _kind(speaker: str, d: dict[str, Any]) -> Kind:
    options = [_option(o) for o in d.get("options", ())] or [
        Option("", (), d["answer"], d.get("short", ""))
    ]
    return Kind(
        d["name"], speaker, tuple(d["keys"].split()), tuple(d["says"]), tuple(d["asks"]),
        tuple(options), tuple(d["around"]), bool(d.get("tip")),
    )  # fmt: skip


@cache
def kinds() -> tuple[tuple[Kind, ...], tuple[Kind, ...], Kind]:
    """The user's kinds, the assistant's, and the outcome of a tip (prose_facts.yaml)."""
    data = yaml.safe_load(FACTS.read_text(encoding="utf-8"))
    return (
        tuple(_kind("user", d) for d in data["user"]),
        tuple(_kind("assistant", d) for d in data["assistant"]),
        _kind("user", data["outcome"]),
    )


def sentence(phrasing: str, option: Option, partner: str, short: str = "") -> str:
    """The fact's sentence: `short` is the tip an outcome reports on."""
    return phrasing.format(x=option.phrase, partner=partner, short=short)


def fact_keys(kind: Kind, option: Option, short: str = "") -> tuple[str, ...]:
    """The frame's, the option's and (an outcome's) the tip's content words."""
    return kind.keys + option.keys + tuple(w for w in words(short) if w not in STOPWORDS)


def shared_words(question: str, fact: str) -> set[str]:
    """Content words (stemmed) the question shares with the fact."""
    return content_stems(question) & content_stems(fact)


_CAPITAL = re.compile(r"(?<=[\w,;:] )[A-Z][\w']*")


def plain_fact_problem(text: str) -> str | None:
    """Why `text` is not a plain everyday sentence (a digit, a made-up or odd name, a file
    name), or None."""
    if re.search(r"\d", text):
        return "a digit"
    if re.search(r"\w[._/\\-]\w|[A-Za-z][A-Z]", text.replace("second-hand", "")):
        return "an identifier or odd capitals"
    for word in _CAPITAL.findall(text):
        if not (word == "I" or word.startswith("I'") or word in ORDINARY_PROPER):
            return f"a capitalized word: {word}"
    return None


def check_kind(
    kind: Kind, partners: tuple[str, ...], dropped: frozenset[str], shorts: tuple[str, ...] = ("",)
) -> None:
    """Raise AssertionError when a kind breaks a rule of the module docstring: every phrasing
    holds the keys, 3-6 keys, none a stopword or a word the scripted summary drops, a plain
    sentence, and no ask shares a content word with any phrasing."""
    assert kind.speaker in ("user", "assistant"), kind.name
    assert kind.options and kind.says and kind.asks and kind.around, kind.name
    for option, short in ((o, s) for o in kind.options for s in shorts):
        keys = fact_keys(kind, option, short)
        assert 3 <= len(keys) <= 6, f"{kind.name}/{option.phrase}/{short}: {len(keys)} keys"
        for key in keys:
            assert key.lower() not in STOPWORDS, f"{kind.name}: key {key!r} is a stopword"
            assert key.lower() not in dropped, f"{kind.name}: the summary drops key {key!r}"
        for phrasing in kind.says:
            for partner in partners:
                text = sentence(phrasing, option, partner, short)
                assert has_keys(text, keys), f"{kind.name}: {keys} not all in {text!r}"
                assert (why := plain_fact_problem(text)) is None, f"{why} in {text!r}"
                for ask in kind.asks:
                    same = shared_words(ask, text)
                    assert not same, f"{kind.name}: {ask!r} shares {same} with {text!r}"
