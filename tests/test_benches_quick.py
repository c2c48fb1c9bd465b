"""Every bench runs in CI so none can rot: each `bench/*.py` runs in its quick mode (`--quick`,
seconds, a tiny input, the llama-server stand-in where a real one is not given) in a process of
its own, as a person runs it, and must exit 0 and print each of its TARGET lines. Their verdicts
are not asserted: CI machines are too noisy for timing guards (the full runs are where they
count). A new bench fails here until it has a quick mode and its TARGET lines are listed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
TIMEOUT = 120  # seconds per bench (each takes a few)
WORKERS = max(2, os.cpu_count() or 2)  # (several of them mostly wait on sockets)


def _fidelity() -> list[str]:
    out = []
    for variant in ("fallback", "model"):
        for window in (4096, 8192, 32768):
            out.append(f"TARGET tools/{variant} window={window} ours>=baseline")
            if window <= 8192:
                out.append(f"TARGET tools/{variant} window={window} margin")
    return out + [f"TARGET window={w} fits" for w in (4096, 8192, 32768)]


def _memory_prose() -> list[str]:
    out = []
    for variant in ("fallback", "model"):
        for window in (4096, 8192, 32768):
            out.append(f"TARGET {variant} window={window} turn_by_turn_vs_same_tokens=")
        out.append(f"TARGET {variant} fits_turn_by_turn=")
        out.append(f"TARGET {variant} window=32768 turn_by_turn_vs_at_once=")
    return out


# Each bench's TARGET lines, by how each starts: a bench that stops printing one fails.
TARGETS: dict[str, list[str]] = {
    "body_parse.py": [
        "TARGET parse_ms_per_5mb=",
        "TARGET tiny_parts_refused=",
        "TARGET tiny_parts_longest_wait_s=",
        "TARGET tiny_messages_longest_wait_s=",
        "TARGET stored_parts_get_longest_wait_s=",
    ],
    "checkpoints.py": ["TARGET stored_mb=", "TARGET save_ms_p95="],
    "passage_split.py": ["TARGET largest_passage_tokens="],
    "panel_threads.py": [
        f"TARGET {name} turns=200"
        for name in (
            "keystroke",
            "open",
            "memory",
            "stream",
            "hover+scroll",
            "enter_to_request",
            "reopen",
            "reload",
            "upload",
        )
    ],
    "disk_full.py": [
        "TARGET full_disk_writes_507:",
        "TARGET delete_goes_through:",
        "TARGET writes_recover:",
        "TARGET delete_on_second_full_disk:",
        "TARGET delete_after_restart:",
    ],
    "context_bench.py": [
        "TARGET warm_500_median_ms=",
        "TARGET cold_500_median_ms=",
        "TARGET growth_vs_linear=",
    ],
    "count_accuracy.py": [
        "TARGET usage_equals_server_count=",
        "TARGET calibrated_fixed_parts_error_after_3=",
        "TARGET calibrated_total_error_after_3=",
    ],
    "downloads.py": [
        "TARGET download_rss_growth_mb=",
        "TARGET download_mb_per_s=",
        "TARGET download_sha256_equal=",
    ],
    "delegation.py": [
        "TARGET window=32768 parent_context_delegate_vs_direct=",
        "TARGET stop_reaches_helper_max_ms=",
    ],
    "fidelity.py": _fidelity(),
    "image_bombs.py": [
        "TARGET text-bomb refused (4xx):",
        "TARGET text-bomb peak RSS growth",
        "TARGET pixel-bomb refused (4xx):",
        "TARGET exif-bomb answered without 5xx:",
        "TARGET exif-bomb peak RSS growth",
        "TARGET exif-bomb time",
        "TARGET max stall of another request",
    ],
    "image_costs.py": ["TARGET window=4096 image_leaves_half_or_words_only:"],
    "local_llm.py": [
        f"TARGET server={server} {name}:"
        for server in ("defaults", "one-slot")  # (the stand-in's: 4 slots sharing a cache, 1)
        for name in (
            "steady_reprocess_within_new_message_plus_40",
            "compaction_keeps_system_prompt_cached",
            "session_reprocessed_at_most_15%",
            "session_reread_at_most_15%",
            "first_byte_within_1s",
            "no_silence_over_15s",
            "no_turn_failed_retried_or_changed_window",
        )
    ],
    "memory_load.py": ["TARGET late_growth_mb=", "TARGET concurrent_left_mb="],
    "text_calls.py": [
        "TARGET calls_recovered>=95%:",
        "TARGET call_text_shown=0:",
        "TARGET prose_turned_into_calls=0:",
        "TARGET unoffered_calls_left_as_text:",
        "TARGET prose_shown_as_written:",
        "TARGET longest_hold_under_15s:",
    ],
    "memory_prose.py": _memory_prose(),
    "projects.py": [
        "TARGET answer_in_top3=",
        "TARGET window=8192 sent_has_answer=",
        "TARGET window=32768 moved_every_4_reprocessed=",
    ],
    "recall.py": [
        f"TARGET {name}_{stat}_ms="
        for name in ("search", "search_without_fts5", "search_fused", "search_fused_without_fts5")
        for stat in ("median", "p95")
    ],
    "recall_conversation.py": [
        "TARGET topic_recall@5=",
        "TARGET topic_recall@10=",
        "TARGET asked_recall@5=",
        "TARGET wrong_when_recall@5=",
        "TARGET fused_topic_recall@5=",
    ],
    "recall_paraphrase.py": [
        f"TARGET {method}_{kind}_recall@5="
        for kind in ("paraphrase", "keyword")
        for method in ("lexical", "semantic", "both")
    ],
    "session_sim.py": [
        f"TARGET window={window} {name}="
        for window in (32768, 8192)
        for name in ("token_prefix_share_median", "budget_violations", "facts_present")
    ],
    "small_windows.py": [
        "TARGET system + tools at 4096:",
        "TARGET system + tools at 8192:",
        *(f"TARGET every task succeeds at {w}:" for w in (4096, 8192, 32768)),
    ],
    "stream_overhead.py": ["TARGET ttfb_added_median_ms="],
    "teams_load.py": [
        "TARGET p95_first_byte_ms=",
        "TARGET errors=",
        "TARGET sqlite_busy=",
        "TARGET threads_whole=",
    ],
    "tokens_bench.py": ["TARGET warm_speedup=", "TARGET estimate_error="],
    "upload_bytes.py": ["TARGET upload_kb_per_message="],
    "window_fill.py": [
        "TARGET trusted_requests_over_the_room=",
        "TARGET trusted_fill_gain_min_language=",
    ],
    "tool_caps.py": [
        "TARGET most_tools_run_in_a_step=",
        "TARGET slowest_status_s=",
        "TARGET endless_ended=",
        "TARGET calls_80_each_answered=",
        "TARGET calls_80_run_again=",
        "TARGET calls_200_each_answered=",
        "TARGET calls_200_run_again=",
    ],
}
# Benches run against the llama-server stand-in in quick mode: their output must say so.
STANDIN = {"count_accuracy.py", "local_llm.py", "window_fill.py"}
# A bench that cannot run in CI, with the reason (none today).
EXCLUDED: dict[str, str] = {}


class Run:
    def __init__(self, name: str) -> None:
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, str(BENCH / name), "--quick"],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                cwd=BENCH.parent,
            )
            self.code, self.out, self.err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            self.code, self.out = None, str(exc.stdout or "")
            self.err = f"no exit within {TIMEOUT} s"
        self.seconds = time.monotonic() - started


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> dict[str, Run]:
    """The quick runs of the benches this session selected, a few at a time."""
    wanted: set[str] = set()
    for item in request.session.items:
        params: dict[str, Any] = getattr(getattr(item, "callspec", None), "params", {})
        if item.module is request.module and "name" in params:
            wanted.add(params["name"])
    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(sorted(wanted), pool.map(Run, sorted(wanted)), strict=True))


def test_every_bench_has_a_quick_run_listed_here() -> None:
    on_disk = {p.name for p in BENCH.glob("*.py")}
    unlisted = on_disk - TARGETS.keys() - EXCLUDED.keys()
    assert not unlisted, f"give {unlisted} a --quick mode and list its TARGET lines in TARGETS"
    assert TARGETS.keys() | EXCLUDED.keys() <= on_disk  # (no stale entry)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_quick_run_exits_0_and_prints_its_targets(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    tail = f"\n--- stdout\n{run.out[-2000:]}\n--- stderr\n{run.err[-3000:]}"
    assert run.code == 0, f"{name} --quick exited {run.code} after {run.seconds:.0f} s{tail}"
    lines = [line for line in run.out.splitlines() if line.startswith("TARGET")]
    missing = [t for t in TARGETS[name] if not any(line.startswith(t) for line in lines)]
    assert lines and not missing, f"{name} --quick printed no {missing}{tail}"
    if name in STANDIN:
        assert "llama-server STAND-IN" in run.out, f"{name} must say it ran on the stand-in"
