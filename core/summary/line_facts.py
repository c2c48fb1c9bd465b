"""What a line of the deterministic digest names, dates or counts (`facts_of`), and which of
those name something particular in a stretch of conversation (`distinctive`): what a digest
line must name to earn its tokens (fallback_summary.earning)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# --- what a line names, dates or counts ---------------------------------------------------------

_PARAMS = (
    r"(?:noise_)?seed|steps|cfg|width|height|denoise|batch[ _]size|strength(?:_model|_clip)?"
    r"|guidance|shift|fps|frames"
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_COUNT_WORD = (
    r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty"
    r"|fifty|hundred|thousand|dozen|a couple of|a pair of"
)
_NOT_UNITS = "a|an|and|as|at|but|by|for|from|if|in|is|it|of|on|or|so|the|to|with"  # after a number
# Patterns for what a line names, dates or counts, most specific first: a stretch of text
# taken by one is not matched again by the next (a file name is not also an identifier).
_FACT_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(  # a file
        r"(?<![\w./\\-])[\w./\\-]*\w\.(?:safetensors|ckpt|pth?|bin|gguf|sft|onnx|png|jpe?g"
        r"|webp|gif|json|ya?ml|txt|mp4|webm|wav|mp3|flac|latent)\b",
        re.IGNORECASE,
    ),
    re.compile(  # a setting (not a count's unit: "49 frames at 16 fps" is two counts)
        rf"(?<!\d )\b(?:{_PARAMS})\b\"?\s*(?:(?:[:=]|\b(?:is|of|to|at)\b)\s*)?-?\d+(?:\.\d+)?"
        r"(?![\d.]*\w)",
        re.IGNORECASE,
    ),
    re.compile(  # a date or a time
        rf"\b{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}\b"
        r"|\b\d{4}-\d\d-\d\d\b|\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
        r"(?: the \d{1,2}(?:st|nd|rd|th))?\b|\bthe \d{1,2}(?:st|nd|rd|th)\b"
        r"|\b\d{1,2}(?::\d\d)? ?(?:am|pm)\b|\b\d{1,2}:\d\d\b|\b(?:tomorrow|tonight)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bnodes?\s+(?:id\s+)?#?\d+\b|(?<![\w&#])#\d+\b", re.IGNORECASE),  # a node
    re.compile(r"(?<![\w.])\d{2,5}\s?[x×]\s?\d{2,5}(?![\w.])"),  # a size
    re.compile(r"\b[A-Z]{2,}[\w-]* \d[\w.]*"),  # a product and its number: "RTX 3060"
    re.compile(r"\"[^\"\n]{2,80}\"|“[^”\n]{2,80}”"),  # a quoted name
    re.compile(r"(?<![\w./-])[\w.-]*[^\W_](?:[_/]|-(?=\d))[\w./-]*[^\W_]"),  # an identifier
    re.compile(  # a quantity named by a word before it: "quality 92", "version 2"
        rf"\b(?!(?:{_NOT_UNITS}|from|with|than|into|over|about|after|before|until|under|every"
        r"|each|only|just|then|that|this|these|those|have|were|will|take|takes|took)\b)"
        r"[a-z]{3,} \d+(?:\.\d+)?\b(?![.,]?\d| ?[%A-Za-z])"
    ),
    re.compile(  # a number, with its unit when it has one; a count in words
        rf"(?<![\w.])-?\d+(?:[.,]\d+)*(?:\s?%|\s?(?!(?:{_NOT_UNITS})\b)[A-Za-z]+\b)?"
        rf"|\b(?:{_COUNT_WORD}) \w+",
        re.IGNORECASE,
    ),
    # a name: CamelCase or a capital inside a word anywhere, a capitalized word (or a run of
    # them) after the first word of the sentence; "I" is no name
    re.compile(
        r"\b[a-z]+[A-Z]\w*|\b[A-Z]\w*[A-Z]\w*|(?<=[^\s:.!?] )(?!I\b|I')[A-Z][\w'-]*(?: [A-Z]\w*)*"
    ),
)


def facts_of(text: str) -> tuple[str, ...]:
    """What `text` names, dates or counts, in the order it says them, each once."""
    taken: list[tuple[int, int]] = []
    for pattern in _FACT_PATTERNS:
        for m in pattern.finditer(text):
            if not any(m.start() < end and start < m.end() for start, end in taken):
                taken.append(m.span())
    found = (text[start:end].strip() for start, end in sorted(taken))
    return tuple(dict.fromkeys(f for f in found if f))


_WORDS = re.compile(r"\W+")


def norm(text: str) -> str:
    """A fact compared: case-folded, its punctuation as spaces."""
    return _WORDS.sub(" ", text.casefold()).strip()


# --- what names something particular ------------------------------------------------------------

RARE_LINES = 2  # a name or number that more lines than this name is the thread's common talk
_DATE = _FACT_PATTERNS[2]  # a date or a time


def distinctive(lines: Iterable[tuple[str, Sequence[str]]]) -> set[str]:
    """The facts (normalized) that name something particular, of lines given as their text and
    facts: named by at most RARE_LINES lines (the same words said again are one line), not a
    date or a time (a session's date is no answer), not a count in words or a one- or two-digit
    number alone, not a capitalized word the thread also writes in lower case ("Definitely",
    "Each")."""
    named: dict[str, int] = {}
    lower: set[str] = set()
    for text, facts in lines:
        lower.update(re.findall(r"\b[a-z][a-z']+\b", text))
        for fact in {norm(f) for f in facts}:
            named[fact] = named.get(fact, 0) + 1
    return {
        fact
        for fact, times in named.items()
        if times <= RARE_LINES and fact and not _common(fact, lower)
    }


def _common(fact: str, lower: set[str]) -> bool:
    return bool(
        _DATE.fullmatch(fact)
        or _COUNTED.match(fact)
        or (fact.isdigit() and len(fact) <= 2)
        or (" " not in fact and (len(fact) < 2 or fact in lower))
    )


_COUNTED = re.compile(rf"(?:{_COUNT_WORD}) ")  # a count in words: "two sentences", everyday talk
