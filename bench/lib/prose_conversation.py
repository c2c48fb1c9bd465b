"""The seeded conversations of bench/memory_prose.py: a ComfyUI user and the assistant chatting
over weeks of dated sessions, with facts (prose_facts.yaml, read by prose_kinds) planted in
the talk (prose_talk) and questions that paraphrase them. `conversation(seed)` checks what it
made and raises AssertionError when a rule is broken: every question shares no content word
with a fact it asks for; a fact's key words come together in its own line only; facts are
plain sentences (prose_kinds)."""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, field

from comfyui_assistant.core.tokens.tokens import counter_for

from .chat_drive import MODEL
from .prose_kinds import (
    Kind,
    Option,
    check_kind,
    fact_keys,
    kinds,
    plain_fact_problem,
    sentence,
    shared_words,
)
from .prose_summary import DROPPED
from .prose_talk import (
    ANSWER_ONE,
    ANSWER_TWO,
    ASK_ONE,
    ASK_TWO,
    FACT_CODAS,
    FACT_OPENERS,
    TIP_CODAS,
    TIP_OPENERS,
    farewell,
    filler,
    greeting,
)
from .prose_words import has_keys

PARTNERS = ("wife", "husband", "partner")
TOKENS_PER_FACT = 520  # one fact in about this much talk
QUESTIONS = 0.5  # question turns per fact (a question asks for one fact or two)


@dataclass(frozen=True)
class Fact:
    id: str
    kind: str
    speaker: str
    sentence: str
    keys: tuple[str, ...]
    answer: str
    turn: int = 0  # the turn whose message holds it (0 while planned)
    session: int = 0

    @property
    def message(self) -> str:
        """The id of the message holding it."""
        return f"{'u' if self.speaker == 'user' else 'a'}{self.turn}"


@dataclass
class Turn:
    index: int
    session: int
    user: str
    reply: str
    facts: list[str] = field(default_factory=list)  # ids of the facts it states
    asks: list[str] = field(default_factory=list)  # ids of the facts its question needs


@dataclass
class Conversation:
    seed: int
    turns: list[Turn]
    facts: dict[str, Fact]
    tokens: int  # the user and assistant texts, cl100k

    def ui(self, upto: int | None = None) -> list[dict[str, object]]:
        """The thread as the panel sends it (UI messages), through turn `upto`'s question."""
        out: list[dict[str, object]] = []
        for turn in self.turns:
            out.append({"id": f"u{turn.index}", "role": "user",
                        "parts": [{"type": "text", "text": turn.user}]})  # fmt: skip
            if turn.index == upto:
                break
            parts = [{"type": "step-start"}, {"type": "text", "text": turn.reply}]
            out.append({"id": f"a{turn.index}", "role": "assistant", "parts": parts})
        return out


@dataclass
class _Planned:
    kind: Kind
    option: Option
    phrasing: str
    ask: str
    parent: _Planned | None = None  # an outcome's tip
    fact: Fact | None = None


def check_kinds() -> None:
    """Every kind keeps the rules of prose_kinds (raises AssertionError)."""
    users, assistants, outcome = kinds()
    shorts = tuple(o.short for k in assistants if k.tip for o in k.options)
    for kind in (*users, *assistants):
        check_kind(kind, PARTNERS, DROPPED)
    check_kind(outcome, PARTNERS, DROPPED, shorts)
    names = [k.name for k in (*users, *assistants)]
    assert len(names) == len(set(names)), "two kinds share a name"


def _plan(rng: random.Random, count: int) -> list[_Planned]:
    """`count` facts of distinct kinds in order; a tip is followed, later, by its outcome
    (asked together) about half the time."""
    users, assistants, outcome = kinds()
    pool = list(users + assistants)
    rng.shuffle(pool)
    base = [
        _Planned(kind, rng.choice(kind.options), rng.choice(kind.says), rng.choice(kind.asks))
        for kind in pool[:count]
    ]
    out = list(base)
    for tip in (p for p in base if p.kind.tip and rng.random() < 0.5):
        follow = _Planned(outcome, rng.choice(outcome.options), rng.choice(outcome.says),
                          outcome.asks[0], parent=tip)  # fmt: skip
        out.insert(min(len(out), out.index(tip) + rng.randint(1, 4)), follow)
    return out


def _join(first: str, text: str) -> str:
    """An opener and a sentence: "By the way," + "We went…" → "By the way, we went…"."""
    if not first:
        return text
    if first.endswith((",", ":")) and not text.startswith(("I ", "I'")):
        text = text[0].lower() + text[1:]
    return f"{first} {text}"


class _Builder:
    def __init__(self, seed: int, target: int) -> None:
        self.rng = random.Random(seed)
        self.seed, self.target = seed, target
        self.partner = self.rng.choice(PARTNERS)
        self.count = counter_for(MODEL).text
        self.turns: list[Turn] = []
        self.facts: dict[str, Fact] = {}
        self.tokens = 0
        self.session = 0
        self.planned = _plan(self.rng, max(3, round(target / TOKENS_PER_FACT)))
        self.keys = [self._keys(p) for p in self.planned]
        self.unasked: list[_Planned] = []

    def _short(self, p: _Planned) -> str:
        return p.parent.option.short if p.parent else ""

    def _keys(self, p: _Planned) -> tuple[str, ...]:
        return fact_keys(p.kind, p.option, self._short(p))

    def _sentence(self, p: _Planned) -> str:
        return sentence(p.phrasing, p.option, self.partner, self._short(p))

    def add(self, user: str, reply: str) -> Turn:
        turn = Turn(len(self.turns) + 1, self.session, user, reply)
        self.turns.append(turn)
        self.tokens += self.count(user) + self.count(reply)
        return turn

    def talk(self) -> None:
        """A topic of filler, drawn again while it would complete a fact's key words."""
        for _ in range(50):
            exchanges = filler(self.rng)
            lines = [line for pair in exchanges for line in pair]
            if not any(has_keys(line, keys) for line in lines for keys in self.keys):
                for user, reply in exchanges:
                    self.add(user, reply)
                return
        raise AssertionError(f"seed {self.seed}: no filler avoids every fact's key words")

    def state(self, p: _Planned) -> None:
        rng, text = self.rng, self._sentence(p)
        if p.kind.speaker == "user":
            user = _join(rng.choice(FACT_OPENERS), text)
            user = f"{user} {rng.choice(FACT_CODAS)}".strip()
            turn = self.add(user, rng.choice(p.kind.around))
        else:
            reply = _join(rng.choice(TIP_OPENERS), text)
            reply = f"{reply} {rng.choice(TIP_CODAS)}".strip()
            turn = self.add(rng.choice(p.kind.around), reply)
        fid = f"f{len(self.facts) + 1}"
        answer = p.option.answer
        p.fact = Fact(fid, p.kind.name, p.kind.speaker, text, self._keys(p), answer,
                      turn.index, self.session)  # fmt: skip
        self.facts[fid] = p.fact
        turn.facts.append(fid)
        self.unasked.append(p)

    def ask(self) -> bool:
        """A question about one fact, or two (a tip and its outcome always together)."""
        ready = [p for p in self.unasked if p.fact and p.fact.session < self.session
                 and p.parent is None]  # fmt: skip
        if not ready:
            return False
        first = self.rng.choice(ready)
        outcome = next((p for p in self.planned if p.parent is first), None)
        if outcome is not None and (outcome.fact is None or outcome.fact.session == self.session):
            return False  # (a tip is asked with its outcome, once that is old enough)
        others = [
            p for p in ready
            if p is not first and not any(q.parent is p for q in self.planned)
        ]  # fmt: skip
        second = outcome or (self.rng.choice(others) if others and self.rng.random() < 0.3
                             else None)  # fmt: skip
        asked = [first] if second is None else [first, second]
        made = self._question(asked)
        if made is None and outcome is None:  # two facts no one question fits: one
            asked = [first]
            made = self._question(asked)
        if made is None:
            raise AssertionError(f"seed {self.seed}: no question for {asked}")
        turn = self.add(*made)
        for p in asked:
            self.unasked.remove(p)
            assert p.fact is not None
            turn.asks.append(p.fact.id)
        return True

    def _question(self, asked: list[_Planned]) -> tuple[str, str] | None:
        """A question no fact it needs shares a content word with (tried over the templates
        in a random order), and the assistant's short answer; None if there is none."""
        answers = [p.option.answer for p in asked]
        templates = list(ASK_ONE if len(asked) == 1 else ASK_TWO)
        self.rng.shuffle(templates)
        for template in templates:
            text = template.format(a=asked[0].ask, b=asked[-1].ask)
            if not any(shared_words(text, self._sentence(p)) for p in asked):
                template = self.rng.choice(ANSWER_ONE if len(asked) == 1 else ANSWER_TWO)
                return text, template.format(a=answers[0], b=answers[-1])
        return None

    def build(self) -> Conversation:
        """Dated sessions of talk until the target size, the facts spread evenly over it, and
        questions from the second session on, evenly too, each about facts of an earlier
        session (any of them, so their ages spread); the last session asks what is left."""
        day = datetime.date(2024, 1, 1) + datetime.timedelta(days=self.rng.randint(0, 300))
        queue = list(self.planned)
        fact_gap = self.target / (len(queue) + 1)
        first_question = 0.12 * self.target
        question_gap = (self.target - first_question) / (QUESTIONS * len(queue) + 1)
        questions = 0
        while self.tokens < self.target or queue:
            self.session += 1
            day += datetime.timedelta(days=self.rng.randint(2, 9))
            stop_at = self.tokens + self.rng.randint(900, 1900)
            hello, answer = greeting(self.rng)
            header = f"Session {self.session}, {day:%A} {day.day} {day:%B}"
            self.add(f"{header}\n{hello}", answer)
            while self.tokens < stop_at and (self.tokens < self.target or queue):
                if queue and self.tokens >= fact_gap * (len(self.facts) + 1):
                    self.state(queue.pop(0))
                elif self.tokens >= first_question + question_gap * (questions + 1) and self.ask():
                    questions += 1
                else:
                    self.talk()
            while self.tokens >= self.target and not queue and self.ask():
                pass  # the last session asks what is left
            self.add(*farewell(self.rng))
        made = Conversation(self.seed, self.turns, self.facts, self.tokens)
        check(made)
        return made


def conversation(seed: int, lo: int = 15_000, hi: int = 26_000) -> Conversation:
    """A conversation of about `lo`-`hi` tokens (cl100k), seeded."""
    rng = random.Random(seed)
    return _Builder(seed, rng.randint(lo, hi)).build()


def check(conv: Conversation) -> None:
    """The rules of the module docstring (raises AssertionError)."""
    lines = [
        (f"{p}{t.index}", line)
        for t in conv.turns
        for p, text in (("u", t.user), ("a", t.reply))
        for line in text.splitlines()
    ]
    for fact in conv.facts.values():
        assert plain_fact_problem(fact.sentence) is None, fact.sentence
        where = [mid for mid, line in lines if has_keys(line, fact.keys)]
        assert where == [fact.message], f"keys of {fact.id} {fact.keys} in {where}"
    for turn in conv.turns:
        for fid in turn.asks:
            fact = conv.facts[fid]
            assert fact.turn < turn.index, f"{fid} asked before it was said"
            same = shared_words(turn.user, fact.sentence)
            assert not same, f"turn {turn.index} shares {same} with {fact.sentence!r}"
