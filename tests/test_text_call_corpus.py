"""The corpus of issue 40 in CI: every real output in `fixtures/text_calls/calls.json` is read
as the call its model meant, with none of its text shown as text; every answer in
`prose.json` stays text, shown as written (the same runs as bench/text_calls.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "text_calls"
_spec = importlib.util.spec_from_file_location("text_calls_bench", ROOT / "bench" / "text_calls.py")
assert _spec is not None and _spec.loader is not None
bench: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

TOOLSETS, CALLS = bench.load_calls()
PROSE = json.loads((CORPUS / "prose.json").read_text(encoding="utf-8"))


def test_every_output_cites_its_source():
    assert all(e["source"].startswith("https://github.com/") and e["model"] for e in CALLS)


@pytest.mark.parametrize("entry", CALLS, ids=[f"{i}:{e['model']}" for i, e in enumerate(CALLS)])
def test_a_real_output_is_read_as_the_call_meant(entry):
    native = entry["expect"][0]["name"] if entry["kind"] == "arguments" else None
    chunks, translator = bench.stream(
        entry["text"], bench.offered_for(entry, TOOLSETS), native, bench.Clock(), 20.0
    )
    assert bench.calls_of(chunks) == entry["expect"]
    # (a call of a tool that was not offered stays text, as written; a call shows none)
    assert bench.shown_text(chunks) == (
        entry.get("shown", "") if entry["expect"] else entry["text"]
    )
    assert translator._hold.longest < 15


@pytest.mark.parametrize("text", PROSE, ids=[str(i) for i in range(len(PROSE))])
def test_prose_stays_text(text):
    schemas = bench.schemas_of(bench.openai_tools())
    chunks, _ = bench.stream(text, schemas, None, bench.Clock(), 20.0)
    assert bench.calls_of(chunks) == []
    assert bench.shown_text(chunks) == text
