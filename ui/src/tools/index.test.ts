import { afterEach, describe, expect, it } from "vitest";
import type { ComfyApp } from "../host/comfy";
import { graphTools, isPanelTool, PANEL_TOOL_NAMES, runTool, type ToolResult } from "./index";
import { createTestApp, jsonResponse } from "../../test/testing";

// The graph tools (the install tools read ComfyUI-Manager, not the graph: manager.test.ts).
const VALID_ARGS: Partial<Record<(typeof PANEL_TOOL_NAMES)[number], unknown>> = {
  getWorkflow: {},
  addNode: { nodeType: "KSampler" },
  removeNodes: { nodeIds: [1] },
  connectNodes: { fromNodeId: 1, fromOutput: 0, toNodeId: 2, toInput: 0 },
  setWidgetValues: { nodeId: 1, values: { steps: 3 } },
  queueWorkflow: {},
  loadWorkflow: { workflow: { nodes: [] } },
};

afterEach(() => {
  delete (globalThis as { LiteGraph?: unknown }).LiteGraph;
});

describe("panel tools", () => {
  it("exposes the twelve tools by name", () => {
    const t = createTestApp();
    expect(Object.keys(t.tools)).toEqual([...PANEL_TOOL_NAMES]);
    expect(PANEL_TOOL_NAMES).toEqual(["getWorkflow", "addNode", "removeNodes", "connectNodes", "setWidgetValues", "queueWorkflow", "loadWorkflow", "loadTemplate", "findMissing", "installNodePacks", "downloadModels", "restartComfyUI"]);
    expect(isPanelTool("addNode")).toBe(true);
    expect(isPanelTool("searchInstalledNodes")).toBe(false);
  });

  it("runTool runs a tool by name and answers an unknown name with an error result", async () => {
    const t = createTestApp();
    expect(await runTool(t.app, "addNode", '{"nodeType": "VAEDecode"}', t.lg)).toMatchObject({ ok: true, nodeId: 1 });
    expect(await runTool(t.app, "deleteEverything", {}, t.lg)).toEqual({
      ok: false,
      error: 'Unknown panel tool "deleteEverything". Panel tools: getWorkflow, addNode, removeNodes, connectNodes, setWidgetValues, queueWorkflow, loadWorkflow, loadTemplate, findMissing, installNodePacks, downloadModels, restartComfyUI.',
    });
  });

  it("uses window.LiteGraph by default, and says so when it is missing", async () => {
    const t = createTestApp();
    const tools = graphTools(t.app);
    expect(await tools.addNode({ nodeType: "VAEDecode" })).toEqual({
      ok: false,
      error: "Unexpected error in addNode: LiteGraph is not loaded on this page",
    });
    (globalThis as { LiteGraph?: unknown }).LiteGraph = t.lg;
    expect(await tools.addNode({ nodeType: "VAEDecode" })).toMatchObject({ ok: true, type: "VAEDecode" });
  });

  it("never rejects: unexpected failures come back as results naming the tool", async () => {
    const t = createTestApp();
    const broken = new Proxy(t.app, {
      get(target, key) {
        if (key === "graph" || key === "rootGraph") throw new Error("graph is gone");
        return Reflect.get(target, key);
      },
    }) as ComfyApp;
    const tools = graphTools(broken, t.lg);
    for (const name of PANEL_TOOL_NAMES.filter((n) => n in VALID_ARGS)) {
      expect(await tools[name](VALID_ARGS[name])).toEqual({ ok: false, error: `Unexpected error in ${name}: graph is gone` });
    }
    t.app.graphToPrompt = () => Promise.reject("a plain string");
    t.graph.add(t.lg.createNode("VAEDecode")!);
    t.api.handler = () => jsonResponse(200, { prompt_id: "x" });
    expect(await t.tools.queueWorkflow({})).toEqual({ ok: false, error: "ComfyUI could not turn the graph into a prompt: a plain string" });
  });

  it("closes the change tracker even when an edit fails half-way", async () => {
    const t = createTestApp();
    t.graph.add = () => {
      throw new Error("max number of nodes reached");
    };
    expect(await t.tools.addNode({ nodeType: "VAEDecode" })).toEqual({
      ok: false,
      error: "Unexpected error in addNode: max number of nodes reached",
    });
    expect(t.tracker.calls).toEqual(["beforeChange", "afterChange"]);
  });

  it("builds ComfyUI's default workflow from nothing, with JSON-safe results only", async () => {
    const t = createTestApp();
    const results: ToolResult[] = [];
    const call = async (name: (typeof PANEL_TOOL_NAMES)[number], args: unknown) => {
      const result = await t.tools[name](args);
      results.push(result);
      expect(result.ok, JSON.stringify(result)).toBe(true);
      return result;
    };
    await call("addNode", { nodeType: "CheckpointLoaderSimple" });
    await call("addNode", { nodeType: "CLIPTextEncode", nearNodeId: 1, widgets: { text: "a red fox" } });
    await call("addNode", { nodeType: "CLIPTextEncode", nearNodeId: 1, widgets: { text: "blurry" } });
    await call("addNode", { nodeType: "EmptyLatentImage", nearNodeId: 1, widgets: { width: 768 } });
    await call("addNode", { nodeType: "KSampler", nearNodeId: 2, widgets: { seed: 1, steps: 25 } });
    await call("addNode", { nodeType: "VAEDecode", nearNodeId: 5 });
    await call("addNode", { nodeType: "SaveImage", nearNodeId: 6 });
    for (const [from, out, to, inp] of [
      [1, "MODEL", 5, "model"], [1, "CLIP", 2, "clip"], [1, "CLIP", 3, "clip"], [2, 0, 5, "positive"],
      [3, 0, 5, "negative"], [4, 0, 5, "latent_image"], [5, 0, 6, "samples"], [1, "VAE", 6, "vae"], [6, 0, 7, "images"],
    ] as const) {
      await call("connectNodes", { fromNodeId: from, fromOutput: out, toNodeId: to, toInput: inp });
    }
    await call("setWidgetValues", { nodeId: 5, values: { cfg: 7 } });
    const compact = await call("getWorkflow", {});
    expect(compact.nodes).toEqual([
      { id: 1, type: "CheckpointLoaderSimple", widgets: { ckpt_name: "" } },
      { id: 2, type: "CLIPTextEncode", inputs: { clip: [1, "CLIP"] }, widgets: { text: "a red fox" } },
      { id: 3, type: "CLIPTextEncode", inputs: { clip: [1, "CLIP"] }, widgets: { text: "blurry" } },
      { id: 4, type: "EmptyLatentImage", widgets: { width: 768 } },
      {
        id: 5,
        type: "KSampler",
        inputs: { model: [1, "MODEL"], positive: [2, "CONDITIONING"], negative: [3, "CONDITIONING"], latent_image: [4, "LATENT"] },
        widgets: { seed: 1, steps: 25, cfg: 7 },
      },
      { id: 6, type: "VAEDecode", inputs: { samples: [5, "LATENT"], vae: [1, "VAE"] } },
      { id: 7, type: "SaveImage", inputs: { images: [6, "IMAGE"] } },
    ]);
    await call("getWorkflow", { detail: "full" });
    t.api.handler = () => {
      setTimeout(() => t.api.emit("execution_success", { prompt_id: "p" }), 0);
      return jsonResponse(200, { prompt_id: "p", number: 1, node_errors: {} });
    };
    await call("queueWorkflow", {});
    for (const result of results) expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    expect(t.tracker.undoQueue).toHaveLength(7 + 9 + 1);
  });
});
