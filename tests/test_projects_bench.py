"""bench/projects.py keeps working: its documents load, its questions' answers are in them, and
a short run prints its figures (the figures are the benchmark's to report, not asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "projects.py"


def load() -> object:
    spec = importlib.util.spec_from_file_location("projects_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_answer_is_in_exactly_one_document() -> None:
    bench = load()
    texts = [p.read_text() for p in sorted(bench.DATA.glob("*.md"))]  # type: ignore[attr-defined]
    for question, phrase in bench.QUESTIONS:  # type: ignore[attr-defined]
        assert sum(phrase in t for t in texts) == 1, (question, phrase)


async def test_a_run_prints_its_figures(capsys) -> None:
    bench = load()
    await bench.run([8192])  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "answer passage in top 3" in out and "retrieved" in out
