import { afterEach, describe, expect, it, vi } from "vitest";
import { nodeBox, overlaps } from "./layout";
import type { ComfyWorkflow } from "../host/comfy";
import { buildTxt2Img, createTestApp, place, type TestSetup } from "../../test/testing";

const EDIT = ["beforeChange", "afterChange"];

/** ComfyUI's default workflow in API format. */
function apiTxt2Img(): Record<string, unknown> {
  return {
    "3": {
      class_type: "KSampler",
      inputs: {
        seed: 156680208700286, steps: 20, cfg: 8, sampler_name: "euler", scheduler: "normal", denoise: 1,
        model: ["4", 0], positive: ["6", 0], negative: ["7", 0], latent_image: ["5", 0],
      },
      _meta: { title: "KSampler" },
    },
    "4": { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "v1-5-pruned-emaonly.safetensors" }, _meta: { title: "Load Checkpoint" } },
    "5": { class_type: "EmptyLatentImage", inputs: { width: 512, height: 512, batch_size: 1 } },
    "6": { class_type: "CLIPTextEncode", inputs: { text: "beautiful scenery", clip: ["4", 1] }, _meta: { title: "Positive" } },
    "7": { class_type: "CLIPTextEncode", inputs: { text: "text, watermark", clip: ["4", 1] } },
    "8": { class_type: "VAEDecode", inputs: { samples: ["3", 0], vae: ["4", 2] } },
    "9": { class_type: "SaveImage", inputs: { filename_prefix: "ComfyUI", images: ["8", 0] } },
  };
}

const TXT2IMG_TYPES = {
  1: "CheckpointLoaderSimple", 2: "CLIPTextEncode", 3: "CLIPTextEncode", 4: "EmptyLatentImage",
  5: "KSampler", 6: "VAEDecode", 7: "SaveImage",
};

/** The default graph in UI format (serialised from a real graph). */
function uiTxt2Img(): Record<string, unknown> {
  const source = createTestApp();
  buildTxt2Img(source);
  return JSON.parse(JSON.stringify(source.graph.serialize())) as Record<string, unknown>;
}

describe("loadWorkflow where the frontend has workflow tabs (ComfyUI): a new tab, the user's kept", () => {
  const types = (t: ReturnType<typeof createTestApp>) => t.graph.nodes.map((n) => n.type).sort();

  it("opens a UI workflow in a new tab without asking, and says so; the user's tab keeps its graph", async () => {
    const t = createTestApp({ tabs: true });
    place(t, "KSampler", [0, 0]);
    const store = t.app.extensionManager.workflow!;
    const first = store.activeWorkflow!;
    const result = await t.tools.loadWorkflow({ workflow: uiTxt2Img() });
    expect(result).toEqual({
      ok: true,
      format: "ui",
      tab: "Unsaved Workflow (2)",
      note:
        "ComfyUI opened it in a new tab, “Unsaved Workflow (2)”, which the user now sees; their tab “Unsaved Workflow” is unchanged for now, " +
        "but it is not saved and this ComfyUI keeps no copy of it for a page reload (it restores only the tab that is active then): " +
        "a reload would close it unless the user saves it, or goes back to it, first. This chat moved to the new tab: the graph tools now work on it.",
      nodeCount: 7,
      linkCount: 9,
      nodes: TXT2IMG_TYPES,
    });
    expect(t.dialog.asked).toEqual([]);
    expect(store.activeWorkflow).not.toBe(first);
    expect(types(t)).toHaveLength(7);
    await (store as unknown as { openWorkflow(w: unknown): Promise<unknown> }).openWorkflow(first);
    expect(types(t)).toEqual(["KSampler"]); // untouched
  });

  describe("whether the user's tab outlives a page reload, as the frontend keeps it (not its version)", () => {
    const kept = (title: string) => `their tab “${title}” is unchanged. This chat moved`;
    afterEach(() => localStorage.clear());

    async function noteFrom(arrange: (t: TestSetup, tab: ComfyWorkflow) => void): Promise<string> {
      const t = createTestApp({ tabs: true });
      arrange(t, t.app.extensionManager.workflow!.activeWorkflow!);
      const result = await t.tools.loadWorkflow({ workflow: uiTxt2Img() });
      return result.note as string;
    }

    it("an unsaved tab of which the frontend keeps a draft (newer frontends' drafts, by path)", async () => {
      const index = { order: ["1a2b3c4d"], entries: { "1a2b3c4d": { path: "workflows/Unsaved Workflow.json", name: "Unsaved Workflow.json", isTemporary: true } } };
      expect(await noteFrom(() => localStorage.setItem("Comfy.Workflow.DraftIndex.v2:personal", JSON.stringify(index)))).toContain(kept("Unsaved Workflow"));
      localStorage.clear();
      localStorage.setItem("Comfy.Workflow.Drafts", JSON.stringify({ "workflows/Unsaved Workflow.json": { data: "{}" } }));
      expect(await noteFrom(() => {})).toContain(kept("Unsaved Workflow"));
      // A draft of another tab only: this one is not kept (1.27 keeps no drafts at all).
      localStorage.setItem("Comfy.Workflow.Drafts", JSON.stringify({ "workflows/Other.json": { data: "{}" } }));
      expect(await noteFrom(() => {})).toContain("is unchanged for now, but it is not saved");
    });

    it("a saved tab without changes is kept; with unsaved changes, or with persistence off, it is not", async () => {
      const saved = (tab: ComfyWorkflow, modified: boolean) =>
        Object.defineProperties(tab, { isTemporary: { value: false }, isModified: { value: modified } });
      expect(await noteFrom((_, tab) => void saved(tab, false))).toContain(kept("Unsaved Workflow"));
      expect(await noteFrom((_, tab) => void saved(tab, true))).toContain(
        "is unchanged for now, but it has unsaved changes and this ComfyUI keeps no copy of it for a page reload (it restores only the tab that is active then): " +
          "a reload would close it (its file stays, without those changes) unless the user saves it, or goes back to it, first. This chat moved",
      );
      const index = { entries: { a: { path: "workflows/Unsaved Workflow.json" } } };
      localStorage.setItem("Comfy.Workflow.DraftIndex.v2:personal", JSON.stringify(index));
      const persistOff = (t: TestSetup) => void (t.app.extensionManager.setting.get = (id: string) => (id === "Comfy.Workflow.Persist" ? false : undefined));
      expect(await noteFrom(persistOff)).toContain("is unchanged for now, but it is not saved");
    });
  });

  it("builds an API workflow in a new blank tab, as one undo step there", async () => {
    const t = createTestApp({ tabs: true });
    place(t, "KSampler", [0, 0]);
    const store = t.app.extensionManager.workflow!;
    const first = store.activeWorkflow!;
    const result = await t.tools.loadWorkflow({ workflow: apiTxt2Img() });
    expect(result).toMatchObject({ ok: true, format: "api", tab: "Unsaved Workflow (2)", nodeCount: 7, linkCount: 9 });
    expect(t.dialog.asked).toEqual([]);
    await store.activeWorkflow!.changeTracker!.undo!();
    expect(t.graph.nodes).toHaveLength(0); // the new tab was blank
    await (store as unknown as { openWorkflow(w: unknown): Promise<unknown> }).openWorkflow(first);
    expect(types(t)).toEqual(["KSampler"]);
  });

  it("opens nothing when the workflow names unknown types", async () => {
    const t = createTestApp({ tabs: true });
    const workflow = uiTxt2Img();
    (workflow.nodes as { type: string }[])[0]!.type = "FancyUpscaler9000";
    expect(await t.tools.loadWorkflow({ workflow })).toMatchObject({ ok: false, error: expect.stringContaining("Nothing was loaded") });
    expect(await t.tools.loadWorkflow({ workflow: { "1": { class_type: "KSamplerr", inputs: {} } } })).toMatchObject({ ok: false });
    expect(t.app.extensionManager.workflow!.openWorkflows).toHaveLength(1);
  });
});

describe("loadWorkflow, UI format", () => {
  it("loads into an empty graph with app.loadGraphData, without asking", async () => {
    const t = createTestApp();
    expect(await t.tools.loadWorkflow({ workflow: uiTxt2Img() })).toEqual({
      ok: true,
      format: "ui",
      replaced: true,
      nodeCount: 7,
      linkCount: 9,
      nodes: TXT2IMG_TYPES,
    });
    expect(t.dialog.asked).toEqual([]);
    expect(t.tracker.calls).toEqual(["captureCanvasState"]);
    expect(t.canvas.dirty).toBeGreaterThan(0);
    t.tracker.undo();
    expect(t.graph.nodes).toHaveLength(0);
  });

  it("replaces a non-empty graph only after the user confirms", async () => {
    const t = createTestApp();
    place(t, "KSampler", [0, 0]);
    t.tracker.reset();
    t.dialog.answers = [true];
    expect(await t.tools.loadWorkflow({ workflow: uiTxt2Img() })).toMatchObject({ ok: true, format: "ui", nodeCount: 7 });
    expect(t.dialog.asked).toEqual([
      { title: "Replace the workflow?", message: "The assistant wants to replace the current workflow (1 node) with a new one (7 nodes)." },
    ]);
    t.tracker.undo();
    expect(t.graph.nodes.map((n) => n.type)).toEqual(["KSampler"]);
  });

  it("changes nothing when the user declines (or dismisses the dialog)", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    t.dialog.answers = [false, null];
    const declined = {
      ok: false,
      declined: true,
      error:
        "The user declined replacing the current workflow (7 nodes); nothing was changed. Ask what they want instead, or make smaller edits to the current graph.",
    };
    expect(await t.tools.loadWorkflow({ workflow: { nodes: [], links: [] } })).toEqual(declined);
    expect(await t.tools.loadWorkflow({ workflow: apiTxt2Img() })).toEqual(declined);
    expect(t.graph.nodes).toHaveLength(7);
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on unknown node types, before asking the user", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const workflow = uiTxt2Img();
    (workflow.nodes as { type: string }[])[0]!.type = "CheckpointLoaderSimpl";
    (workflow.nodes as { type: string }[])[1]!.type = "FancyUpscaler9000";
    expect(await t.tools.loadWorkflow({ workflow })).toEqual({
      ok: false,
      error:
        'Unknown node types: "CheckpointLoaderSimpl" (closest: CheckpointLoaderSimple, CheckpointLoader); ' +
        '"FancyUpscaler9000" (no close match). Nothing was loaded; use installed class names (search the installed node types if unsure).',
    });
    expect(t.dialog.asked).toEqual([]);
    expect(t.graph.nodes).toHaveLength(7);
  });

  it("accepts nodes that are subgraphs defined in the workflow", async () => {
    const t = createTestApp();
    const loaded: unknown[] = [];
    t.app.loadGraphData = (data: unknown) => {
      loaded.push(data);
    };
    const workflow = { nodes: [{ id: 1, type: "7c1f-uuid" }], links: [], definitions: { subgraphs: [{ id: "7c1f-uuid" }] } };
    expect(await t.tools.loadWorkflow({ workflow })).toEqual({ ok: true, format: "ui", replaced: true, nodeCount: 0, linkCount: 0, nodes: {} });
    expect(loaded).toEqual([workflow]);
  });

  it("fails on malformed UI workflows and when ComfyUI cannot load it", async () => {
    const t = createTestApp();
    expect(await t.tools.loadWorkflow({ workflow: { nodes: [{ id: 1 }, 5] } })).toEqual({
      ok: false,
      error: '2 item(s) of "nodes" are not objects with a "type"; nothing was loaded.',
    });
    expect(await t.tools.loadWorkflow({ workflow: { nodes: [], links: {} } })).toEqual({
      ok: false,
      error: '"links" must be an array of links; nothing was loaded.',
    });
    t.app.loadGraphData = async () => {
      throw new Error("bad version");
    };
    expect(await t.tools.loadWorkflow({ workflow: uiTxt2Img() })).toEqual({ ok: false, error: "ComfyUI could not load the workflow: bad version" });
    expect(t.tracker.calls).toEqual([]);
  });
});

describe("loadWorkflow, API format", () => {
  it("builds the graph node by node with the workflow's ids, left to right, as one undo step", async () => {
    const t = createTestApp();
    expect(await t.tools.loadWorkflow({ workflow: apiTxt2Img() })).toEqual({
      ok: true,
      format: "api",
      replaced: true,
      nodeCount: 7,
      linkCount: 9,
      nodes: { 3: "KSampler", 4: "CheckpointLoaderSimple", 5: "EmptyLatentImage", 6: "CLIPTextEncode", 7: "CLIPTextEncode", 8: "VAEDecode", 9: "SaveImage" },
      notes: [
        `node "4": 'ckpt_name' lists no choices (nothing installed, or not loaded yet), so "v1-5-pruned-emaonly.safetensors" was set unchecked; ComfyUI checks it when the workflow is queued`,
      ],
    });
    expect(t.tracker.calls).toEqual(EDIT);
    const node = (id: number) => t.graph.getNodeById(id)!;
    expect(node(3).widgets!.map((w) => w.value)).toEqual([156680208700286, "randomize", 20, 8, "euler", "normal", 1]);
    expect(node(6).title).toBe("Positive");
    expect(node(6).widgets![0]!.value).toBe("beautiful scenery");
    expect(node(4).title).toBe("Load Checkpoint");
    // Columns follow the links: loader, then encoders and latent, sampler, decode, save.
    const x = (id: number) => node(id).pos[0];
    expect(x(4)).toBeLessThan(x(6));
    expect(x(6)).toBe(x(7));
    expect(x(6)).toBe(x(5));
    expect(x(5)).toBeLessThan(x(3));
    expect(x(3)).toBeLessThan(x(8));
    expect(x(8)).toBeLessThan(x(9));
    const boxes = t.graph.nodes.map((n) => nodeBox(n, 30));
    for (const [i, a] of boxes.entries()) for (const [j, b] of boxes.entries()) if (i !== j) expect(overlaps(a, b)).toBe(false);
    // The same prompt comes back out.
    const prompt = await t.app.graphToPrompt();
    expect(prompt.output["3"]!.inputs).toMatchObject({ model: ["4", 0], positive: ["6", 0], negative: ["7", 0], latent_image: ["5", 0] });
    t.tracker.undo();
    expect(t.graph.nodes).toHaveLength(0);
  });

  it("replaces a confirmed non-empty graph; ids that are not numbers get new ones; unknown inputs are noted", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    t.dialog.answers = [true];
    const workflow = {
      loader: { class_type: "LoadImage", inputs: { image: "example.png", upload: "image" } },
      "2": { class_type: "ImageInvert", inputs: { image: ["loader", 0] } },
      preview: { class_type: "PreviewImage", inputs: { images: ["2", 0] } },
    };
    expect(await t.tools.loadWorkflow({ workflow })).toEqual({
      ok: true,
      format: "api",
      replaced: true,
      nodeCount: 3,
      linkCount: 2,
      nodes: { 2: "ImageInvert", 3: "LoadImage", 4: "PreviewImage" },
      notes: [`ignored node "loader" (LoadImage) input 'upload': LoadImage has no such widget or input`],
    });
    expect(t.dialog.asked).toHaveLength(1);
    t.tracker.undo();
    expect(t.graph.nodes).toHaveLength(7);
  });

  it("changes nothing and lists every problem in the workflow", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const workflow = {
      "1": { class_type: "KSampler", inputs: { model: ["9", 0], positive: ["2", 5], negative: ["2", 0], latent_image: ["3", 0], seed: ["4", 0], steps: 0, cfg: "x" } },
      "2": { class_type: "CLIPTextEncode", inputs: { text: "a", clip: "clip" } },
      "3": { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: false } },
      "4": { class_type: "PrimitiveInt", inputs: { value: 1 } },
    };
    expect(await t.tools.loadWorkflow({ workflow })).toEqual({
      ok: false,
      error:
        "Nothing was loaded. Fix these 8 problems and call loadWorkflow again: " +
        `1) node "1" (KSampler) input 'model' links to node "9", which is not in the workflow. ` +
        `2) node "1" (KSampler) input 'positive' links to output 5 of node "2" (CLIPTextEncode), whose outputs are CONDITIONING at 0. ` +
        `3) node "1" (KSampler) input 'latent_image' takes LATENT, but output 0 of node "3" (CheckpointLoaderSimple) is MODEL. ` +
        `4) node "1" (KSampler) input 'seed': 'seed' is a widget of KSampler#1, not an input: it cannot take a link here. Set its value with setWidgetValues instead. ` +
        "Its inputs: model (MODEL) at 0, positive (CONDITIONING) at 1, negative (CONDITIONING) at 2, latent_image (LATENT) at 3. " +
        `5) node "1" (KSampler): 'steps' must be between 1 and 10000, got 0. ` +
        `6) node "1" (KSampler): 'cfg' must be a number between 0 and 100, got "x". ` +
        `7) node "2" (CLIPTextEncode) input 'clip' needs a link [nodeId, outputIndex], got "clip". ` +
        `8) node "3" (CheckpointLoaderSimple): 'ckpt_name' must be a name, got false.`,
    });
    expect(t.graph.nodes).toHaveLength(7);
    expect(t.dialog.asked).toEqual([]);
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on unknown types and malformed entries", async () => {
    const t = createTestApp();
    expect(await t.tools.loadWorkflow({ workflow: { "1": { class_type: "KSamplerr", inputs: {} } } })).toEqual({
      ok: false,
      error:
        'Unknown node type: "KSamplerr" (closest: KSampler, KSamplerSelect). Nothing was loaded; use installed class names (search the installed node types if unsure).',
    });
    expect(await t.tools.loadWorkflow({ workflow: { "1": { class_type: "KSampler" }, "2": { type: "VAEDecode" }, "3": 5 } })).toEqual({
      ok: false,
      error: 'In API format every entry must be {class_type, inputs}; "2", "3" are not. Nothing was loaded.',
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on something that is neither format, and on invalid arguments", async () => {
    const t = createTestApp();
    const neither = {
      ok: false,
      error:
        'The workflow is in neither of ComfyUI\'s formats: UI format is an object with "nodes" (and "links"); API format maps node ids to {class_type, inputs}. Nothing was loaded.',
    };
    expect(await t.tools.loadWorkflow({ workflow: {} })).toEqual(neither);
    expect(await t.tools.loadWorkflow({ workflow: { nodes: "KSampler" } })).toEqual(neither);
    expect(await t.tools.loadWorkflow({ workflow: "{}" })).toEqual({
      ok: false,
      error: `Invalid arguments for loadWorkflow: 'workflow' must be object, got string "{}".`,
    });
  });
});

describe("loadWorkflow, from an attached file", () => {
  afterEach(() => vi.unstubAllGlobals());

  const serve = (status: number, body: unknown) => {
    const asked: string[] = [];
    vi.stubGlobal("fetch", async (url: string) => {
      asked.push(url);
      return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    });
    return asked;
  };

  it("loads the workflow the server read from the attachment", async () => {
    const t = createTestApp();
    const asked = serve(200, { name: "out.png", workflow: uiTxt2Img() });
    expect(await t.tools.loadWorkflow({ attachment: "att_1" })).toMatchObject({ ok: true, format: "ui", nodeCount: 7 });
    expect(asked).toEqual(["/api/assistant/attachments/att_1/workflow"]);
  });

  it("says why when the file holds none, and wants exactly one source", async () => {
    const t = createTestApp();
    serve(422, { error: "photo.png holds no ComfyUI workflow (no ComfyUI workflow in it: attached as a plain image)" });
    expect(await t.tools.loadWorkflow({ attachment: "att_2" })).toEqual({
      ok: false,
      error: "photo.png holds no ComfyUI workflow (no ComfyUI workflow in it: attached as a plain image); nothing was loaded.",
    });
    expect(await t.tools.loadWorkflow({})).toMatchObject({ ok: false, error: expect.stringContaining('Give either "workflow"') });
    expect(t.graph.nodes).toHaveLength(0);
  });
});
