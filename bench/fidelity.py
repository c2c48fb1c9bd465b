"""Fidelity: are the facts a question needs in what the provider receives? (issue 12)

    .venv/bin/python bench/fidelity.py [--seeds 5] [--turns 120] [--windows 4096,8192,32768]
        [--variants fallback,model] [--profiles tools,chat] [--quick]

Synthetic ComfyUI conversations (seeded): the user states facts ("my checkpoint is X", "always
use seed N", "never use the Y LoRA"), the assistant states facts ("I set the seed on node 7 to
N", "I saved this as the preset Z"), with tool rounds (getWorkflow, addNode, setWidgetValues,
queueWorkflow run by the "panel"; searchInstalledNodes and getNodeDefinition run by our server
on its shipped node list), chatter and long pastes. Each fact has an id, the turn it was
stated, who stated it and a distinctive token (a made-up name, a long number, a file name); at
question turns the user asks for earlier facts by description (never by token). Profiles:
"tools" (most tokens are tool results, as in a working session) and "chat" (explanations
instead of workflow dumps and lookups).

Each conversation is driven through OUR REAL SERVER (`standalone.create_app` on 127.0.0.1, as
tests/conftest.py starts it) against a scripted OpenAI-compatible provider, turn by turn as
the panel does: each `POST /api/assistant/chat` carries the whole thread so far plus the new
message;
panel tool calls end a response, get their outputs and are resubmitted; the streamed answer,
assembled from the SSE stream, becomes the next assistant message. The window is
`LLM_CONTEXT_WINDOW`. The summarizer's (non-streamed) calls are answered per variant:
  fallback  HTTP 500: the engine's deterministic digest (core/fallback_summary) stands in;
  model     a scripted "model summary", faithful but lossy by a stated rule: it keeps, from
            the previous summary and the new part's User/Assistant lines (never tool results,
            questions or sentences over 240 chars), every sentence with a value (a digit, a
            quotation, a file name, an identifier with _ or -), then the newest 350 words (the
            cap SUMMARY_PROMPT sets). An idealized summarizer: read it as an upper bound.

Measured at each question turn, on the first request of that turn (after any compaction):
  ours      share of the needed facts whose token appears anywhere in the messages the
            provider received (system message with the summary, history, tool calls);
  baseline  the same thread (every UI message converted to OpenAI messages with full tool
            results, `to_openai_messages`), newest-first whole messages while they fit (the
            first that does not fit ends it; the question always in), in the same history
            budget: the response's context report (`data-context`) `budget` minus the system
            message without its summary section, counted as the engine counts (exact tokens,
            + reply priming). The same token check (the system prompt holds no token).
  skipping  the baseline, but a message that does not fit is passed over and older ones
            that fit are still taken (stronger, if incoherent: reported, not targeted).
A short thread (12 turns, no large results) is also run at each window: when the report says
nothing was left out or summarized, every needed fact must be there.
Medians over the seeds; TARGET lines: ours >= baseline at every window, >= +10 points at 4K
and 8K, 100% when the thread fits. Exit code 0 even when a target is missed. `--quick` (CI: one
seed, 30 turns, short threads of 8, the tools profile; every window and variant) takes seconds.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from comfyui_assistant.bench.lib.chat_drive import (
    MODEL,
    ChatServer,
    Msg,
    bench_arguments,
    context_report,
    first_streamed,
    newest_first,
    quiet_engine_logs,
    text_of,
)
from comfyui_assistant.core.base.ui_messages import to_openai_messages
from comfyui_assistant.core.knowledge.environment import load_object_info_file
from comfyui_assistant.core.tokens.tokens import REPLY_PRIMING, counter_for
from comfyui_assistant.tests.scripted_provider import Stream, call_piece, chunk, text_reply

SUMMARY_HEADER = "\n\n## Summary of the earlier conversation\n"  # context_steps.summary_section

# --- data ---------------------------------------------------------------------------------------

SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ren",
    "sa",
    "tor",
    "vel",
    "qui",
    "dra",
    "fen",
    "zor",
    "bri",
    "pam",
    "lux",
    "nev",
    "hol",
    "tas",
    "gri",
    "mon",
    "fal",
)


@dataclass(frozen=True)
class Fact:
    id: str
    turn: int
    speaker: str  # "user" or "assistant"
    token: str  # searched verbatim in what the provider received
    ask: str  # how a question refers to it (never contains the token)


@dataclass
class Step:
    """One model step: text, or tool calls (name, arguments, the panel's output or None for a
    tool our server runs)."""

    text: str | None = None
    calls: list[tuple[str, dict[str, Any], Any]] = field(default_factory=list)


@dataclass
class Turn:
    index: int
    user: str
    steps: list[Step]
    facts: list[Fact] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)  # fact ids a question here needs


class Names:
    """Distinctive tokens, unique within a conversation and absent from the shipped node list
    (server tool results quote it)."""

    def __init__(self, rng: random.Random, forbidden: str) -> None:
        self.rng, self.forbidden = rng, forbidden
        self.used: set[str] = set()

    def take(self, make: Any) -> str:
        while True:
            token = str(make())
            if token not in self.used and token.lower() not in self.forbidden:
                self.used.add(token)
                return token

    def word(self) -> str:
        return self.take(lambda: "".join(self.rng.sample(SYLLABLES, 3)).capitalize())

    def number(self, digits: int) -> str:
        return self.take(lambda: str(self.rng.randrange(10 ** (digits - 1), 10**digits)))


def user_fact(rng: random.Random, names: Names) -> tuple[str, str, str, dict[str, Any] | None]:
    """(message, token, how to ask for it, widget values the assistant then sets or None)."""
    kind = rng.randrange(9)
    if kind == 0:
        t = names.take(lambda: f"{names.word().lower()}Mix_v{rng.randint(2, 99)}.safetensors")
        return f"My checkpoint is {t}, load that one for every render.", t, "my checkpoint", None
    if kind == 1:
        t = names.number(7)
        return f"Always use seed {t} for the finals.", t, "the seed for finals", {"seed": int(t)}
    if kind == 2:
        w = names.take(lambda: f"{rng.randint(9, 40) * 64}x{rng.randint(9, 40) * 64}")
        return f"The client wants {w} for every frame.", w, "the client's size", None
    if kind == 3:
        t = names.word()
        return f"Never use the {t} LoRA, it ruins faces.", t, "the LoRA I banned", None
    if kind == 4:
        t = names.word()
        msg = f'The client project is called "{t} Coffee", put it in every filename prefix.'
        return msg, t, "the client project's name", None
    if kind == 5:
        t = f"renders/{names.word().lower()}_{rng.randint(10, 99)}"
        names.used.add(t)
        return f"Save everything under {t} from now on.", t, "the output folder", None
    if kind == 6:
        t = names.take(lambda: f"{rng.randint(2, 9)}.{rng.randint(11, 99)}")
        return f"Keep the CFG at {t}, higher burns the colours.", t, "the CFG value", {"cfg": t}
    if kind == 7:
        t = names.word()
        msg = f"My Discord handle for the share step is {t}_art, tag me there."
        return msg, t, "my Discord handle", None
    t = f"{names.word().lower()}_ref_{rng.randint(10, 99)}.png"
    names.used.add(t)
    return f"The reference image is {t} in my input folder.", t, "the reference image", None


def assistant_fact(
    rng: random.Random, names: Names, node: int
) -> tuple[str, str, str, str, list[tuple[str, dict[str, Any], Any]]]:
    """(user request, assistant answer, token, how to ask for it, the panel calls made)."""
    kind = rng.randrange(6)
    if kind == 0:
        t = names.number(8)
        calls = [("setWidgetValues", {"nodeId": node, "values": {"seed": int(t)}}, {"ok": True})]
        return (
            "Pick a fresh seed for the test renders.",
            f"I set the seed on node {node} to {t}; tell me if you want it fixed.",
            t,
            "the test seed you picked",
            calls,
        )
    if kind == 1:
        t = f"{names.word()}-{rng.randint(10, 99)}"
        names.used.add(t)
        return (
            "Save this setup as a preset.",
            f"I saved this setup as the preset {t}. You can load it from the preset list.",
            t,
            "the preset name you saved",
            [],
        )
    if kind == 2:
        t = names.word()
        new_id = node + 20
        calls = [("addNode", {"nodeType": "UpscaleModelLoader"}, {"ok": True, "nodeId": new_id})]
        return (
            "Add an upscaler after the decode.",
            f"Node {new_id} is the upscaler now; I titled its group {t} Upscale to find it.",
            t,
            "the upscaler group's title",
            calls,
        )
    if kind == 3:
        t = names.take(lambda: f"0.{rng.randint(101, 989)}")
        calls = [("setWidgetValues", {"nodeId": node, "values": {"denoise": float(t)}}, {"ok": 1})]
        return (
            "The refine pass changes too much, tone it down.",
            f"I lowered the refine pass on node {node} to denoise {t}; it keeps the layout now.",
            t,
            "the refine denoise you set",
            calls,
        )
    if kind == 4:
        t = f"{names.word().lower()}_{names.number(5)}_.png"
        names.used.add(t)
        out = {"ok": True, "promptId": f"p{rng.randint(1, 999)}", "seconds": 11.5}
        return (
            "Run it.",
            f"It finished; the render is saved as {t} in the output folder.",
            t,
            "the file name of that render",
            [("queueWorkflow", {}, out)],
        )
    t = names.word()
    return (
        "Which sampler setup do you recommend here?",
        f"Use dpmpp_2m with karras; I stored that combo as the {t} recipe in your notes.",
        t,
        "the recipe name you stored",
        [],
    )


NODE_TYPES = [
    ("CheckpointLoaderSimple", ["model.safetensors"]),
    ("CLIPTextEncode", ["a photo of a lighthouse at dusk, volumetric light"]),
    ("KSampler", [156680208700286, "randomize", 20, 7, "euler", "normal", 1]),
    ("VAEDecode", []),
    ("EmptyLatentImage", [512, 512, 1]),
    ("SaveImage", ["ComfyUI"]),
    ("LoraLoader", ["detail.safetensors", 0.8, 0.8]),
    ("ImageScaleBy", ["lanczos", 1.5]),
    ("ControlNetApply", [0.7]),
]


def workflow(rng: random.Random) -> dict[str, Any]:
    nodes = []
    for i in range(1, rng.randint(10, 26)):
        kind, widgets = rng.choice(NODE_TYPES)
        nodes.append(
            {
                "id": i,
                "type": kind,
                "pos": [rng.randint(0, 1800), rng.randint(0, 900)],
                "size": [315, rng.choice([98, 126, 262])],
                "inputs": [{"name": "in", "type": "*", "link": i * 2}],
                "outputs": [{"name": "out", "type": "*", "links": [i * 2 + 1]}],
                "widgets_values": widgets,
            }
        )
    links = [[i, i, 0, i + 1, 0, "*"] for i in range(1, len(nodes))]
    return {"nodes": nodes, "links": links, "groups": [], "version": 0.4}


CHATTER = [
    ("Thanks, looks good.", "Glad it works."),
    ("ok", "Ready when you are."),
    ("Hmm, give me a minute to think.", "Sure, take your time."),
    ("Can you explain what CFG does, briefly?", "CFG sets how strongly the sampler follows the "
     "prompt: higher follows it more literally, too high burns colours and detail."),
    ("What's the difference between euler and euler_a?", "euler is deterministic; euler_a adds "
     "noise at each step, so results vary more and never fully converge."),
]  # fmt: skip
EXPLANATIONS = [
    ("Why do my faces look waxy at high CFG?", "High CFG pushes the sampler to follow the "
     "prompt too literally: contrast and saturation climb, skin loses texture and the result "
     "looks waxy. Lower CFG a little, add a little noise with an ancestral sampler, or run a "
     "light img2img pass with a detail LoRA at low strength. Keeping the step count moderate "
     "also helps, since very long schedules over-smooth skin on most SD1.5 checkpoints."),
    ("How should I structure a two-pass upscale?", "Render the base image at the model's native "
     "size, upscale the pixels with a model upscaler, encode back to latent and sample again "
     "with a low denoise so the layout stays and only detail is added. Tiled VAE decode keeps "
     "memory in check on bigger outputs; a final sharpen is optional and usually unnecessary."),
    ("What does the scheduler actually change?", "The scheduler decides how the noise level "
     "falls across the steps: karras spends more steps at low noise, which sharpens detail; "
     "normal spaces them evenly; exponential drops quickly. The sampler decides how each step "
     "moves; the scheduler decides where the steps are. Try karras with dpmpp samplers first."),
    ("Is ControlNet depth or canny better for architecture?", "Depth keeps the volumes and the "
     "perspective but lets surfaces change; canny keeps the edges, windows and lines exactly, "
     "which suits facades. Many people stack both at lower strengths: depth for the space, "
     "canny for the outline, ending canny early so the texture can still vary."),
]  # fmt: skip
PASTE_LINES = [
    "Traceback (most recent call last):",
    '  File "/ComfyUI/execution.py", line 151, in recursive_execute',
    "    output_data, output_ui = get_output_data(obj, input_data_all)",
    '  File "/ComfyUI/nodes.py", line 1206, in sample',
    "    return common_ksampler(model, seed, steps, cfg, sampler_name, scheduler, positive)",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "Requested to load SDXLClipModel",
    "Loading 1 new model",
    "loaded completely 0.0 1560.802734375 True",
    "100%|##########| 20/20 [00:07<00:00,  2.61it/s]",
    "Prompt executed in 9.74 seconds",
]
SERVER_LOOKUPS = [
    ("searchInstalledNodes", {"query": "upscale image"}),
    ("searchInstalledNodes", {"query": "load lora"}),
    ("getNodeDefinition", {"nodeType": "KSampler"}),
    ("getNodeDefinition", {"nodeType": "CLIPTextEncode"}),
    ("searchInstalledNodes", {"query": "controlnet"}),
]


def conversation(
    seed: int, turns: int, forbidden: str, *, profile: str = "tools", small: bool = False
) -> list[Turn]:
    """A conversation of `turns` turns. `profile` "tools": workflow dumps, lookups, pastes and
    edits between the facts; "chat": no workflow dumps or lookups (explanations instead: most
    of the thread is text both speakers wrote). `small`: facts and chatter only, and one
    question at the end, about every fact (a thread that fits)."""
    rng = random.Random(seed)
    names = Names(rng, forbidden)
    facts: list[Fact] = []
    out: list[Turn] = []
    node = rng.randint(3, 12)
    next_question = rng.randint(14, 20)
    for t in range(1, turns + 1):
        last = t == turns
        roll = rng.random()
        if (last and small) or (not small and t >= next_question and len(facts) >= 3):
            pool = [f for f in facts if f.turn < t]
            needed = pool if small else rng.sample(pool, min(len(pool), rng.choice([1, 2, 2, 3])))
            asks = ", ".join(f.ask for f in needed)
            text = f"Quick check before I send this to the client: remind me of {asks}."
            reply = "Going with what we agreed earlier; I'll apply it to the next render."
            out.append(Turn(t, text, [Step(reply)], needs=[f.id for f in needed]))
            next_question = t + rng.randint(8, 14)
            continue
        if roll < 0.18 or (small and roll < 0.4):
            text, token, ask, values = user_fact(rng, names)
            fact = Fact(f"f{len(facts) + 1}", t, "user", token, ask)
            steps = [Step("Noted, I'll keep that in mind.")]
            if values:
                call = ("setWidgetValues", {"nodeId": node, "values": values}, {"ok": True})
                steps = [Step(calls=[call]), Step("Done, and noted for later.")]
            facts.append(fact)
            out.append(Turn(t, text, steps, facts=[fact]))
        elif roll < 0.36 or (small and roll < 0.8):
            ask_text, answer, token, ask, calls = assistant_fact(rng, names, node)
            fact = Fact(f"f{len(facts) + 1}", t, "assistant", token, ask)
            steps = ([Step(calls=calls)] if calls else []) + [Step(answer)]
            facts.append(fact)
            out.append(Turn(t, ask_text, steps, facts=[fact]))
        elif small:
            text, reply = rng.choice(CHATTER)
            out.append(Turn(t, text, [Step(reply)]))
        elif profile == "chat" and roll < 0.62:
            text, reply = rng.choice(EXPLANATIONS)
            out.append(Turn(t, text, [Step(reply)]))
        elif roll < 0.52:
            graph = workflow(rng)
            steps = [
                Step(calls=[("getWorkflow", {"detail": "full"}, graph)]),
                Step(f"Your graph has {len(graph['nodes'])} nodes; the sampler feeds the decode."),
            ]
            out.append(Turn(t, "Have a look at my workflow, is anything off?", steps))
        elif roll < 0.62:
            name, args = rng.choice(SERVER_LOOKUPS)
            steps = [Step(calls=[(name, args, None)]), Step("Here is what is installed for it.")]
            out.append(Turn(t, "What do I have installed for that?", steps))
        elif roll < 0.72:
            lines = [rng.choice(PASTE_LINES) for _ in range(rng.randint(12, 30))]
            text = "It failed again, here's the log:\n" + "\n".join(lines)
            reply = "The GPU ran out of memory: lower the batch size or the resolution."
            out.append(Turn(t, text, [Step(reply)]))
        elif roll < 0.8:
            new_type = rng.choice(NODE_TYPES)[0]
            calls = [("addNode", {"nodeType": new_type}, {"ok": True, "nodeId": node + t})]
            steps = [Step(calls=calls), Step(f"Added a {new_type} and wired it in.")]
            out.append(Turn(t, f"Add a {new_type} node.", steps))
        else:
            text, reply = rng.choice(CHATTER)
            out.append(Turn(t, text, [Step(reply)]))
    check_tokens(out)
    return out


def turn_text(turn: Turn) -> str:
    steps = [s.text or json.dumps([[n, a, o] for n, a, o in s.calls]) for s in turn.steps]
    return "\n".join([turn.user, *steps])


def check_tokens(turns: Sequence[Turn]) -> None:
    """Each token occurs in its own turn only (so finding it means finding that statement)."""
    for fact in all_facts(turns).values():
        where = [t.index for t in turns if fact.token in turn_text(t)]
        if where != [fact.turn]:
            raise AssertionError(f"token {fact.token!r} of turn {fact.turn} occurs in {where}")


def all_facts(turns: Sequence[Turn]) -> dict[str, Fact]:
    return {f.id: f for t in turns for f in t.facts}


# --- the scripted provider ------------------------------------------------------------------------


def summary_reply(body: Msg) -> str:
    """The scripted model summary (the rule is in the module docstring)."""
    prompt = str(body["messages"][-1]["content"])
    previous, _, new = prompt.partition("New part of the conversation:\n")
    previous = (
        previous.split("Previous summary:\n", 1)[-1] if "Previous summary:" in previous else ""
    )
    keep = [line[2:] for line in previous.splitlines() if line.startswith("- ")]
    for line in new.splitlines():
        speaker, _, text = line.partition(": ")
        if speaker not in ("User", "Assistant"):
            continue
        text = re.sub(r"\s*\[calls: .*\]$", "", text)
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            has_value = re.search(r"\d|[\"“]|\.\w{2,5}\b|\w[_-]\w", sentence)
            if has_value and not sentence.endswith("?") and len(sentence) <= 240:
                keep.append(f"{speaker}: {sentence}")
    words, lines = 0, []
    for line in reversed(keep):  # the newest 350 words
        words += len(line.split())
        if words > 350:
            break
        lines.append(line)
    kept = "\n".join(f"- {line}" for line in reversed(lines)) or "- none"
    return (  # the sections the summarizer asks for (summary_checks rejects a summary without)
        f"## Goals\n- none\n## Workflow\n- none\n## Decisions\n{kept}\n"
        "## Preferences the user stated\n- none\n## Open requests\n- none"
    )


def step_reply(step: Step, turn: int, k: int) -> Stream:
    if step.text is not None:
        return text_reply(step.text)
    pieces = [
        call_piece(i, id=f"call_{turn}_{k}_{i}", name=name, arguments=json.dumps(args))
        for i, (name, args, _) in enumerate(step.calls)
    ]
    return Stream([chunk(tool_calls=pieces), chunk(finish_reason="tool_calls")])


# --- measuring ------------------------------------------------------------------------------------


def baseline_request(
    ui: Sequence[Msg], system: str, budget: int, *, skip: bool = False
) -> list[Msg]:
    """Newest-first whole messages of the full thread in `budget` (the report's budget: the
    system message and the reply priming come off it, as in the engine), the latest always.
    The first message that does not fit ends it; `skip`: it is passed over and older ones
    that fit are still taken (a stronger, if incoherent, baseline)."""
    counter = counter_for(MODEL)
    history = to_openai_messages(list(ui))
    room = budget - counter.message({"role": "system", "content": system}) - REPLY_PRIMING
    return [{"role": "system", "content": system}, *newest_first(history, room, skip=skip)]


STRATEGIES = ("ours", "baseline", "skipping")
AGES = ((1, 10), (11, 40), (41, 10**6))  # turns between the statement and the question


@dataclass
class Question:
    turn: int
    needs: list[Fact]
    found: dict[str, set[str]]  # strategy -> ids of the needed facts its request holds
    fits: bool  # the context report: nothing left out, nothing summarized
    summary: bool  # the request carried a summary
    room: int  # the history budget (the report's budget minus the system message)


@dataclass
class Run:
    questions: list[Question] = field(default_factory=list)
    compactions: int = 0
    thread_tokens: int = 0  # the whole thread at the end (full tool results)
    tool_tokens: int = 0  # of which tool results

    def tally(self, keep: Any = None) -> tuple[int, dict[str, int]]:
        """(facts needed, found per strategy), over the facts `keep(question, fact)` accepts."""
        needed, found = 0, dict.fromkeys(STRATEGIES, 0)
        for q in self.questions:
            for f in q.needs:
                if keep is None or keep(q, f):
                    needed += 1
                    for name in STRATEGIES:
                        found[name] += f.id in q.found[name]
        return needed, found

    def shares(self) -> dict[str, float]:
        needed, found = self.tally()
        return {k: (v / needed if needed else 1.0) for k, v in found.items()}


class Bench(ChatServer):
    """Our standalone app for one window, with its provider."""

    def __init__(self, window: int) -> None:
        super().__init__(window, summary_reply)

    async def run(self, turns: Sequence[Turn], thread: str, summaries: str) -> Run:
        provider, facts, run = self.provider, all_facts(turns), Run()
        provider.summary_mode = summaries
        calls_before = provider.summary_calls
        ui: list[Msg] = []
        for turn in turns:
            ui.append({"id": f"u{turn.index}", "role": "user", "parts": [
                {"type": "text", "text": turn.user}]})  # fmt: skip
            provider.replies.clear()
            provider.enqueue(*(step_reply(s, turn.index, k) for k, s in enumerate(turn.steps)))
            outputs = {
                f"call_{turn.index}_{k}_{i}": out
                for k, s in enumerate(turn.steps)
                for i, (_, _, out) in enumerate(s.calls)
            }
            mark = len(provider.requests)
            message = await self.post(thread, ui, None)
            first_report = context_report(message)
            while pending := [
                p for p in message["parts"]
                if p["type"].startswith("tool-") and p.get("state") == "input-available"
            ]:  # fmt: skip
                for part in pending:  # the panel runs its tools and resubmits
                    part.update(state="output-available", output=outputs[part["toolCallId"]])
                message = await self.post(thread, [*ui, message], message)
            ui.append(message)
            if not turn.needs:
                continue
            request = first_streamed(provider.requests[mark:])
            received = request["messages"]
            system = str(received[0]["content"]).split(SUMMARY_HEADER)[0]
            assert first_report is not None, "no context report"
            needs = [facts[i] for i in turn.needs]
            budget = int(first_report["budget"])
            texts = {
                "ours": text_of(received),
                "baseline": text_of(baseline_request(ui[:-1], system, budget)[1:]),
                "skipping": text_of(baseline_request(ui[:-1], system, budget, skip=True)[1:]),
            }
            counts = first_report["counts"]
            found = {k: {f.id for f in needs if f.token in t} for k, t in texts.items()}
            fits = counts["dropped"] == 0 and counts["summarized"] == 0
            room = budget - counter_for(MODEL).message({"role": "system", "content": system})
            room -= REPLY_PRIMING
            summary = first_report["summary"] is not None
            run.questions.append(Question(turn.index, needs, found, fits, summary, room))
        counter, whole = counter_for(MODEL), to_openai_messages(ui)
        run.thread_tokens = counter.messages(whole)
        run.tool_tokens = sum(counter.message(m) for m in whole if m["role"] == "tool")
        run.compactions = provider.summary_calls - calls_before
        return run


# --- the report -----------------------------------------------------------------------------------


def pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:.1%}"


Key = tuple[str, str, int]  # profile, variant, seed


@dataclass
class WindowResult:
    window: int
    runs: dict[Key, Run]
    fits: dict[int, Run]  # seed: the short thread
    seconds: float

    def of(self, profile: str, variant: str) -> list[Run]:
        return [r for (p, v, _), r in sorted(self.runs.items()) if (p, v) == (profile, variant)]

    def medians(self, profile: str, variant: str) -> dict[str, float]:
        """Median over the seeds of each strategy's share, and of ours − baseline ("diff")."""
        per = [r.shares() for r in self.of(profile, variant)]
        out = {k: statistics.median(p[k] for p in per) for k in STRATEGIES}
        out["diff"] = statistics.median(p["ours"] - p["baseline"] for p in per)
        return out

    def fit_share(self) -> tuple[float | None, int, int]:
        """Ours over the short threads' questions that fit whole: (share, fitting, asked)."""
        asked = [q for r in self.fits.values() for q in r.questions]
        fitted = [q for q in asked if q.fits]
        needed = sum(len(q.needs) for q in fitted)
        found = sum(len(q.found["ours"]) for q in fitted)
        return (found / needed if needed else None), len(fitted), len(asked)


async def measure(
    seeds: Sequence[int], turns: int, small_turns: int, windows: Sequence[int],
    variants: Sequence[str], profiles: Sequence[str], forbidden: str = "",
) -> list[WindowResult]:  # fmt: skip
    convs = {(p, s): conversation(s, turns, forbidden, profile=p) for p in profiles for s in seeds}
    small = {s: conversation(1000 + s, small_turns, forbidden, small=True) for s in seeds}
    out = []
    for window in windows:
        started = time.perf_counter()
        async with Bench(window) as bench:
            runs = {}
            for (p, s), turns_ in convs.items():
                for v in variants:
                    runs[(p, v, s)] = await bench.run(turns_, f"{p}-{v}-{s}", v)
            fits = {s: await bench.run(small[s], f"small-{s}", "fallback") for s in seeds}
        out.append(WindowResult(window, runs, fits, time.perf_counter() - started))
    return out


def _shares(runs: Sequence[Run], keep: Any) -> tuple[str, int]:
    needed, found = 0, dict.fromkeys(STRATEGIES, 0)
    for r in runs:
        n, f = r.tally(keep)
        needed += n
        for k in STRATEGIES:
            found[k] += f[k]
    return " / ".join(pct(found[k] / needed if needed else None) for k in STRATEGIES), needed


def _by_speaker(speaker: str) -> Any:
    return lambda q, f: f.speaker == speaker


def _by_age(lo: int, hi: int) -> Any:
    return lambda q, f: lo <= q.turn - f.turn <= hi


ROWS = [(f"{s} facts", _by_speaker(s)) for s in ("user", "assistant")] + [
    (f"age {lo}-{hi}" if hi < 10**6 else f"age {lo}+", _by_age(lo, hi)) for lo, hi in AGES
]


def report(
    results: Sequence[WindowResult], variants: Sequence[str], profiles: Sequence[str]
) -> list[str]:
    lines = []
    for got in results:
        rooms = [q.room for r in got.runs.values() for q in r.questions]
        lines.append(
            f"\nwindow {got.window:,} ({got.seconds:.1f} s): history budget "
            f"{min(rooms):,}-{max(rooms):,} tokens (the report's budget minus the system message)"
        )
        for p in profiles:
            runs = got.of(p, variants[0])
            size = statistics.median(r.thread_tokens for r in runs)
            tools = sum(r.tool_tokens for r in runs) / max(1, sum(r.thread_tokens for r in runs))
            lines.append(
                f"  profile {p}: threads of {size:,.0f} tokens (median; {tools:.0%} tool results)"
            )
            for v in variants:
                runs = got.of(p, v)
                m = got.medians(p, v)
                questions = sum(len(r.questions) for r in runs)
                needed = sum(r.tally()[0] for r in runs)
                summaries = sum(r.compactions for r in runs)
                seen = sum(q.summary for r in runs for q in r.questions)
                lost = sum(
                    len(q.found["baseline"] - q.found["ours"]) for r in runs for q in r.questions
                )
                lines.append(
                    f"    {v:<8}  ours {pct(m['ours']):>6}  baseline {pct(m['baseline']):>6}  "
                    f"diff {100 * m['diff']:+5.1f} pts  (skipping baseline "
                    f"{pct(m['skipping'])}; {questions} questions, {needed} facts needed, "
                    f"{summaries} summaries made, {seen} questions saw one; {lost} facts the "
                    f"baseline had and ours missed)"
                )
                for label, keep in ROWS:
                    text, n = _shares(runs, keep)
                    lines.append(f"    {'':<8}    {label:<15} {text}  ({n} needed)")
                per = "  ".join(
                    f"{x['ours']:.0%}/{x['baseline']:.0%}" for x in (r.shares() for r in runs)
                )
                lines.append(f"    {'':<8}    per seed ours/baseline: {per}")
        share, fitted, asked = got.fit_share()
        lines.append(
            f"  fits: short threads, {fitted}/{asked} questions with nothing left out or "
            f"summarized; ours {pct(share)} of their facts"
        )
    lines.append(
        "\n(rows by speaker and age: ours / baseline / skipping baseline, all seeds pooled; "
        "the shares above are medians over the seeds)"
    )
    for p in profiles:
        for v in variants:
            for got in results:
                m = got.medians(p, v)
                ok = m["ours"] >= m["baseline"]
                name = f"TARGET {p}/{v} window={got.window}"
                lines.append(
                    f"{name} ours>=baseline {pct(m['ours'])} vs {pct(m['baseline'])} "
                    f"({'PASS' if ok else 'FAIL'})"
                )
                if got.window <= 8192:
                    ok = m["diff"] >= 0.10
                    lines.append(
                        f"{name} margin {100 * m['diff']:+.1f} pts ({'PASS' if ok else 'FAIL'}, "
                        f">= +10 pts)"
                    )
    for got in results:
        share, _, _ = got.fit_share()
        status = "n/a: no short thread fit" if share is None else (
            "PASS" if share == 1.0 else "FAIL")  # fmt: skip
        lines.append(
            f"TARGET window={got.window} fits {pct(share)} of the needed facts when the thread "
            f"fits ({status}, 100%)"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_arguments(__doc__, "conversations per profile")
    parser.add_argument("--turns", type=int, default=120, help="turns per conversation")
    parser.add_argument("--small-turns", type=int, default=12, help="turns of the short thread")
    parser.add_argument("--profiles", default="tools,chat", help="conversations: tools,chat")
    parser.add_argument("--quick", action="store_true", help="1 seed, 30 turns, profile tools")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.turns, args.small_turns, args.profiles = 1, 30, 8, "tools"
    forbidden = json.dumps(load_object_info_file().nodes).lower()
    seeds = list(range(args.seed, args.seed + args.seeds))
    windows = [int(w) for w in args.windows.split(",")]
    variants, profiles = args.variants.split(","), args.profiles.split(",")
    print(
        f"{args.seeds} conversations of {args.turns} turns per profile (seeds {seeds[0]}-"
        f"{seeds[-1]}), short threads of {args.small_turns} turns; windows {windows}; "
        f"model {MODEL}"
    )
    with quiet_engine_logs():
        results = asyncio.run(
            measure(seeds, args.turns, args.small_turns, windows, variants, profiles, forbidden)
        )
    print("\n".join(report(results, variants, profiles)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
