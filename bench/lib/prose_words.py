"""Words for bench/memory_prose.py: a light stemmer, content words, and the presence rule.

Presence: a fact is present in a request when its key words (3-6, chosen by the generator)
all appear, stemmed, within one line of one message of the request. A message of the data is
one paragraph (a line, apart from a session's date line), and a summary line is one statement
(the engine's digest writes "- user: <sentence>", the scripted model summary "- The user said
…"), so a line that carries every key word carries the fact, whether verbatim or paraphrased.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z]+")
SUFFIXES = ("ing", "ed", "es", "s")

# Function words and the verbs every question is built on ("remind me what I did"): never
# content. Chosen so that a question can be compared with the fact it asks for.
_STOPWORDS = """
    a about above after again against all also am an and any are around as at away be because
    been before being below between both but by can could did do does doing done down during
    each else even ever every few for from further get gets getting got had has have having he
    her here hers herself him himself his how i if in into is it its itself just let me might
    more most much must my myself no nor not now of off on once only or other our ours
    ourselves out over own quite rather really same she should so some still such than that the
    their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your yours
    yourself yourselves s t ll ve re d m don didn doesn isn wasn won couldn shouldn
    im ive id youre youve youll youd dont cant wont isnt wasnt didnt doesnt aint shes hes
    theyre theyve theyll weve wed itll thats theres whats heres lets
    go goes going went gone make makes making made say says said tell told remind remember
    recall ask asked think thought know knew want wanted like one thing things bit lot time
    way kind sort yes yeah oh ok okay well sure please thanks thank
"""
STOPWORDS = frozenset(_STOPWORDS.split())


def stem(word: str) -> str:
    """A light stem: lowercase, no plural or -ing/-ed, no final e, no doubled last letter
    ("hiking" and "hike", "kids" and "kid", "running" and "run" meet)."""
    w = word.lower().replace("'", "")
    for suffix in SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if w.endswith("i"):
        w = w[:-1] + "y"
    if len(w) > 3 and w[-1] == w[-2]:
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'").replace("'", ""))


def stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def content_stems(text: str) -> set[str]:
    """The stems of `text`'s content words (stopwords left out)."""
    return {stem(w) for w in words(text) if w not in STOPWORDS}


def has_keys(line: str, keys: Iterable[str]) -> bool:
    """Every key word appears (stemmed) in `line`."""
    found = stems(line)
    return all(stem(k) in found for k in keys)


def lines_of(texts: Iterable[str]) -> list[str]:
    return [line for text in texts for line in text.splitlines() if line.strip()]


def present(lines: Iterable[str], keys: Iterable[str]) -> bool:
    """The presence rule (module docstring): some line holds every key word."""
    wanted = {stem(k) for k in keys}
    return any(wanted <= stems(line) for line in lines)
