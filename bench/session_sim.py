"""A 200-turn simulated session through our context engine and, side by side, the seed design.

    .venv/bin/pip install comfyui-workflow-templates-json   # once; for benchmarks only
    .venv/bin/python bench/session_sim.py [--turns 200] [--windows 32768,8192]

getWorkflow returns ComfyUI's real workflow templates (1-200 KB), getNodeDefinition and
searchInstalledNodes answer from data/object_info.json.gz, edits return small results; 22 facts
are planted in user messages at known turns. Each model step is a request. Ours does what
/api/chat does (a new request, the first step or one after panel tools, may compact; the
deterministic digest stands in for the model's summary, as in core.summarizer's failure path).
Seed: the last 24 OpenAI messages (leading orphan tool results dropped), results of all but the
last 2 rounds cut to 500 chars, chars/4 against the same budget (oldest messages dropped until
it fits), no summary, all tools; counted exactly (cl100k) for the figures. Prefix share =
tokens of a request's messages repeating the previous request's (equal messages from the start,
then the common leading characters of the first different one) / tokens of its messages (tool
definitions, constant and first, left out). Facts present = literal text in the final request.
"Provider invariants broken" = requests docs/DESIGN.md §7's validator rejects. `now` is fixed. Exit
code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import importlib
import json
import logging
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from comfyui_assistant.core.budget import ContextBudgetError, Window, compute_budget
from comfyui_assistant.core.chat_plan import ALWAYS_OFFERED
from comfyui_assistant.core.context_engine import (
    ContextInputs,
    Summary,
    build_context,
    covered_ids,
    summary_cap,
)
from comfyui_assistant.core.context_files import load_system_context
from comfyui_assistant.core.context_validate import problems
from comfyui_assistant.core.environment import Environment, load_object_info_file
from comfyui_assistant.core.summarizer import summarize
from comfyui_assistant.core.system_prompt import PromptParts, build_system_message
from comfyui_assistant.core.tokens import TokenCounter, counter_for
from comfyui_assistant.core.tool_registry import OPTIONAL_TOOLS
from comfyui_assistant.core.ui_messages import to_openai_messages
from comfyui_assistant.tools_definitions import TOOLS, get_tool

MODEL, NOW = "gpt-4", "2026-11-22 10:00 UTC (Sunday)"
Msg = dict[str, Any]
# turn, user message (its [bracketed] part must survive; \n: a new line), values the assistant
# then sets with setWidgetValues (JSON, optional)
FACT_LINES = r"""
5 | Use seed [123456789] for every render from now on. | {"seed": 123456789}
12 | Rename the positive prompt node to "[Hero prompt]" so I can find it.
20 | My favourite checkpoint is [dreamshaper_8.safetensors], use it whenever SD1.5 fits.
28 | I always want the [dpmpp_3m_sde_gpu] sampler. | {"sampler_name": "dpmpp_3m_sde_gpu"}
34 | Can you tidy the graph a bit?\nAlso: my go-to LoRA is [add_detail_v2.safetensors] at 0.65.
40 | I prefer [832x1216] portraits. | {"width": 832, "height": 1216}
48 | Keep the Flux guidance at [3.35], higher looks too contrasty.
55 | The negative prompt should always include "[watermark, lowres, jpeg artifacts]".
63 | Final pass: the [4x_NMKD-Siax_200k.pth] upscaler. | {"model_name": "4x_NMKD-Siax_200k.pth"}
71 | Use [denoise 0.42] for the img2img refine stage. | {"denoise": 0.42}
80 | With SD1.5 models use the [vae-ft-mse-840000-ema-pruned.safetensors] VAE.
90 | Call the output folder [renders/flux_tests]. | {"filename_prefix": "renders/flux_tests/img"}
100 | My GPU is an [RTX 3060] with 12 GB of VRAM, so keep batches small.
110 | For video clips, render [49 frames] at 16 fps.
120 | The client project is called "[Nebula Coffee]", put it in the filename prefix.
130 | For SDXL I prefer the [kl_optimal] scheduler.
140 | Save the finals as WebP at [quality 92].
150 | The reference image is [mood_board_03.png] in my input folder.
160 | Set the second sampler's seed to [987654321]. | {"seed": 987654321}
170 | Run it again, and from now on ControlNet [strength 0.55] for depth. | {"strength": 0.55}
185 | My Discord handle for the share step is [pixelfox_art].
192 | Remember that the final deliverable is due on [Friday the 4th].
"""
FACTS: dict[int, tuple[str, str, dict[str, Any] | None]] = {}
for _line in FACT_LINES.strip().splitlines():
    _turn, _text, *_values = _line.split(" | ")
    _literal = _text.split("[")[1].split("]")[0]
    _message = re.sub(r"[\[\]]", "", _text).replace("\\n", "\n")
    FACTS[int(_turn)] = (_message, _literal, json.loads(_values[0]) if _values else None)
REQUESTS = """Can you check why the output looks blurry? | Add a LoRA loader after the checkpoint.
| Connect the VAE decode to a preview node too. | What does the {t} node do? | Run it.
| Swap the sampler settings for something faster, I'm just testing. | Why did the last run fail?
| Is there a node to upscale the latent before decoding? | Make the batch bigger for this test.
| Add a second pass with img2img. | Which inputs does {t} take? | Clean up the unused nodes."""
ANSWERS = """Done: node {n} is added and linked. Run it when ready. | I checked the graph: the
sampler feeds the VAE decode and the save node; nothing is disconnected. | It finished in {n}
seconds; the image is in the output folder. | That node takes the model, a conditioning pair
and a latent, and returns a latent."""
LOOKUPS = ("tool-searchInstalledNodes", "tool-readDocumentation")  # chat_plan.CITATION_TOOLS
SEARCHES = ["upscale image", "load lora", "LATENT", "controlnet", "save image", "vae decode"]


def split(text: str) -> list[str]:
    return " ".join(text.split()).split(" | ")


def load_templates() -> list[dict[str, Any]]:
    try:
        package = importlib.import_module("comfyui_workflow_templates_json")
    except ImportError:
        sys.exit(
            "session_sim needs real workflows: .venv/bin/pip install "
            "comfyui-workflow-templates-json (for benchmarks only, not an app dependency)"
        )
    found = []
    for entry in sorted(resources.files(package).joinpath("templates").iterdir(), key=str):
        if entry.name.endswith(".json") and not entry.name.startswith(("index", "fuse")):
            data = json.loads(entry.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("nodes"), list):
                found.append(data)
    return found


Turn = tuple[Msg, list[list[Msg]], str]  # user message, each model step's tool parts, answer


def make_session(n: int, env: Environment, flows: list[dict[str, Any]], seed: int) -> list[Turn]:
    rng = random.Random(seed)
    types = sorted(env.nodes)
    graph = copy.deepcopy(rng.choice(flows))
    turns = []
    for t in range(1, n + 1):
        calls = iter(range(1, 100))

        def part(name: str, args: dict[str, Any], output: Any, t: int = t, c: Any = calls) -> Msg:
            call_id, state = f"call_{t}_{next(c)}", "output-available"
            return {"type": f"tool-{name}", "toolCallId": call_id, "state": state, "input": args,
                    "output": output}  # fmt: skip

        known = [nd["type"] for nd in graph["nodes"] if nd.get("type") in env.nodes] or types
        node_id = next((nd["id"] for nd in graph["nodes"] if isinstance(nd.get("id"), int)), 3)
        rounds: list[list[Msg]] = []
        answer = "Noted, I'll keep that in mind."
        if t in FACTS:
            text, _, values = FACTS[t]
            if values:
                done = {"ok": True, "nodeId": node_id, "updated": list(values)}
                args = {"nodeId": node_id, "values": values}
                rounds.append([part("setWidgetValues", args, done)])
        elif rng.random() < 0.12:
            graph = copy.deepcopy(rng.choice(flows))
            text = "I opened another template, can you have a look at it?"
            rounds.append([part("getWorkflow", {"detail": "full"}, graph)])
        else:
            text = rng.choice(split(REQUESTS)).format(t=rng.choice(known))
            answer = rng.choice(split(ANSWERS)).format(n=rng.randint(2, 40))
        for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3]) if not rounds else rng.choice([0, 1])):
            kind, query, new_type = rng.random(), rng.choice(SEARCHES), rng.choice(types)
            if kind < 0.25:
                rounds.append([part("getWorkflow", {"detail": "full"}, graph)])
            elif kind < 0.45:
                node_type = rng.choice(known)
                definition = env.node_definition(node_type)
                rounds.append([part("getNodeDefinition", {"nodeType": node_type}, definition)])
            elif kind < 0.6:
                found = {"query": query, "results": env.search_nodes(query, 15)}
                rounds.append([part("searchInstalledNodes", {"query": query}, found)])
            elif kind < 0.9:
                new_id = max([nd.get("id", 0) for nd in graph["nodes"]] + [0]) + 1
                graph["nodes"].append({"id": new_id, "type": new_type, "pos": [100, 100]})
                link = {"fromNodeId": new_id, "fromOutput": 0, "toNodeId": node_id, "toInput": 0}
                added, linked = {"ok": True, "nodeId": new_id}, {"ok": True, "linkId": t}
                added_part = part("addNode", {"nodeType": new_type}, added)
                rounds.append([added_part, part("connectNodes", link, linked)])
            else:
                images = [{"filename": f"ComfyUI_{t:05d}_.png", "type": "output"}]
                result = {"ok": True, "promptId": f"p{t}", "outputs": {"9": {"images": images}}}
                rounds.append([part("queueWorkflow", {}, {**result, "seconds": 12.5})])
        user = {"id": f"u{t}", "role": "user", "parts": [{"type": "text", "text": text}]}
        turns.append((user, rounds, answer))
    return turns


def texts(messages: list[Msg]) -> str:
    out = []
    for m in messages:
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"text": content or ""}]
        out += [str(p.get("text", "")) for p in parts]
        out += [c["function"]["arguments"] for c in m.get("tool_calls") or []]
    return "\n".join(out)


def common_prefix(prev: list[Msg], cur: list[Msg], counter: TokenCounter) -> int:
    same = 0
    for a, b in zip(prev, cur, strict=False):
        if a == b:
            same += counter.message(b)
            continue
        x, y = a.get("content"), b.get("content")
        if a.get("role") == b.get("role") and isinstance(x, str) and isinstance(y, str):
            k = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), len(y))
            same += counter.text(y[: min(k, len(x))])
        break
    return same


@dataclass
class Stats:
    name: str
    tokens: list[int] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)
    violations: int = 0
    invalid: int = 0
    refused: int = 0
    compactions: int = 0
    fresh: int = 0  # message tokens not repeating the previous request's prefix
    last: list[Msg] = field(default_factory=list)

    def record(self, messages: list[Msg], exact: int, budget: int, counter: TokenCounter) -> None:
        body = counter.messages(messages)  # exact, without the tool definitions
        repeated = common_prefix(self.last, messages, counter) if self.last else 0
        self.shares += [repeated / body] if self.last else []
        self.fresh += body - repeated
        self.tokens.append(exact)
        self.violations += body > budget
        self.invalid += bool(problems(messages))
        self.last = messages

    def row(self) -> list[str]:
        mean, top = statistics.mean(self.tokens), max(self.tokens)
        median, average = statistics.median(self.shares), statistics.mean(self.shares)
        head = [f"{len(self.tokens)} / {self.refused}", f"{sum(self.tokens):,}", f"{self.fresh:,}"]
        head += [f"{mean:,.0f} / {top:,}", f"{median:.1%} / {average:.1%}"]
        return [*head, str(self.violations), str(self.invalid), str(self.compactions)]


@dataclass
class Ours:
    stats: Stats
    inputs: ContextInputs
    counter: TokenCounter
    summary: Summary | None = None

    def request(self, ui: list[Msg], answer: Msg, new: bool, system: str) -> None:
        cite = any(p["type"] in LOOKUPS for p in answer["parts"])
        inputs = replace(self.inputs, system=system, ui_messages=[*ui, answer])
        inputs = replace(inputs, summary=self.summary, citation_reminder=cite)
        try:
            got = build_context(inputs, self.counter)
            covered = covered_ids(ui, self.summary.until) if self.summary else frozenset()
            fresh = [i for i in got.compaction or [] if i not in covered] if new else []
            if fresh:  # the real summarizer, with no model: its deterministic fallback
                room = summary_cap(got.budget.available, inputs.correction)  # as chat_context
                self.summary = asyncio.run(
                    summarize(NO_MODEL, MODEL, self.summary, ui, fresh, 1.0, room)  # type: ignore[arg-type]
                )
                self.stats.compactions += 1
                got = build_context(replace(inputs, summary=self.summary), self.counter)
        except ContextBudgetError:
            self.stats.refused += 1
            return
        self.stats.record(got.messages, got.exact, got.budget.available, self.counter)


class _NoModel:
    """Stands in for the provider: every summary request fails, so the fallback runs."""

    class client:
        @staticmethod
        async def post(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("no model in the simulation")


NO_MODEL = _NoModel()


def seed_request(history: list[Msg], system: str, budget: int) -> list[Msg]:
    msgs = to_openai_messages(history[-30:])[-24:]
    while msgs and msgs[0]["role"] == "tool":  # a result whose call fell out
        msgs.pop(0)
    rounds = [i for i, m in enumerate(msgs) if m.get("tool_calls")]
    old = {c["id"] for i in rounds[:-2] for c in msgs[i]["tool_calls"]}
    for i, m in enumerate(msgs):
        if m.get("tool_call_id") in old:
            msgs[i] = {**m, "content": m["content"][:500]}
    request = [{"role": "system", "content": system}, *msgs]
    while sum(len(texts([m])) for m in request) / 4 > budget and len(request) > 2:
        del request[1]
        while len(request) > 2 and request[1]["role"] == "tool":
            del request[1]
    return request


def simulate(turns: list[Turn], window: int, system: Any, tools: list[Msg]) -> list[Stats]:
    counter = counter_for(MODEL)
    win = Window(window, "settings", "session_sim")
    tools_tokens = counter.tools(tools)
    seed_budget = compute_budget(win, None, tools_tokens).available
    inputs = ContextInputs("", [], tools, MODEL, win, now=NOW, optional_tools=OPTIONAL_TOOLS)
    ours, seed = Ours(Stats("ours"), inputs, counter), Stats("seed")
    ui: list[Msg] = []
    lookups = False  # the system prompt gains its citations section after the first search
    for user, rounds, reply in turns:
        ui.append(user)
        answer: Msg = {"id": "a" + user["id"][1:], "role": "assistant", "parts": []}
        for k, step in enumerate([[], *rounds]):
            start = [{"type": "step-start"}] if step else []
            answer = {**answer, "parts": [*answer["parts"], *start, *step]}
            new = k == 0 or any(get_tool(p["type"][5:]).runs == "panel" for p in step)  # type: ignore[union-attr]
            if new:  # a new /api/chat: the plan (and its system prompt) is built again
                lookups = lookups or any(p["type"] in LOOKUPS for p in answer["parts"])
                text = system(lookups)
            ours.request(ui, answer, new, text)
            request = seed_request([*ui, answer], text, seed_budget)
            seed.record(request, counter.messages(request) + tools_tokens, seed_budget, counter)
        final = [{"type": "step-start"}, {"type": "text", "text": reply}]
        ui.append({**answer, "parts": [*answer["parts"], *final]})
    return [ours.stats, seed]


LABELS = split("""requests assembled / refused | total prompt tokens (exact) | message tokens not a
repeated prefix | mean / max request tokens | prefix share median / mean | budget violations
(exact) | provider invariants broken | compactions (digest summary) | facts present at the end""")


def report(window: int, elapsed: float, runs: list[Stats], facts: list[str]) -> None:
    print(f"\nwindow {window:,} ({elapsed:.1f} s)\n  {'':<36}{'ours':>16}{'seed':>16}")
    kept = {s.name: [f for f in facts if f in texts(s.last)] for s in runs}
    cols = [[*s.row(), f"{len(kept[s.name])}/{len(facts)}"] for s in runs]
    for label, ours, seed in zip(LABELS, *cols, strict=True):
        print(f"  {label:<36}{ours:>16}{seed:>16}")
    for s in runs:
        print(f"  {s.name} lost: {', '.join(f for f in facts if f not in kept[s.name]) or 'none'}")
    share, broken = statistics.median(runs[0].shares), runs[0].violations
    present = len(kept["ours"])
    for name, value, ok, goal in (
        ("prefix_share_median", f"{share:.1%}", share >= 0.9, ">= 90%"),
        ("budget_violations", broken, broken == 0, "0"),
        ("facts_present", f"{present / len(facts):.0%}", present >= 0.95 * len(facts), ">= 95%"),
    ):
        print(f"TARGET window={window} {name}={value} ({'PASS' if ok else 'FAIL'}, {goal})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--windows", default="32768,8192")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    # every compaction falls back to the digest here (no model): that is the point, not news
    logging.getLogger("comfyui_assistant").setLevel(logging.ERROR)
    flows, env = load_templates(), load_object_info_file()
    turns = make_session(args.turns, env, flows, args.seed)
    tools = [spec.openai_tool() for spec in TOOLS if spec.name in ALWAYS_OFFERED]
    names = [t["function"]["name"] for t in tools]
    context = load_system_context().text

    def system(citations: bool) -> str:
        parts = PromptParts(context, environment=env.summary_line(), tool_names=names)
        return build_system_message(replace(parts, citations=citations))

    facts = [lit for t, (_, lit, _) in FACTS.items() if t <= args.turns]
    outputs = json.dumps([p["output"] for t in turns for r in t[1] for p in r])
    noisy = [lit for lit in facts if lit in outputs]
    requests = sum(len(t[1]) + 1 for t in turns)
    print(
        f"{args.turns} turns, {requests} requests, {len(outputs):,} chars of tool results", end=""
    )
    print(f" (from {len(flows)} templates), {len(facts)} facts; model {MODEL}")
    if noisy:
        print(f"warning: these fact literals also occur in tool results: {noisy}")
    for window in [int(w) for w in args.windows.split(",")]:
        started = time.perf_counter()
        runs = simulate(turns, window, system, tools)
        report(window, time.perf_counter() - started, runs, facts)


if __name__ == "__main__":
    main()
