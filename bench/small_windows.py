"""Tool use at small windows: a scripted suite of graph tasks through our server, per window.

    .venv/bin/python bench/small_windows.py [--windows 4096,8192,32768] [--quick]
    # another checkout side by side (e.g. before a change):
    rm -rf /tmp/old && mkdir -p /tmp/old/comfyui_assistant
    git archive REV | tar -x -C /tmp/old/comfyui_assistant
    PYTHONPATH=/tmp/old .venv/bin/python bench/small_windows.py

The model is the scripted provider (`tests/scripted_provider.py`, a real OpenAI-compatible HTTP
server): each task is the sequence of tool calls a capable model makes for the request (read
the workflow, look up a node, add and connect it, set values, list models, run), played
whatever it is sent. The bench plays the panel: it answers the panel's tool calls with what
ComfyUI's default workflow gives (`getWorkflow` compact, `addNode` ids...) and resubmits as
the browser does; the server tools (node search and definitions, models) run for real on the
shipped node data. Each task runs in its own thread after a preamble of earlier turns (a few
chats and a pasted log), so the window holds more than the task.

A step (one model request) succeeds when the server answered it (no error part), offered every
tool the step calls, and sent what the step relies on: the user's request and every earlier
result of the task, verbatim or as a digest naming the id to recall it by (counted apart: the
model needs one more call); a result cut to fit, or left out, is a step the model takes blind.
A task succeeds when all its steps do. Also printed: the system message and tool definitions
(our count, cl100k) and the history budget the server reported. Then requests a template fits
(bench/lib/template_plans.py), each played from a template and node by node: the tool calls and
model requests each needs, and whether every step had what it needs. The whole run takes seconds:
`--quick` (what CI runs) is the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from comfyui_assistant.bench.lib.template_plans import PLANS, loaded_template, n_calls
from comfyui_assistant.core.knowledge.environment import EnvironmentService, load_object_info_file
from comfyui_assistant.core.tokens.tokens import counter_for
from comfyui_assistant.tests.conftest import start_app
from comfyui_assistant.tests.helpers import assemble, chat_body, sse_events, user
from comfyui_assistant.tests.scripted_provider import (
    ScriptedProvider,
    Status,
    Stream,
    call_piece,
    chunk,
    error_body,
    text_reply,
)

COUNTER = counter_for("gpt-4o")
# ComfyUI's default workflow as getWorkflow's "compact" detail shows it.
WORKFLOW = {
    "graph": "root",
    "nodes": [
        {"id": 4, "type": "CheckpointLoaderSimple",
         "widgets": {"ckpt_name": "v1-5-pruned-emaonly.safetensors"}},
        {"id": 6, "type": "CLIPTextEncode", "inputs": {"clip": [4, "CLIP"]},
         "widgets": {"text": "beautiful scenery nature glass bottle landscape, purple galaxy"}},
        {"id": 7, "type": "CLIPTextEncode", "inputs": {"clip": [4, "CLIP"]},
         "widgets": {"text": "text, watermark"}},
        {"id": 5, "type": "EmptyLatentImage", "widgets": {"width": 512, "height": 512}},
        {"id": 3, "type": "KSampler",
         "inputs": {"model": [4, "MODEL"], "positive": [6, "CONDITIONING"],
                    "negative": [7, "CONDITIONING"], "latent_image": [5, "LATENT"]},
         "widgets": {"seed": 156680208700286, "steps": 20, "cfg": 8}},
        {"id": 8, "type": "VAEDecode", "inputs": {"samples": [3, "LATENT"], "vae": [4, "VAE"]}},
        {"id": 9, "type": "SaveImage", "inputs": {"images": [8, "IMAGE"]}},
    ],
    "links": [[4, "MODEL", 3, "model"], [4, "CLIP", 6, "clip"], [4, "CLIP", 7, "clip"],
              [6, "CONDITIONING", 3, "positive"], [7, "CONDITIONING", 3, "negative"],
              [5, "LATENT", 3, "latent_image"], [3, "LATENT", 8, "samples"],
              [4, "VAE", 8, "vae"], [8, "IMAGE", 9, "images"]],
}  # fmt: skip
PANEL = {  # the panel's answers
    "getWorkflow": lambda args: WORKFLOW,
    "addNode": lambda args: {"ok": True, "nodeId": 10, "graph": "root", "type": args["nodeType"]},
    "connectNodes": lambda args: {"ok": True, "graph": "root", "link": list(args.values())},
    "setWidgetValues": lambda args: {"ok": True, "nodeId": args["nodeId"], "set": args["values"]},
    "queueWorkflow": lambda args: {"ok": True, "outputs": {"9": ["ComfyUI_00001_.png"]}},
    "loadTemplate": loaded_template,
}
MODELS = {
    "checkpoints": ["v1-5-pruned-emaonly.safetensors", "sd_xl_base_1.0.safetensors",
                    "juggernautXL_v9.safetensors", "flux1-dev-fp8.safetensors"],
    "loras": ["add_detail.safetensors", "sdxl_lightning_4step_lora.safetensors"],
    "upscale_models": ["RealESRGAN_x2.pth", "4x-UltraSharp.pth"],
    "vae": ["sdxl_vae.safetensors"],
}  # fmt: skip
Call = tuple[str, dict[str, Any]]


@dataclass
class Task:
    name: str
    request: str
    steps: list[list[Call]]  # the calls of each step; a final text answer follows


TASKS = [
    Task("set values", "Set steps to 30 and cfg to 6 on the sampler.", [
        [("getWorkflow", {"detail": "compact"})],
        [("setWidgetValues", {"nodeId": 3, "values": {"steps": 30, "cfg": 6}})],
    ]),
    Task("add a LoRA", "Add a LoRA between the checkpoint and the sampler.", [
        [("getWorkflow", {"detail": "compact"})],
        [("searchInstalledNodes", {"query": "load lora"})],
        [("getNodeDefinition", {"nodeType": "LoraLoader"})],
        [("addNode", {"nodeType": "LoraLoader", "nearNodeId": 4})],
        [("connectNodes", {"fromNodeId": 4, "fromOutput": "MODEL", "toNodeId": 10,
                           "toInput": "model"}),
         ("connectNodes", {"fromNodeId": 4, "fromOutput": "CLIP", "toNodeId": 10,
                           "toInput": "clip"}),
         ("connectNodes", {"fromNodeId": 10, "fromOutput": "MODEL", "toNodeId": 3,
                           "toInput": "model"})],
    ]),
    Task("upscale", "Upscale the result 2x with a model.", [
        [("getWorkflow", {"detail": "compact"})],
        [("searchInstalledNodes", {"query": "upscale image with model"})],
        [("getAvailableModels", {"category": "upscale_models"})],
        [("addNode", {"nodeType": "UpscaleModelLoader", "nearNodeId": 8})],
    ]),
    Task("pick a checkpoint", "Use one of my SDXL checkpoints.", [
        [("getAvailableModels", {"category": "checkpoints"})],
        [("getWorkflow", {"detail": "compact"})],
        [("setWidgetValues", {"nodeId": 4, "values": {"ckpt_name": "sd_xl_base_1.0.safetensors"}})],
    ]),
    Task("run", "Run it.", [[("queueWorkflow", {})]]),
]  # fmt: skip
LOG = "\n".join(
    f"[{i:04d}] Prompt executed in {i % 7 + 1}.{i % 10}s, loaded model {i % 3}" for i in range(60)
)
PREAMBLE = [
    ("What does the cfg value do?", "It sets how closely the image follows the prompt."),
    (f"My last run printed this, anything wrong?\n{LOG}", "Nothing failed; the runs are fast."),
    ("Thanks. Which sampler is good for portraits?", "dpmpp_2m with karras is a good start."),
]


@dataclass
class Outcome:
    steps: int = 0
    ok_steps: int = 0
    refused: int = 0
    missing_tools: int = 0
    blind: int = 0  # steps where something the step relies on was cut or left out
    recall: int = 0  # steps where an earlier result was digested: the model must recall it
    tasks_ok: list[str] = field(default_factory=list)
    plans_ok: list[str] = field(default_factory=list)  # PLAN_TASKS done


def _reply(calls: list[Call], step: int) -> Stream:
    pieces = [
        call_piece(i, id=f"c{step}_{i}", name=name, arguments=json.dumps(args))
        for i, (name, args) in enumerate(calls)
    ]
    return Stream([chunk(tool_calls=pieces), chunk(finish_reason="tool_calls")])


def _sent_text(request: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    messages = request["messages"]
    return messages, json.dumps(messages, ensure_ascii=False)


async def run_task(app: Any, provider: ScriptedProvider, task: Task, tid: str) -> Outcome:
    history: list[dict[str, Any]] = []
    for i, (question, answer) in enumerate(PREAMBLE):
        history.append(user(question, f"p{i}"))
        parts = [{"type": "step-start"}, {"type": "text", "text": answer}]
        history.append({"id": f"pa{i}", "role": "assistant", "parts": parts})
    history.append(user(task.request, "u"))
    for step, calls in enumerate(task.steps):
        provider.enqueue(_reply(calls, step))
    provider.enqueue(text_reply("Done."))
    first = len(provider.requests)
    message, out, error = None, Outcome(), False
    for _ in range(len(task.steps) + 1):  # a response ends at each panel step
        body = chat_body(*history, *([message] if message else []), id=tid)
        status, text = await app.chat(body)
        events = sse_events(text) if status == 200 else []
        error = error or status != 200 or any(e["type"] == "error" for e in events)
        message = assemble(events, message)
        pending = [
            p for p in message["parts"]
            if p["type"].startswith("tool-") and p["state"] == "input-available"
        ]  # fmt: skip
        if error or not pending:
            break
        for part in pending:
            part.update(state="output-available", output=PANEL[part["type"][5:]](part["input"]))
    outputs = {
        p["toolCallId"]: p.get("output", p.get("errorText"))
        for p in (message or {"parts": []})["parts"]
        if p["type"].startswith("tool-")
    }
    requests = [r for r in provider.requests[first:] if r.get("stream")]  # (not summaries)
    for step, calls in enumerate([*task.steps, []]):
        out.steps += 1
        if step >= len(requests):
            out.refused += 1
            continue
        messages, _ = _sent_text(requests[step])
        offered = {t["function"]["name"] for t in requests[step].get("tools") or []}
        lacks = any(name not in offered for name, _ in calls)
        results = {m.get("tool_call_id"): m.get("content") for m in messages if m["role"] == "tool"}
        earlier = [f"c{s}_{i}" for s in range(step) for i in range(len(task.steps[s]))]
        asked = any(task.request in str(m.get("content")) for m in messages if m["role"] == "user")
        kept = [_kept(results.get(cid), outputs.get(cid), cid) for cid in earlier]
        seen = asked and all(kept)
        out.missing_tools += lacks
        out.blind += not seen
        out.recall += seen and "recall" in kept
        out.ok_steps += not lacks and seen
    provider.requests.clear()
    if not error and out.ok_steps == out.steps:
        out.tasks_ok.append(task.name)
    out.refused += error
    return out


def _kept(sent: Any, output: Any, call_id: str) -> str:
    """ "whole" when the result was sent as the panel or tool gave it, "recall" when it was
    digested with its id to recall it by, "" when it was cut or left out."""
    if not isinstance(sent, str):
        return ""
    if sent.startswith("[digest]") and f"recall: {call_id}" in sent:
        return "recall"
    if isinstance(output, str):  # a tool error: its text
        return "whole" if output in sent else ""
    try:
        return "whole" if json.loads(sent) == output else ""
    except ValueError:
        return ""


# Requests a template fits, each played from a template and node by node (bench/lib/
# template_plans.py): the tool calls and model requests each needs, and whether every step had
# what it needs at the window.
PLAN_TASKS = [
    (Task(f"{name} ({way})", request, steps), way)
    for name, request, template, by_hand in PLANS
    for steps, way in ((template, "template"), (by_hand, "node by node"))
]


async def measure(window: int) -> tuple[Outcome, dict[str, int]]:
    logging.getLogger("comfyui_assistant").setLevel(logging.ERROR)
    provider = await ScriptedProvider().start()
    # background summaries (a thread over its high watermark) fail: the digest stands in
    provider.summaries.append(Status(500, error_body("no model summaries in this bench")))
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "local-model",
           "LLM_CONTEXT_WINDOW": str(window)}  # fmt: skip
    total, sizes = Outcome(), {}
    with tempfile.TemporaryDirectory() as data:
        environment = EnvironmentService(
            Path(data), lambda: replace(load_object_info_file(), models=MODELS), "bench"
        )
        app = await start_app(Path(data), env, environment=environment)
        try:
            for n, task in enumerate(TASKS):
                got = await run_task(app, provider, task, f"task-{n}")
                for key in ("steps", "ok_steps", "refused", "missing_tools", "blind", "recall"):
                    setattr(total, key, getattr(total, key) + getattr(got, key))
                total.tasks_ok += got.tasks_ok
            for n, (task, _) in enumerate(PLAN_TASKS):
                got = await run_task(app, provider, task, f"plan-{n}")
                total.plans_ok += got.tasks_ok
            provider.enqueue(text_reply("hi"))
            async with await app.post(
                "/api/assistant/chat", chat_body(user("hi", "s"), id="size")
            ) as r:
                await r.read()
                budget = int(r.headers.get("X-Context-Budget", "0"))
            request = provider.requests[-1]
            system = request["messages"][0]["content"]
            sizes = {
                "system": COUNTER.text(system if isinstance(system, str) else json.dumps(system)),
                "tools": COUNTER.tools(request.get("tools") or []),
                "n_tools": len(request.get("tools") or []),
                "budget": budget,
            }
        finally:
            await app.close()
            await provider.stop()
    return total, sizes


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--windows", default="4096,8192,32768")
    parser.add_argument("--quick", action="store_true", help="the same run: it takes seconds")
    args = parser.parse_args()
    import comfyui_assistant

    print(f"code: {Path(comfyui_assistant.__file__).parent}")
    print("window | system + tools (tools offered) | history budget | tasks done | steps ok | "
          "steps refused / tool not offered / blind | steps that must recall")  # fmt: skip
    results = {}
    for window in (int(w) for w in args.windows.split(",")):
        out, s = await measure(window)
        results[window] = (out, s)
        print(
            f"{window:>6} | {s['system']:,} + {s['tools']:,} = {s['system'] + s['tools']:,} "
            f"({s['n_tools']}) | {s['budget']:,} | {len(out.tasks_ok)}/{len(TASKS)} | "
            f"{out.ok_steps}/{out.steps} | {out.refused} / {out.missing_tools} / {out.blind} | "
            f"{out.recall}"
        )
    print(
        "\nrequest | way | tool calls | model requests | done at "
        + ", ".join(str(w) for w in results)
    )
    for task, way in PLAN_TASKS:
        done = ", ".join("yes" if task.name in o.plans_ok else "no" for o, _ in results.values())
        print(f"{task.request} | {way} | {n_calls(task.steps)} | {len(task.steps) + 1} | {done}")
    targets = {4096: 1200, 8192: 2000}
    for window, limit in targets.items():
        if window in results:
            s = results[window][1]
            size = s["system"] + s["tools"]
            verdict = "PASS" if size <= limit else "FAIL"
            print(f"TARGET system + tools at {window}: {size:,} <= {limit:,}: {verdict}")
    for window, (out, _) in results.items():
        verdict = "PASS" if len(out.tasks_ok) == len(TASKS) else "FAIL"
        done = f"{len(out.tasks_ok)}/{len(TASKS)}"
        print(f"TARGET every task succeeds at {window}: {done}: {verdict}")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
