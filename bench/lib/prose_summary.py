"""The scripted "model summary" of bench/memory_prose.py: what a decent small model makes of
the summarizer's request, by a stated rule with nothing that favours digits or names.

From the new part of the conversation it takes every statement (a sentence of at least 5
words that is not a question; greetings, thanks and the session's date line go), in order,
and paraphrases it lightly: reported speech ("The user said they went…", "The assistant said
it moved…"), without filler words ("honestly", "just", "kind of") and sentiment adjectives
("lovely", "little"). The summary has a fixed budget of WORD_BUDGET words: the new part's
statements get at least half of it and the previous summary's lines the rest; each keeps the
most lines that fit, spread evenly over what it had, in order (a long stretch is thinned, not
cut at one end). A statement said before is not written again. Lines go under the sections
the summarizer asks for.
"""

from __future__ import annotations

import re
from typing import Any

from comfyui_assistant.core.context.context_steps import SUMMARY_CLOSE, SUMMARY_OPEN
from comfyui_assistant.core.summary.summarizer import IN_PLACE_PROMPT, transcript_lines

WORD_BUDGET = 300
MIN_WORDS = 5
_FILLERS = "honestly actually really just basically pretty quite very totally literally anyway"
FILLERS = frozenset(f"{_FILLERS} oh well haha ha um hmm so".split())
PHRASES = re.compile(r"\b(?:kind of|sort of|you know|i mean|to be fair|to be honest),?\s*", re.I)
_ADJECTIVES = "lovely great nice amazing awesome wonderful beautiful gorgeous fantastic"
ADJECTIVES = frozenset(f"{_ADJECTIVES} little tiny huge massive brilliant cosy perfect".split())
USER_SWAPS = {
    "i": "they", "i'm": "they're", "i've": "they've", "i'd": "they'd", "i'll": "they'll",
    "me": "them", "my": "their", "mine": "theirs", "myself": "themselves", "we": "they",
    "we're": "they're", "we've": "they've", "we'd": "they'd", "we'll": "they'll", "us": "them",
    "our": "their", "ours": "theirs", "you": "the assistant", "your": "the assistant's",
    "you're": "the assistant is", "you've": "the assistant has", "you'd": "the assistant would",
}  # fmt: skip
ASSISTANT_SWAPS = {
    "i": "it", "i'm": "it is", "i've": "it has", "i'd": "it would", "i'll": "it will",
    "me": "it", "my": "its", "you": "the user", "your": "the user's", "you're": "the user is",
    "you've": "the user has", "you'll": "the user will", "you'd": "the user would",
    "yourself": "themselves",
}  # fmt: skip
# Words the rule removes or replaces: no fact's key word may be one (prose_kinds checks).
DROPPED = FILLERS | ADJECTIVES | set(USER_SWAPS) | set(ASSISTANT_SWAPS)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_SESSION = re.compile(r"^Session \d+, ")
_TOKEN = re.compile(r"^(\W*)([\w'’]+)(\W*)$")


def reported(speaker: str, sentence: str) -> str:
    """A statement in reported speech, lightly trimmed."""
    swaps = USER_SWAPS if speaker == "User" else ASSISTANT_SWAPS
    out = []
    for token in PHRASES.sub("", sentence).split():
        m = _TOKEN.match(token)
        if m is None:
            out.append(token)
            continue
        lead, word, tail = m.groups()
        low = word.lower().replace("’", "'")
        if low in FILLERS or low in ADJECTIVES:
            if out and tail.replace(",", ""):
                out[-1] += tail.replace(",", "")  # (a sentence's end stays)
            continue
        out.append(f"{lead}{swaps.get(low, word)}{tail}")
    said = " ".join(out).strip(" ,")
    if said[1:2].islower():
        said = said[0].lower() + said[1:]  # ("Something calm" → "said something calm")
    who = "The user" if speaker == "User" else "The assistant"
    return f"{who} said {said}" if said else ""


def sentences(text: str) -> list[str]:
    return _SENTENCES.split(text.strip())


def statements(part: str) -> list[str]:
    """The new part's statements, in order, paraphrased (lines without a speaker continue
    the previous speaker's message)."""
    out, speaker = [], ""
    for line in part.splitlines():
        head, sep, text = line.partition(": ")
        if sep and head in ("User", "Assistant", "Tool result"):
            speaker = head
        else:
            text = line
        if speaker not in ("User", "Assistant") or _SESSION.match(text):
            continue
        text = re.sub(r"\s*\[calls: .*\]$", "", text)
        for sentence in sentences(text):
            if sentence.endswith("?") or len(sentence.split()) < MIN_WORDS:
                continue
            said = reported(speaker, sentence)
            if said:
                out.append(said)
    return out


_BLOCKS = re.compile(r"\n*<(system-reminder|recalled)>.*?</\1>", re.DOTALL)


def in_place_parts(messages: list[dict[str, Any]], prompt: str) -> tuple[str, str]:
    """(the previous summary, the transcript to summarize) of a request asked in place: the
    running summary's block where the history begins; the messages up to the one whose start
    the instruction quotes (all when it quotes none), without reminder and recalled blocks."""
    quoted = re.search(r"“(.*?)”", prompt)
    boundary = quoted.group(1).removesuffix(" …") if quoted else None
    previous, taken = "", []
    for message in messages:
        text = _BLOCKS.sub("", str(message.get("content") or ""))
        if SUMMARY_CLOSE in text:
            block, _, text = text.partition(SUMMARY_CLOSE)
            previous = block.split(SUMMARY_OPEN, 1)[-1]
            text = text.strip()
        if boundary is not None and " ".join(text.split()).startswith(boundary):
            break
        taken.append({**message, "content": text})
    return previous, "\n".join(transcript_lines(taken))


def _words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


def evenly(lines: list[str], budget: int) -> list[str]:
    """The most lines, spread evenly over `lines` in order, whose words fit `budget`."""
    if _words(lines) <= budget:
        return lines
    n = len(lines)
    for k in range(n, 0, -1):
        picked = [lines[(2 * j + 1) * n // (2 * k)] for j in range(k)]
        if _words(picked) <= budget:
            return picked
    return []


def summary_reply(body: dict[str, Any]) -> str:
    """The scripted summary for a summarizer's request (the rule in the module docstring):
    a transcript in its last message, or (asked after the chat's own request) the messages
    before that, up to the one the instruction quotes."""
    prompt = str(body["messages"][-1]["content"])
    if prompt.startswith(IN_PLACE_PROMPT[:40]):
        previous, part = in_place_parts(body["messages"][1:-1], prompt)
    else:
        head, _, part = prompt.partition("New part of the conversation:\n")
        previous = head.split("Previous summary:\n", 1)[1] if "Previous summary:\n" in head else ""
    before = [line[2:] for line in previous.splitlines() if line.startswith("- ")]
    before = [line for line in before if line != "none"]
    new = [line for line in dict.fromkeys(statements(part)) if line not in before]
    new = evenly(new, max(WORD_BUDGET // 2, WORD_BUDGET - _words(before)))
    kept = evenly(before, WORD_BUDGET - _words(new)) + new
    lines = "\n".join(f"- {line}" for line in kept) or "- none"
    return (
        "## Goals\n- none\n## Workflow\n- none\n"
        f"## Decisions\n{lines}\n"
        "## Preferences the user stated\n- none\n## Open requests\n- none"
    )
