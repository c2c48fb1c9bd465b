"""Counting a long thread: cold (empty cache) versus warm (every message counted before).

    .venv/bin/python bench/tokens_bench.py [--messages 500] [--rounds 21] [--quick]

The thread mixes what a real one holds: user prose, assistant text, assistant tool calls with
JSON arguments, and tool results carrying ComfyUI workflow JSON. Each round counts a freshly
parsed copy (new str objects, as after decoding a request), so warm rounds pay for building and
hashing the cache keys, not for encoding. Prints the median of each, with tiktoken (cl100k) and
with the estimate used when no tokenizer loads. TARGET lines (guards): warm counting at least
10x faster than cold with tiktoken (a counted message is looked up, not encoded again); the
estimate's total within 15% of cl100k's (what tests/test_tokens.py asks of each sample).
`--quick`: 5 rounds. Exit code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from comfyui_assistant.core.tokens.tokens import TokenCounter

PROSE = (
    "Please add a second sampler after the first one, use the same seed, and lower the denoise "
    "to 0.45 so the result keeps the composition but sharpens the details. Then save both images."
)
NODE = {
    "id": 3,
    "type": "KSampler",
    "pos": [863, 186],
    "size": [315, 262],
    "inputs": [
        {"name": "model", "type": "MODEL", "link": 1},
        {"name": "positive", "type": "CONDITIONING", "link": 4},
        {"name": "negative", "type": "CONDITIONING", "link": 6},
        {"name": "latent_image", "type": "LATENT", "link": 2},
    ],
    "outputs": [{"name": "LATENT", "type": "LATENT", "links": [7]}],
    "widgets_values": [156680208700286, "randomize", 20, 8, "euler", "normal", 1],
}


def thread(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a ComfyUI assistant."}]
    i = 0
    while len(out) < n:
        out.append({"role": "user", "content": f"{PROSE} (turn {i})"})
        args = json.dumps({"type": "KSampler", "x": 100 + i, "y": 200})
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "addNode", "arguments": args},
        }
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        result = json.dumps({"ok": True, "nodes": [{**NODE, "id": i}] * 3})
        out.append({"role": "tool", "tool_call_id": f"call_{i}", "content": result})
        out.append({"role": "assistant", "content": f"Done: node {i} added. {PROSE}"})
        i += 1
    return out[:n]


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--quick", action="store_true", help="5 rounds")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 5
    wire = json.dumps(thread(args.messages))
    chars = len(wire)
    TokenCounter()  # load the encoding once; not part of any round

    medians: dict[str, tuple[float, float, int]] = {}
    for label, use_tiktoken in (("tiktoken", True), ("estimate", False)):
        cold, warm = [], []
        total = 0
        for _ in range(args.rounds):
            counter = TokenCounter(use_tiktoken=use_tiktoken)
            ms = json.loads(wire)
            cold.append(timed(lambda c=counter, ms=ms: c.messages(ms)))
            ms = json.loads(wire)
            warm.append(timed(lambda c=counter, ms=ms: c.messages(ms)))
            total = counter.messages(ms)
        print(
            f"{label:8s} {args.messages} messages, {chars} chars, {total} tokens: "
            f"cold median {statistics.median(cold):.2f} ms, "
            f"warm median {statistics.median(warm):.3f} ms"
        )
        medians[label] = (statistics.median(cold), statistics.median(warm), total)
    cold_ms, warm_ms, exact = medians["tiktoken"]
    speedup = cold_ms / max(warm_ms, 1e-6)
    verdict = "PASS" if speedup >= 10 else "FAIL"
    print(f"TARGET warm_speedup={speedup:.0f}x ({verdict}, tiktoken cold / warm, guard >= 10x)")
    error = abs(medians["estimate"][2] - exact) / exact
    verdict = "PASS" if error <= 0.15 else "FAIL"
    print(f"TARGET estimate_error={error:.1%} ({verdict}, of the cl100k count, guard <= 15%)")


if __name__ == "__main__":
    main()
