"""What parsing a long thread's /api/assistant/chat body costs: routes/common.py
`parse_json` (UTF-8, JSON with its checks) on a 5 MB body of 400 turns, each answer with a
30-node workflow as a tool's output. Best of 7 runs, the collector paused as the route pauses it.

    PYTHONPATH=... .venv/bin/python bench/body_parse.py [--quick]

TARGET (a guard): parsing takes under 250 ms (80 ms measured on a 2-core machine; the nesting
check is about a third of it). `--quick` parses a 40-turn body once (CI).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from comfyui_assistant.routes.common import parse_json


def _node(i: int) -> dict[str, Any]:
    return {
        "id": i, "type": "KSampler", "pos": [i, i * 2], "size": [300, 200], "flags": {},
        "order": i, "mode": 0, "inputs": [{"name": "model", "type": "MODEL", "link": i}],
        "outputs": [{"name": "LATENT", "type": "LATENT", "links": [i + 1], "slot_index": 0}],
        "properties": {"Node name for S&R": "KSampler"},
        "widgets_values": [123456789, "fixed", 20, 7.5, "euler", "normal", 1.0],
    }  # fmt: skip


def body(turns: int = 400) -> bytes:
    workflow = {
        "nodes": [_node(i) for i in range(30)],
        "links": [[i, i, 0, i + 1, 0, "MODEL"] for i in range(30)],
        "extra": {"ds": {"scale": 1, "offset": [0, 0]}},
        "version": 0.4,
    }
    messages: list[dict[str, Any]] = []
    for t in range(turns):
        ask = {"type": "text", "text": "Change the sampler, please. " * 5}
        messages.append({"id": f"u{t}", "role": "user", "parts": [ask]})
        call = {
            "type": "tool-getWorkflow", "toolCallId": f"c{t}", "state": "output-available",
            "input": {}, "output": workflow,
        }  # fmt: skip
        parts = [{"type": "step-start"}, call, {"type": "text", "text": "Done. " * 20}]
        messages.append({"id": f"a{t}", "role": "assistant", "parts": parts})
    return json.dumps({"id": "bench", "messages": messages}).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 40-turn body, one run (CI)")
    args = parser.parse_args()
    data = body(40 if args.quick else 400)
    runs = []
    for _ in range(1 if args.quick else 7):
        start = time.perf_counter()
        parse_json(data)
        runs.append(time.perf_counter() - start)
    ms = min(runs) * 1000
    print(f"parse_json: {len(data) / 1e6:.1f} MB in {ms:.1f} ms (best of {len(runs)})")
    per_5mb = ms * 5e6 / len(data)
    verdict = "PASS" if per_5mb < 250 else "FAIL"
    print(f"TARGET parse_ms_per_5mb={per_5mb:.1f} ({verdict}, < 250)")


if __name__ == "__main__":
    main()
