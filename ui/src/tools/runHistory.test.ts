import { describe, expect, it } from "vitest";
import { comfyRuns, finishedRun, historyRun, isRunNote, runNote } from "./runHistory";
import { buildTxt2Img, createTestApp, DECODE_CAUSE, jsonResponse, type TestSetup } from "../../test/testing";

const image = (filename: string, type = "output") => ({ filename, subfolder: "", type });
const LOOKED = "ComfyUI_00001_.png [output]: PNG 512×512, all black (the usual sign of a failed VAE decode: NaN values)";
const FILES = ["ComfyUI_00001_.png [output]", "ComfyUI_00002_.png [output]"];

/** ComfyUI's history entry of a run, as its prompt worker stores it. */
function entry(status: "success" | "error", messages: [string, Record<string, unknown>][], outputs: Record<string, unknown> = {}) {
  return { prompt: [], outputs, status: { status_str: status, completed: status === "success", messages }, meta: {} };
}

const SUCCESS = entry(
  "success",
  [
    ["execution_start", { prompt_id: "p1", timestamp: 1_000 }],
    ["execution_cached", { prompt_id: "p1", nodes: ["1", "2"], timestamp: 1_010 }],
    ["execution_success", { prompt_id: "p1", timestamp: 42_200 }],
  ],
  { 9: { images: [image("ComfyUI_00001_.png"), image("ComfyUI_00002_.png")] } },
);

const FAILED = entry("error", [
  ["execution_start", { prompt_id: "p1", timestamp: 1_000 }],
  ["execution_error", {
    prompt_id: "p1", node_id: "5", node_type: "KSampler", executed: [],
    exception_type: "torch.OutOfMemoryError", exception_message: "CUDA out of memory.", traceback: [], timestamp: 4_200,
  }],
]);

/** ComfyUI answering /history/p1 with `history`, and the assistant's look at the files: all
 * black, with the decode's cause for the files the panel says a decode made (as the server). */
function comfy(history: unknown): TestSetup {
  const t = createTestApp();
  buildTxt2Img(t);
  t.api.handler = (route, init) => {
    if (route === "/history/p1") return jsonResponse(200, history);
    if (route === "/assistant/outputs/look") {
      const body = JSON.parse(String(init?.body)) as { outputs: string[]; decoded?: string[] };
      const line = (name: string) => `${name}: PNG 512×512, all black${body.decoded?.includes(name) ? DECODE_CAUSE : ""}`;
      return jsonResponse(200, { outputs: body.outputs.map((name) => ({ name, line: line(name) })) });
    }
    return jsonResponse(404, {});
  };
  return t;
}

/** A prompt as ComfyUI keeps it in a history entry: [number, id, prompt, extra data, outputs]. */
const ran = (prompt: Record<string, unknown>) => [3, "p1", prompt, {}, ["9"]];
const DECODED = {
  "3": { class_type: "KSampler", inputs: { latent_image: ["5", 0] } },
  "5": { class_type: "EmptyLatentImage", inputs: { width: 512, height: 512, batch_size: 1 } },
  "8": { class_type: "VAEDecodeTiled", inputs: { samples: ["3", 0], vae: ["4", 2], tile_size: 512 } },
  "9": { class_type: "SaveImage", inputs: { images: ["8", 0], filename_prefix: "ComfyUI" } },
};
const UNDECODED = {
  "1": { class_type: "EmptyImage", inputs: { width: 512, height: 512, batch_size: 1, color: 0 } },
  "9": { class_type: "SaveImage", inputs: { images: ["1", 0], filename_prefix: "ComfyUI" } },
};

describe("a run read back from ComfyUI's history", () => {
  it("says how it ended: outputs, cached nodes, the time between its first and last event", () => {
    expect(historyRun(SUCCESS)).toEqual({
      outcome: { kind: "success" },
      run: { outputs: { 9: { images: ["ComfyUI_00001_.png [output]", "ComfyUI_00002_.png [output]"] } }, cachedNodes: [1, 2] },
      seconds: 41.2,
    });
    expect(historyRun(FAILED)).toMatchObject({ outcome: { kind: "error", detail: { node_id: "5" } }, seconds: 3.2 });
    const interrupted = entry("error", [["execution_interrupted", { prompt_id: "p1", node_id: "5", node_type: "KSampler", executed: [] }]]);
    // A partial run of node 18 in a real ComfyUI 0.3.64: its history also lists the output node 6
    // of an earlier run (cached, not asked for); the one of node 2, an ancestor that ran, stays.
    const partial = {
      ...entry("success", [["execution_cached", { prompt_id: "p1", nodes: ["1", "6"] }]], {
        6: { images: [image("ComfyUI_00004_.png")] },
        2: { text: ["shown"] },
        18: { images: [image("ComfyUI_00005_.png")] },
      }),
      prompt: [11, "p1", {}, { client_id: "c" }, ["18"]],
    };
    expect(historyRun(partial).run.outputs).toEqual({ 2: { text: ["shown"] }, 18: { images: ["ComfyUI_00005_.png [output]"] } });
    expect(historyRun(interrupted)).toEqual({ outcome: { kind: "interrupted", detail: expect.objectContaining({ node_id: "5" }) }, run: { outputs: {}, cachedNodes: [] } });
  });

  it("is not there while the run is queued or running; once ended, is said as queueWorkflow says it", async () => {
    expect(await finishedRun(comfy({}).app, "p1")).toBeNull();
    const t = comfy({ p1: { ...SUCCESS, prompt: ran(DECODED) } });
    expect(await finishedRun(t.app, "p1", t.lg)).toEqual({
      ok: true,
      promptId: "p1",
      seconds: 41.2,
      outputs: { 9: { images: ["ComfyUI_00001_.png [output]", "ComfyUI_00002_.png [output]"] } },
      cachedNodes: 2,
      looked: [LOOKED, LOOKED.replace("00001", "00002")],
    });
    expect(t.api.requests.map((r) => r.route)).toEqual(["/history/p1", "/assistant/outputs/look"]);
    expect(t.api.requests[1]!.body).toEqual({ outputs: FILES, decoded: FILES }); // SaveImage#9 is after VAEDecodeTiled#8
    expect(await finishedRun(comfy({ p1: FAILED }).app, "p1")).toMatchObject({
      ok: false,
      error: "Execution failed at KSampler#5: torch.OutOfMemoryError: CUDA out of memory.",
      nodeId: 5,
    });
  });

  it("names the decode as the cause of all black only where a decode made the file", async () => {
    const bare = LOOKED.replace(DECODE_CAUSE, "");
    // an EmptyImage saved; a history entry without its prompt (nothing known); after a decode
    const cases: [unknown[], string[] | undefined, string][] = [[ran(UNDECODED), undefined, bare], [[], undefined, bare], [ran(DECODED), FILES, LOOKED]];
    for (const [prompt, decoded, line] of cases) {
      const t = comfy({ p1: { ...SUCCESS, prompt } });
      expect((await finishedRun(t.app, "p1", t.lg))?.looked).toEqual([line, line.replace("00001", "00002")]);
      expect(t.api.requests[1]!.body).toEqual({ outputs: FILES, ...(decoded ? { decoded } : {}) });
    }
  });

  it("throws when ComfyUI cannot say (the run stays remembered)", async () => {
    const t = comfy({});
    t.api.handler = () => new Response("Internal Server Error", { status: 500 });
    await expect(finishedRun(t.app, "p1")).rejects.toThrow("ComfyUI answered HTTP 500 for the run's history");
  });

  it("becomes one line for the model, which the panel tells apart from the user's words", async () => {
    const setup = comfy({ p1: { ...SUCCESS, prompt: ran(DECODED) } });
    const runs = comfyRuns(setup.app, setup.lg);
    const note = await runs.endedNote("p1");
    expect(note).toBe(
      "[Run p1 finished after you stopped waiting: success in 41.2 s; 2 nodes cached; outputs: 9: 2 images; " +
        `looked: ${LOOKED}; ${LOOKED.replace("00001", "00002")}]`,
    );
    expect(await comfyRuns(comfy({ p1: FAILED }).app).endedNote("p1")).toBe(
      "[Run p1 finished after you stopped waiting: failed in 3.2 s: Execution failed at KSampler#5: torch.OutOfMemoryError: CUDA out of memory.]",
    );
    expect(await comfyRuns(comfy({}).app).endedNote("p1")).toBeNull();
    expect(runNote("p2", { ok: true, outputs: { 3: { text: ["hi"] } } })).toBe("[Run p2 finished after you stopped waiting: success; outputs: 3: 1 text]");
    expect(isRunNote(note!)).toBe(true);
    expect(isRunNote(`${note!}\n${note!}`)).toBe(true);
    expect(isRunNote("[Run the sampler again] please")).toBe(false);
  });

  it("names a file's URL by the frontend's api base", () => {
    const runs = comfyRuns(comfy({}).app);
    expect(runs.fileUrl({ filename: "x.png", subfolder: "a b", type: "temp" })).toBe("/comfy/api/view?filename=x.png&subfolder=a+b&type=temp");
  });
});
