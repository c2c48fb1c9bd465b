import { afterEach, describe, expect, it, vi } from "vitest";
import { buildTxt2Img, createTestApp, jsonResponse, link, place, type TestSetup } from "../../test/testing";

const OK = { prompt_id: "p1", number: 3, node_errors: {} };

function image(filename: string, type = "output", subfolder = "") {
  return { filename, subfolder, type };
}

/** Answers the POST with `body`, then emits `events` (type, detail) on the next ticks; the
 * assistant's look at the files with `looked`. */
function script(t: TestSetup, status: number, body: unknown, events: [string, unknown][] = [], looked: unknown[] = []) {
  t.api.handler = (route) => {
    if (route === "/assistant/outputs/look") return jsonResponse(200, { outputs: looked });
    setTimeout(() => {
      for (const [type, detail] of events) t.api.emit(type, detail);
    }, 0);
    return jsonResponse(status, body);
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("queueWorkflow", () => {
  it("POSTs the prompt like ComfyUI's queue and returns once queued when not waiting", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK);
    expect(await t.tools.queueWorkflow({ waitForResult: false })).toEqual({ ok: true, promptId: "p1", queued: true, number: 3 });
    expect(t.api.requests).toHaveLength(1);
    const [request] = t.api.requests;
    const prompt = await t.app.graphToPrompt();
    expect(request!.route).toBe("/prompt");
    expect(request!.init).toMatchObject({ method: "POST", headers: { "Content-Type": "application/json" } });
    expect(request!.body).toEqual({ client_id: "test-client", prompt: prompt.output, extra_data: { extra_pnginfo: { workflow: prompt.workflow } } });
    expect((request!.body as { prompt: Record<string, unknown> }).prompt["5"]).toEqual({
      class_type: "KSampler",
      inputs: {
        seed: 42, steps: 20, cfg: 8, sampler_name: "euler", scheduler: "simple", denoise: 1,
        model: ["1", 0], positive: ["2", 0], negative: ["3", 0], latent_image: ["4", 0],
      },
    });
    expect(t.api.listenerCount()).toBe(0);
    expect(t.tracker.calls).toEqual([]);
  });

  it("waits for the result: outputs per node, cached count, time, the files looked at", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const looked = [
      { name: "ComfyUI_00001_.png [output]", line: "ComfyUI_00001_.png [output]: PNG 512×512, all black (a failed VAE decode)" },
      { name: "previews/b.png [temp]", error: "previews/b.png [temp] is not in ComfyUI's temp folder" },
    ];
    script(t, 200, OK, [
      ["execution_start", { prompt_id: "p1" }],
      ["execution_cached", { nodes: ["1", "2", "3"], prompt_id: "p1" }],
      ["executing", "5"],
      ["executed", { node: "9", output: { images: [image("other.png")] }, prompt_id: "p0" }],
      ["executed", { node: "7", display_node: "7", output: { images: [image("ComfyUI_00001_.png"), image("b.png", "temp", "previews")] }, prompt_id: "p1" }],
      ["execution_success", { prompt_id: "p1" }],
    ], looked);
    expect(await t.tools.queueWorkflow({})).toEqual({
      ok: true,
      promptId: "p1",
      seconds: expect.any(Number),
      outputs: { 7: { images: ["ComfyUI_00001_.png [output]", "previews/b.png [temp]"] } },
      cachedNodes: 3,
      looked: [
        "ComfyUI_00001_.png [output]: PNG 512×512, all black (a failed VAE decode)",
        "previews/b.png [temp]: not looked at (previews/b.png [temp] is not in ComfyUI's temp folder)",
      ],
    });
    expect(t.api.listenerCount()).toBe(0);
    const look = t.api.requests[1]!;
    expect(look.route).toBe("/assistant/outputs/look");
    // SaveImage#7 has a VAEDecode upstream: its files are said to come after a decode
    expect(look.body).toEqual({
      outputs: ["ComfyUI_00001_.png [output]", "previews/b.png [temp]"],
      decoded: ["ComfyUI_00001_.png [output]", "previews/b.png [temp]"],
    });
  });

  it("says no file came after a decode when none is upstream of its node (an EmptyImage saved)", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const empty = place(t, "EmptyImage", [26, 900]);
    const save = place(t, "SaveImage", [400, 900]);
    link(empty, 0, save, 0);
    script(t, 200, OK, [
      ["executed", { node: String(save.id), output: { images: [image("black.png")] }, prompt_id: "p1" }],
      ["executed", { node: "7", output: { images: [image("ComfyUI_00001_.png")] }, prompt_id: "p1" }],
      ["execution_success", { prompt_id: "p1" }],
    ], []);
    await t.tools.queueWorkflow({});
    const look = t.api.requests.find((r) => r.route === "/assistant/outputs/look")!;
    expect(look.body).toEqual({ outputs: ["ComfyUI_00001_.png [output]", "black.png [output]"], decoded: ["ComfyUI_00001_.png [output]"] });
  });

  it("runs only what chosen output nodes need, on a ComfyUI that can (0.3.48+)", async () => {
    const t = createTestApp();
    const { save } = buildTxt2Img(t);
    const prompt = (route: string) =>
      route === "/system_stats" ? jsonResponse(200, { system: { comfyui_version: "0.3.64" } }) : jsonResponse(200, OK);
    t.api.handler = prompt;
    expect(await t.tools.queueWorkflow({ waitForResult: false, outputNodeIds: [save.id as number] })).toMatchObject({ ok: true, queued: true });
    const queued = t.api.requests.find((r) => r.route === "/prompt")!;
    expect((queued.body as Record<string, unknown>).partial_execution_targets).toEqual([String(save.id)]);
  });

  it("refuses a partial run that an older ComfyUI would run whole, or a node that is no output", async () => {
    const t = createTestApp();
    const { save, sampler } = buildTxt2Img(t);
    t.api.handler = (route) =>
      route === "/system_stats" ? jsonResponse(200, { system: { comfyui_version: "0.3.47" } }) : jsonResponse(200, OK);
    const old = await t.tools.queueWorkflow({ outputNodeIds: [save.id as number] });
    expect(old).toMatchObject({ ok: false });
    expect((old as { error: string }).error).toContain("This ComfyUI (0.3.47) runs whole workflows only");
    const notOutput = await t.tools.queueWorkflow({ outputNodeIds: [sampler.id as number] });
    expect((notOutput as { error: string }).error).toContain(`KSampler#${String(sampler.id)} is not an output node`);
    const missing = await t.tools.queueWorkflow({ outputNodeIds: [999] });
    expect((missing as { error: string }).error).toContain("No node has id 999; nothing was queued");
    expect(t.api.requests.some((r) => r.route === "/prompt")).toBe(false);
  });

  it("says when the files could not be looked at, and keeps the result", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [
      ["executed", { node: "9", output: { images: [image("x.png")] }, prompt_id: "p1" }],
      ["execution_success", { prompt_id: "p1" }],
    ]);
    const prompt = t.api.handler;
    t.api.handler = (route, init) =>
      route === "/assistant/outputs/look" ? jsonResponse(503, { error: "set COMFYUI_URL" }) : prompt(route, init);
    expect(await t.tools.queueWorkflow({})).toMatchObject({
      ok: true,
      outputs: { 9: { images: ["x.png [output]"] } },
      lookedError: "The outputs were not looked at: set COMFYUI_URL",
    });
  });

  it("tells where the run is while it runs: the node, its step, what was cached and run", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [
      ["execution_start", { prompt_id: "p1" }],
      ["execution_cached", { nodes: ["1", "2", "3"], prompt_id: "p1" }],
      ["executing", { node: "5", display_node: "5", prompt_id: "p1" }],
      ["progress", { value: 3, max: 20, node: "5", prompt_id: "p1" }],
      ["progress", { value: 4, max: 20, node: "5", prompt_id: "other" }],
      ["executing", { node: "6", display_node: "6", prompt_id: "p1" }],
      ["execution_success", { prompt_id: "p1" }],
    ]);
    const seen: Record<string, unknown>[] = [];
    expect(await t.tools.queueWorkflow({}, { progress: (update) => seen.push(update) })).toMatchObject({ ok: true });
    expect(seen).toEqual([
      { cached: 0, ran: 0, promptId: "p1" },
      { cached: 3, ran: 0, promptId: "p1" },
      { cached: 3, ran: 1, promptId: "p1", node: 5, step: undefined, steps: undefined },
      { cached: 3, ran: 1, promptId: "p1", node: 5, step: 3, steps: 20 },
      { cached: 3, ran: 2, promptId: "p1", node: 6, step: undefined, steps: undefined },
    ]);
  });

  it("stops waiting when the user says so: the run goes on, the model is told it was not cancelled", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [["execution_start", { prompt_id: "p1" }], ["executing", { node: "5", prompt_id: "p1" }]]);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    const result = await t.tools.queueWorkflow({}, { detach: stop.signal });
    expect(result).toMatchObject({ ok: true, promptId: "p1", running: true });
    expect(String(result.note)).toContain("it was not cancelled");
    expect(String(result.note)).toContain("Its result will come with the user's next message.");
    expect(t.api.listenerCount()).toBe(0);
    expect(t.api.requests.map((r) => r.route)).toEqual(["/prompt"]); // nothing interrupted
  });

  it("handles events that arrive before the POST answers, and `executing` null as the end", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    t.api.handler = () => {
      t.api.emit("execution_start", { prompt_id: "p1" });
      t.api.emit("executed", { node: "7", output: { text: ["x".repeat(600)], animated: [false], meta: { a: 1 } }, prompt_id: "p1" });
      return jsonResponse(200, OK);
    };
    setTimeout(() => t.api.emit("executing", null), 5);
    expect(await t.tools.queueWorkflow({ waitForResult: true })).toEqual({
      ok: true,
      promptId: "p1",
      seconds: expect.any(Number),
      outputs: { 7: { text: [`${"x".repeat(500)}… [100 more characters]`], animated: [false] } },
    });
  });

  it("ignores another prompt's end while waiting for its own", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [
      ["execution_start", { prompt_id: "other" }],
      ["executing", null],
      ["execution_success", { prompt_id: "other" }],
      ["execution_start", { prompt_id: "p1" }],
      ["executing", { node: null, prompt_id: "p1" }],
    ]);
    const result = await t.tools.queueWorkflow({});
    expect(result).toEqual({
      ok: true,
      promptId: "p1",
      seconds: expect.any(Number),
      outputs: {},
      note: "The workflow finished but no node reported an output (nothing new was computed, or it has no output nodes).",
    });
  });

  it("reports node warnings ComfyUI accepted the prompt with", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const warning = { "9": { errors: [{ type: "required_input_missing", message: "Required input is missing", details: "images", extra_info: { input_name: "images" } }], class_type: "PreviewImage" } };
    script(t, 200, { ...OK, node_errors: warning });
    expect(await t.tools.queueWorkflow({ waitForResult: false })).toEqual({
      ok: true,
      promptId: "p1",
      nodeErrors: [
        { nodeId: 9, classType: "PreviewImage", errors: [{ type: "required_input_missing", message: "Required input is missing", details: "images", inputName: "images" }] },
      ],
      queued: true,
      number: 3,
    });
  });

  it("runs the widgets' queue hooks (seed control) around a successful POST", async () => {
    const t = createTestApp();
    const { sampler } = buildTxt2Img(t);
    const calls: string[] = [];
    Object.assign(sampler.widgets![0]!, { beforeQueued: () => calls.push("before"), afterQueued: () => calls.push("after") });
    Object.assign(sampler.widgets![1]!, { afterQueued: () => { throw new Error("ignored"); } });
    script(t, 200, OK);
    expect(await t.tools.queueWorkflow({ waitForResult: false })).toMatchObject({ ok: true });
    expect(calls).toEqual(["before", "after"]);
  });

  it("returns ComfyUI's validation errors (HTTP 400) with each node error's details", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 400, {
      error: { type: "prompt_outputs_failed_validation", message: "Prompt outputs failed validation", details: "", extra_info: {} },
      node_errors: {
        "1": {
          errors: [{
            type: "value_not_in_list",
            message: "Value not in list",
            details: "ckpt_name: 'x.safetensors' not in []",
            extra_info: { input_name: "ckpt_name", input_config: [[]], received_value: "x.safetensors" },
          }],
          dependent_outputs: ["7"],
          class_type: "CheckpointLoaderSimple",
        },
        "5": {
          errors: [
            { type: "required_input_missing", message: "Required input is missing", details: "model", extra_info: { input_name: "model" } },
            { type: "value_bigger_than_max", message: "Value 20000 bigger than max of 10000", details: "steps", extra_info: { input_name: "steps", received_value: 20000 } },
          ],
          dependent_outputs: ["7"],
          class_type: "KSampler",
        },
      },
    });
    expect(await t.tools.queueWorkflow({})).toEqual({
      ok: false,
      error: "Prompt outputs failed validation",
      errorType: "prompt_outputs_failed_validation",
      nodeErrors: [
        {
          nodeId: 1,
          classType: "CheckpointLoaderSimple",
          errors: [{ type: "value_not_in_list", message: "Value not in list", details: "ckpt_name: 'x.safetensors' not in []", inputName: "ckpt_name", receivedValue: "x.safetensors" }],
        },
        {
          nodeId: 5,
          classType: "KSampler",
          errors: [
            { type: "required_input_missing", message: "Required input is missing", details: "model", inputName: "model" },
            { type: "value_bigger_than_max", message: "Value 20000 bigger than max of 10000", details: "steps", inputName: "steps", receivedValue: 20000 },
          ],
        },
      ],
    });
    expect(t.api.listenerCount()).toBe(0);
  });

  it("returns a prompt-level 400 (no outputs) with its details", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 400, { error: { type: "prompt_no_outputs", message: "Prompt has no outputs", details: "add an output node", extra_info: {} }, node_errors: [] });
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "Prompt has no outputs: add an output node", errorType: "prompt_no_outputs" });
  });

  it("returns a 400 that is not JSON as text", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    t.api.handler = () => new Response("invalid prompt", { status: 400 });
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "ComfyUI rejected the workflow (HTTP 400): invalid prompt" });
  });

  it("reports an execution error with the node, exception and the end of the traceback", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [
      ["execution_start", { prompt_id: "p1" }],
      ["executed", { node: "9", output: { images: [image("early.png", "temp")] }, prompt_id: "p1" }],
      ["execution_error", {
        prompt_id: "p1", node_id: "5", node_type: "KSampler", executed: ["1"],
        exception_type: "torch.OutOfMemoryError", exception_message: "CUDA out of memory. ",
        traceback: ["Traceback (most recent call last):\n", '  File "execution.py", line 1\n', "    x()\n", "torch.OutOfMemoryError: CUDA out of memory.\n"],
      }],
      ["executing", null],
    ]);
    expect(await t.tools.queueWorkflow({})).toEqual({
      ok: false,
      error: "Execution failed at KSampler#5: torch.OutOfMemoryError: CUDA out of memory.",
      promptId: "p1",
      seconds: expect.any(Number),
      nodeId: 5,
      nodeType: "KSampler",
      exceptionType: "torch.OutOfMemoryError",
      exceptionMessage: "CUDA out of memory. ",
      traceback: ['  File "execution.py", line 1', "    x()", "torch.OutOfMemoryError: CUDA out of memory."],
      outputs: { 9: { images: ["early.png [temp]"] } },
    });
    expect(t.api.listenerCount()).toBe(0);
  });

  it("reports an interruption", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [["execution_interrupted", { prompt_id: "p1", node_id: "5", node_type: "KSampler", executed: [] }]]);
    expect(await t.tools.queueWorkflow({})).toEqual({
      ok: false,
      error: "Execution was interrupted at KSampler#5 (cancelled in ComfyUI).",
      promptId: "p1",
      seconds: expect.any(Number),
    });
  });

  it("times out with a clear message and stops listening", async () => {
    vi.useFakeTimers();
    const t = createTestApp();
    buildTxt2Img(t);
    script(t, 200, OK, [["execution_start", { prompt_id: "p1" }]]);
    const pending = t.tools.queueWorkflow({ timeoutSeconds: 2 });
    await vi.advanceTimersByTimeAsync(2000);
    expect(await pending).toEqual({
      ok: false,
      error:
        "No result after 2 s: the prompt is still queued or running in ComfyUI. Don't queue it again: its result " +
        "will come with the user's next message.",
      promptId: "p1",
      seconds: 2,
      running: true,
    });
    expect(t.api.listenerCount()).toBe(0);
  });

  it("fails on other HTTP errors, a missing prompt_id, an unreachable server", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    t.api.handler = () => new Response("Internal Server Error", { status: 500 });
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "ComfyUI answered HTTP 500 when queueing: Internal Server Error" });
    script(t, 200, { number: 1 });
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "ComfyUI accepted the workflow but sent no prompt_id." });
    t.api.handler = () => {
      throw new TypeError("Failed to fetch");
    };
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "Could not reach ComfyUI to queue the workflow: Failed to fetch" });
    expect(t.api.listenerCount()).toBe(0);
  });

  it("fails when the graph is empty or cannot be converted", async () => {
    const t = createTestApp();
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "The workflow is empty: add nodes before queueing it." });
    buildTxt2Img(t);
    t.app.graphToPrompt = async () => {
      throw new Error("node 5 has no class");
    };
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "ComfyUI could not turn the graph into a prompt: node 5 has no class" });
    expect(t.api.requests).toEqual([]);
  });

  it("fails on invalid arguments", async () => {
    const t = createTestApp();
    expect(await t.tools.queueWorkflow({ timeoutSeconds: 0.5 })).toEqual({
      ok: false,
      error: "Invalid arguments for queueWorkflow: 'timeoutSeconds' must be integer, got number 0.5.",
    });
  });
});
