"""Context assembly time: `build_context` on threads of 50, 500 and 5,000 UI messages, cold
and warm.

    .venv/bin/python bench/context_bench.py [--sizes 50,500,5000] [--runs 15] [--no-profile]

Threads are generated deterministically: user requests, assistant answers, and tool rounds
whose outputs are realistic in size and shape (getWorkflow graphs of 6-30 real node types,
addNode / connectNodes / setWidgetValues results, searchInstalledNodes and getNodeDefinition
results from the real data/object_info.json.gz). Window 200K, all tools, the shipped system
prompt; the 5,000-message thread outgrows the window, so it exercises the priority window (and
the compaction plan, which build_context only names).

cold = a fresh counter (`tokens._counter.cache_clear()`, then `counter_for`) on a freshly parsed
copy of the thread: every message is tokenized. warm = the next call with the same counter on
another freshly parsed copy (new objects, same content: as after parsing the next request).
Prints medians and p90 (ms), growth ratios, TARGET lines (warm 500 < 2 ms median, cold 500 <
25 ms median, growth linear: each 10x step in messages costs at most 15x), and a cProfile of
the warm 500-message case. Exit code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import statistics
import time
from typing import Any

from comfyui_assistant.agent_prompts import PromptParts, build_system_message
from comfyui_assistant.core import tokens
from comfyui_assistant.core.budget import Window
from comfyui_assistant.core.context_engine import Assembled, ContextInputs, build_context
from comfyui_assistant.core.environment import Environment, load_object_info_file
from comfyui_assistant.tools_definitions import openai_tools
from comfyui_assistant.user_context_loader import load_system_context

MODEL = "gpt-4"  # cl100k_base
NOW = "2026-11-22 10:00 UTC (Sunday)"
REQUESTS = [
    "Add a LoRA loader between the checkpoint and the sampler, strength 0.8.",
    "Why is my image so washed out? The cfg is 7 and I use 30 steps.",
    "Make the upscale step use 4x-UltraSharp and save the result as PNG.",
    "Can you connect the VAE decode to a preview node too?",
    "Switch the sampler to dpmpp_2m with the karras scheduler and run it again.",
    "What does the denoise setting do in img2img? Keep the answer short.",
]
ANSWERS = [
    "Done: I added the node and linked it; the graph now has {n} nodes. Run it when ready.",
    "The washed-out look usually comes from a VAE mismatch or a high cfg. I lowered cfg to "
    "5.5 and set the VAE explicitly; try it and tell me how it looks.",
    "Here is what changed: node {n} now feeds the sampler, and the old link was replaced. "
    "Denoise controls how much of the input image is kept: 1.0 replaces it, 0.3 keeps most.",
]
SEARCHES = ["upscale image", "load lora", "LATENT", "controlnet", "save image", "vae decode"]


def workflow(rng: random.Random, env: Environment, types: list[str]) -> dict[str, Any]:
    """A getWorkflow-like graph: real node types, their widget defaults, links between them."""
    nodes, links = [], []
    for i in range(1, rng.randint(6, 30) + 1):
        node_type = rng.choice(types)
        spec = env.node_definition(node_type) or {}
        widgets = {
            w["name"]: w.get("default", 0)
            for w in spec.get("inputs", [])
            if w.get("widget") or "default" in w
        }
        node = {"id": i, "type": node_type, "title": spec.get("displayName", node_type)}
        node.update(pos=[rng.randint(0, 2000), rng.randint(0, 1200)], widgets=widgets)
        nodes.append(node)
        if i > 1:
            links.append([len(links) + 1, rng.randint(1, i - 1), 0, i, 0, "LATENT"])
    return {"nodes": nodes, "links": links}


def tool_part(name: str, call_id: str, args: dict[str, Any], output: Any) -> dict[str, Any]:
    return {
        "type": f"tool-{name}",
        "toolCallId": call_id,
        "state": "output-available",
        "input": args,
        "output": output,
    }


def thread(n_messages: int, env: Environment, seed: int = 7) -> list[dict[str, Any]]:
    """UI messages: user, then assistant with 0-3 tool rounds and a closing text; repeat."""
    rng = random.Random(seed)
    types = sorted(env.nodes)
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < n_messages:
        text = f"{rng.choice(REQUESTS)} (turn {turn})"
        out.append({"id": f"u{turn}", "role": "user", "parts": [{"type": "text", "text": text}]})
        parts: list[dict[str, Any]] = []
        for r in range(rng.choice([0, 1, 1, 2, 2, 3])):
            cid = f"call_{turn}_{r}"
            parts.append({"type": "step-start"})
            kind = rng.random()
            if kind < 0.3:
                parts.append(tool_part("getWorkflow", cid, {"detail": "compact"},
                                       workflow(rng, env, types)))
            elif kind < 0.45:
                query = rng.choice(SEARCHES)
                parts.append(tool_part("searchInstalledNodes", cid, {"query": query},
                                       {"query": query, "results": env.search_nodes(query, 15)}))
            elif kind < 0.55:
                node_type = rng.choice(types)
                parts.append(tool_part("getNodeDefinition", cid, {"nodeType": node_type},
                                       env.node_definition(node_type)))
            else:
                node_id = rng.randint(1, 40)
                parts.append(tool_part("addNode", cid, {"nodeType": rng.choice(types)},
                                       {"ok": True, "nodeId": node_id, "created": "node"}))
                args = {"fromNodeId": node_id, "fromOutput": 0, "toNodeId": 3, "toInput": "model"}
                parts.append(tool_part("connectNodes", f"{cid}b", args,
                                       {"ok": True, "linkId": rng.randint(1, 99)}))
        parts += [{"type": "step-start"},
                  {"type": "text", "text": rng.choice(ANSWERS).format(n=rng.randint(3, 40))}]
        out.append({"id": f"a{turn}", "role": "assistant", "parts": parts})
        turn += 1
    return out[:n_messages]


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50,500,5000")
    parser.add_argument("--runs", type=int, default=15, help="cold+warm pairs per size")
    parser.add_argument("--window", type=int, default=200_000)
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    env = load_object_info_file()
    tools = openai_tools()
    system = build_system_message(PromptParts(
        system_context=load_system_context().text, environment=env.summary_line(),
        tool_names=[t["function"]["name"] for t in tools]))
    window = Window(args.window, "settings", "bench")

    def inputs(ui: list[dict[str, Any]]) -> ContextInputs:
        return ContextInputs(system=system, ui_messages=ui, tools=tools, model=MODEL,
                             window=window, now=NOW)

    tokens.counter_for(MODEL)  # load the encoding once: not part of any measurement
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, dict[str, list[float]]] = {}
    print(f"window {args.window:,}, model {MODEL}, {args.runs} runs per size; times in ms")
    print(f"{'messages':>9}{'chars':>11}{'sent':>6}{'tokens':>8}{'dropped':>8}"
          f"{'cold med':>10}{'cold p90':>10}{'warm med':>10}{'warm p90':>10}")
    for size in sizes:
        wire = json.dumps(thread(size, env))
        runs = max(3, args.runs if size <= 500 else args.runs // 3)
        cold, warm = [], []
        last: Assembled | None = None
        for _ in range(runs):
            tokens._counter.cache_clear()
            counter = tokens.counter_for(MODEL)
            first, second = inputs(json.loads(wire)), inputs(json.loads(wire))
            cold.append(timed(lambda c=counter, i=first: build_context(i, c)))
            warm.append(timed(lambda c=counter, i=second: build_context(i, c)))
            for _ in range(2):  # more warm samples on the same warmed counter
                again = inputs(json.loads(wire))
                warm.append(timed(lambda c=counter, i=again: build_context(i, c)))
            last = build_context(inputs(json.loads(wire)), counter)
        results[size] = {"cold": cold, "warm": warm}
        assert last is not None
        print(f"{size:>9,}{len(wire):>11,}{len(last.messages):>6}{last.exact:>8,}"
              f"{last.report['counts']['dropped']:>8}"
              f"{statistics.median(cold):>10.2f}{pct(cold, 0.9):>10.2f}"
              f"{statistics.median(warm):>10.2f}{pct(warm, 0.9):>10.2f}")

    med = {s: {k: statistics.median(v) for k, v in r.items()} for s, r in results.items()}
    ratios = []
    for small, big in zip(sizes, sizes[1:]):
        r = {k: med[big][k] / med[small][k] for k in ("cold", "warm")}
        ratios.append(max(r.values()) / (big / small))
        print(f"growth {big}/{small} ({big / small:g}x messages): cold {r['cold']:.1f}x, "
              f"warm {r['warm']:.1f}x")
    if 500 in med:
        w, c = med[500]["warm"], med[500]["cold"]
        print(f"TARGET warm_500_median_ms={w:.2f} ({'PASS' if w < 2 else 'FAIL'} < 2)")
        print(f"TARGET cold_500_median_ms={c:.2f} ({'PASS' if c < 25 else 'FAIL'} < 25)")
    if ratios:
        worst = max(ratios)
        print(f"TARGET growth_vs_linear={worst:.2f} ({'PASS' if worst <= 1.5 else 'FAIL'}: "
              "each step's time ratio at most 1.5x its message ratio)")
    if not args.no_profile and 500 in sizes:
        wire = json.dumps(thread(500, env))
        counter = tokens.counter_for(MODEL)
        build_context(inputs(json.loads(wire)), counter)
        copies = [inputs(json.loads(wire)) for _ in range(50)]
        profile = cProfile.Profile()
        profile.enable()
        for copy in copies:
            build_context(copy, counter)
        profile.disable()
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(10)
        lines = [ln for ln in text.getvalue().splitlines() if ln.strip()]
        start = next(i for i, ln in enumerate(lines) if "ncalls" in ln)
        print("\nwarm 500, 50 calls, top 10 by cumulative time:")
        print("\n".join(lines[start:]))


if __name__ == "__main__":
    main()
