"""Whether to ask the model for a summary at all. Each rejected summary costs its user the
whole generation on a compaction turn, for the digest in the end: on a real llama-server with
Gemma 3 270M at 8K every summary was cut at its token limit, and a turn with a paste waited
about 60 s where reading the paste takes about 27 s (bench/local_llm.py); one that takes
longer than the summary's timeout costs all of it. So after `REJECTIONS_TO_REST` rejections
(or timeouts) in a row the model is not asked for the next `REST` summaries
(the digest stands in, and the log says why); then it is asked once more, and a good summary
trusts it again. The record belongs to one provider client (one settings snapshot: changing
the model or the server starts afresh) and to the model named."""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from ..provider import Provider

REJECTIONS_TO_REST = 2
REST = 8  # summaries made by the digest alone before the model is asked again


@dataclass
class _Record:
    rejected: int = 0  # in a row
    last_reason: str = ""
    resting: int = 0  # summaries left to the digest before asking again


_records: WeakKeyDictionary[Provider, dict[str, _Record]] = WeakKeyDictionary()


def _record(provider: Provider, model: str) -> _Record:
    return _records.setdefault(provider, {}).setdefault(model, _Record())


def skip_reason(provider: Provider, model: str) -> str | None:
    """Why this summary is left to the digest without asking the model (counted as one of its
    rest), or None to ask it."""
    record = _record(provider, model)
    if record.resting <= 0:
        return None
    record.resting -= 1
    again = "the next one" if record.resting == 0 else f"after {record.resting} more"
    return (
        f"the model's last {record.rejected} summaries were not usable ({record.last_reason});"
        f" not asking it this time, asking again {again}"
    )


def rejected(provider: Provider, model: str, reason: str) -> None:
    record = _record(provider, model)
    record.rejected += 1
    record.last_reason = reason
    if record.rejected >= REJECTIONS_TO_REST:
        record.resting = REST


def accepted(provider: Provider, model: str) -> None:
    _records.setdefault(provider, {})[model] = _Record()
