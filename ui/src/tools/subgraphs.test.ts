// The graph tools on real ComfyUI templates with subgraphs (fixtures/README.md), loaded into
// LiteGraph 0.17.2's LGraph with subgraph node types registered as the frontend does; each test
// twice: with the numeric node ids of frontends up to about 1.48 and with the string ids of later
// ones (a subgraph's boundary "-10"/"-20"). The browser suite runs them in the real frontends.
import { describe, expect, it, vi } from "vitest";
import type { LGraph, LGraphNode } from "../host/comfy";
import { createTestApp, jsonResponse, loadFixture, openSubgraph, type TestSetup } from "../../test/testing";

const FLUX = "subgraph-flux-dev.json";
const FLUX_ID = "e2a55522-bf16-4d9f-a222-5b8788ef2982";
const NESTED = "subgraph-nested-lumina.json";

const ID_KINDS = [
  { kind: "numeric node ids (frontends up to 1.48)", stringIds: false },
  { kind: 'string node ids (frontends from 1.49: "5", "-10")', stringIds: true },
];

describe.each(ID_KINDS)("$kind", ({ stringIds }) => {
  function flux(options: { legacy?: boolean } = {}): TestSetup {
    const t = createTestApp({ ...options, stringIds });
    loadFixture(t, FLUX);
    return t;
  }

  function inner(t: TestSetup): LGraph {
    return (t.graph.getNodeById(56) as unknown as { subgraph: LGraph }).subgraph;
  }

  describe("getWorkflow with subgraphs", () => {
    it("shows a subgraph node as a named block with its slots, never its UUID", async () => {
      const t = flux();
      const result = await t.tools.getWorkflow({});
      expect(result).toMatchObject({ ok: true, graph: "root", links: [[56, "IMAGE", 9, "images"]] });
      const block = (result.nodes as Record<string, unknown>[]).find((n) => n.id === 56);
      expect(block).toMatchObject({
        subgraph: "Text to Image (Flux.1 Dev)",
        nodeCount: 8,
        in: ["text: STRING", "width: INT", "height: INT", "unet_name: COMBO", "clip_name1: COMBO", "clip_name2: COMBO", "vae_name: COMBO"],
        out: ["IMAGE"],
      });
      expect(JSON.stringify(result)).not.toContain(FLUX_ID);
      expect(await t.tools.getWorkflow({ detail: "summary" })).toMatchObject({
        types: { SaveImage: 1, MarkdownNote: 1, 'subgraph "Text to Image (Flux.1 Dev)"': 1 },
      });
    });

    it("reads the subgraph the user opened by default, with path ids and its boundary", async () => {
      const t = flux();
      openSubgraph(t, "56");
      const result = await t.tools.getWorkflow({});
      expect(result).toMatchObject({ ok: true, graph: "56", name: "Text to Image (Flux.1 Dev)", out: ["IMAGE"] });
      expect(result.viewing).toBeUndefined();
      const nodes = result.nodes as { id: unknown; type: string }[];
      expect(nodes.map((n) => n.id)).toEqual(["56:47", "56:48", "56:49", "56:50", "56:51", "56:52", "56:53", "56:54"]);
      expect(nodes.find((n) => n.id === "56:52")).toMatchObject({ type: "KSampler", inputs: { model: ["56:48", "MODEL"] } });
      expect(result.links).toContainEqual(["56:in", "text", "56:51", "text"]);
      expect(result.links).toContainEqual(["56:53", "IMAGE", "56:out", "IMAGE"]);
      // The same level asked for by name from the root says what the user is viewing.
      openSubgraph(t, "56");
      t.canvas.graph = t.graph;
      expect(await t.tools.getWorkflow({ subgraph: "56", detail: "summary" })).toMatchObject({ graph: "56", nodeCount: 8, viewing: "root" });
    });

    it("reads nested subgraphs by path, and nodes at any depth by id", async () => {
      const t = createTestApp({ stringIds });
      loadFixture(t, NESTED);
      const nested = await t.tools.getWorkflow({ subgraph: "48:35", detail: "full" });
      expect(nested).toMatchObject({ graph: "48:35", name: "CLIP Text Encode (Negative Prompt)", in: ["clip: CLIP", "value: STRING"] });
      expect((nested.nodes as { id: unknown }[]).map((n) => n.id)).toEqual(["48:35:40", "48:35:41", "48:35:42", "48:35:43"]);
      const level = await t.tools.getWorkflow({ subgraph: "48" });
      expect((level.nodes as Record<string, unknown>[]).find((n) => n.id === "48:35")).toMatchObject({ subgraph: "CLIP Text Encode (Negative Prompt)", nodeCount: 4 });
      const picked = await t.tools.getWorkflow({ nodeIds: [9, "48:35:43"] });
      expect(picked).toMatchObject({ graph: ["root", "48:35"] });
      expect((picked.nodes as { id: unknown }[]).map((n) => n.id)).toEqual([9, "48:35:43"]);
    });

    it("explains ids and subgraph names that name nothing", async () => {
      const t = flux();
      expect(await t.tools.getWorkflow({ subgraph: "9" })).toEqual({
        ok: false,
        error: 'SaveImage#9 is not a subgraph. Subgraph nodes: 56 ("Text to Image (Flux.1 Dev)").',
      });
      expect(await t.tools.getWorkflow({ subgraph: "77" })).toMatchObject({ ok: false, error: expect.stringContaining('No subgraph node "77". Subgraph nodes: 56') });
      expect(await t.tools.getWorkflow({ nodeIds: ["9:1"] })).toMatchObject({ ok: false, error: expect.stringContaining('SaveImage#9 is not a subgraph, so "9:1" names no node') });
      expect(await t.tools.getWorkflow({ nodeIds: ["56:99"] })).toMatchObject({
        ok: false,
        error: expect.stringContaining('No node has id 56:99; ask for existing ids, or omit nodeIds for the whole graph. Node ids in subgraph "Text to Image (Flux.1 Dev)" (node 56): 56:47, 56:48'),
      });
    });

    it("reports the last run's errors, from the extension manager or (1.27) the app", async () => {
      const modern = flux();
      const errors = { "56:52": { class_type: "KSampler", errors: [{ type: "value_not_in_list", message: "bad sampler" }] } };
      Object.assign(modern.app.extensionManager, { lastNodeErrors: errors, lastExecutionError: null });
      expect(await modern.tools.getWorkflow({ detail: "summary" })).toMatchObject({
        lastRun: { nodeErrors: [{ nodeId: "56:52", classType: "KSampler", errors: [{ type: "value_not_in_list", message: "bad sampler" }] }] },
      });
      const legacy = flux({ legacy: true });
      Object.assign(legacy.app, { lastExecutionError: { node_id: "56:52", node_type: "KSampler", exception_type: "RuntimeError", exception_message: "out of memory" } });
      expect(await legacy.tools.getWorkflow({ detail: "summary" })).toMatchObject({
        lastRun: { executionError: { nodeId: "56:52", nodeType: "KSampler", message: "RuntimeError: out of memory" } },
      });
      expect((await flux().tools.getWorkflow({})).lastRun).toBeUndefined();
    });
  });

  describe("queueWorkflow with subgraphs", () => {
    it("names a failing node inside a subgraph by its execution id, and runs inner widgets' queue hooks", async () => {
      const t = flux();
      const seed = inner(t).getNodeById(52)!.widgets!.find((w) => w.name === "seed")!;
      let hooked = 0;
      Object.assign(seed, { beforeQueued: () => hooked++ });
      t.api.handler = () => {
        setTimeout(() => {
          t.api.emit("execution_start", { prompt_id: "p1" });
          t.api.emit("execution_error", { prompt_id: "p1", node_id: "56:52", node_type: "KSampler", exception_type: "RuntimeError", exception_message: "boom" });
        }, 0);
        return jsonResponse(200, { prompt_id: "p1", number: 1, node_errors: {} });
      };
      expect(await t.tools.queueWorkflow({})).toMatchObject({ ok: false, error: "Execution failed at KSampler#56:52: RuntimeError: boom", nodeId: "56:52" });
      expect(hooked).toBe(1);
    });
  });

  describe("editing inside subgraphs", () => {
    it("adds into the subgraph the user is viewing, as one undo step, and says so", async () => {
      const t = flux();
      openSubgraph(t, "56");
      const result = await t.tools.addNode({ nodeType: "PreviewImage", nearNodeId: "56:53" });
      expect(result).toMatchObject({ ok: true, nodeId: "56:57", graph: "56" });
      expect(result.notes).toBeUndefined();
      expect(t.graph.nodes.length).toBe(3);
      expect(inner(t).nodes.map((n) => n.type)).toContain("PreviewImage");
      expect(t.tracker.calls).toEqual(["beforeChange", "afterChange"]);
      expect(t.tracker.undoQueue.length).toBe(1);
      expect(t.toasts).toEqual([]);
      t.tracker.undo();
      expect(t.graph.subgraphs.get(FLUX_ID)!.nodes.map((n) => n.type)).not.toContain("PreviewImage");
    });

    it("adds to a graph the user is not viewing only when named, and tells the model and the user", async () => {
      const t = flux();
      openSubgraph(t, "56");
      const result = await t.tools.addNode({ nodeType: "EmptyImage", subgraph: "root" });
      expect(result).toMatchObject({
        ok: true,
        nodeId: "root:57", // a bare 57 would name a node of the subgraph the user views
        graph: "root",
        notes: ['EmptyImage was added in the root graph; the user is viewing subgraph "Text to Image (Flux.1 Dev)" (node 56), so they do not see it'],
      });
      expect(t.toasts).toEqual([{ kind: "info", summary: "Assistant: EmptyImage was added in the root graph", detail: 'You are viewing subgraph "Text to Image (Flux.1 Dev)" (node 56).' }]);
      expect(await t.tools.addNode({ nodeType: "EmptyImage", subgraph: "56", nearNodeId: "root:9" })).toMatchObject({
        ok: false,
        error: expect.stringContaining('nearNodeId root:9 is in the root graph, not in subgraph "Text to Image (Flux.1 Dev)" (node 56); nothing was added'),
      });
      t.canvas.graph = t.graph;
      expect(await t.tools.addNode({ nodeType: "EmptyImage" })).toMatchObject({ ok: true, nodeId: 58, graph: "root" });
    });

    it("sets widgets, links and removes nodes inside a subgraph by path id", async () => {
      const t = flux();
      openSubgraph(t, "56");
      expect(await t.tools.setWidgetValues({ nodeId: "56:52", values: { steps: 25 } })).toEqual({ ok: true, nodeId: "56:52", graph: "56", values: { steps: 25 } });
      expect(inner(t).getNodeById(52)!.widgets!.find((w) => w.name === "steps")!.value).toBe(25);
      expect(await t.tools.connectNodes({ fromNodeId: "56:in", fromOutput: "width", toNodeId: "56:50", toInput: "height" })).toMatchObject({
        ok: true,
        link: ["56:in", "width", "56:50", "height"],
        graph: "56",
        replaced: ["56:in", "height"],
      });
      expect(await t.tools.connectNodes({ fromNodeId: "56:53", fromOutput: 0, toNodeId: "56:out", toInput: "IMAGE" })).toMatchObject({ ok: true, unchanged: true });
      expect(await t.tools.removeNodes({ nodeIds: ["56:54"] })).toEqual({ ok: true, removed: ["56:54"], linksRemoved: 2, graph: "56" });
      expect(inner(t).getNodeById(54)).toBeFalsy();
      expect(t.graph.nodes.length).toBe(3);
    });

    it("reads an id without a path in the graph the user is viewing, as every tool does; a root node there is root:N", async () => {
      const t = flux();
      openSubgraph(t, "56");
      // One rule: what getWorkflow {} reads and where addNode {} adds is where 52 is looked up.
      const viewed = await t.tools.getWorkflow({});
      expect(viewed).toMatchObject({ graph: "56" });
      expect((viewed.nodes as { id: unknown }[]).map((n) => n.id)).toContain("56:52");
      expect(await t.tools.setWidgetValues({ nodeId: 52, values: { steps: 25 } })).toEqual({ ok: true, nodeId: "56:52", graph: "56", values: { steps: 25 } });
      expect(await t.tools.getWorkflow({ nodeIds: [52], detail: "summary" })).toMatchObject({ graph: "56", nodeCount: 1, types: { KSampler: 1 } });
      expect(await t.tools.connectNodes({ fromNodeId: 48, fromOutput: "MODEL", toNodeId: 52, toInput: "model" })).toMatchObject({ ok: true, unchanged: true, link: ["56:48", "MODEL", "56:52", "model"] });
      expect(await t.tools.addNode({ nodeType: "PreviewImage", nearNodeId: 53 })).toMatchObject({ ok: true, nodeId: "56:57", graph: "56" });
      expect(await t.tools.removeNodes({ nodeIds: ["56:57"] })).toMatchObject({ ok: true, removed: ["56:57"] });
      // The root's nodes: "root:9"; a bare 9 is looked for in the subgraph, and the error says where.
      expect(await t.tools.setWidgetValues({ nodeId: 9, values: { filename_prefix: "x" } })).toEqual({
        ok: false,
        error:
          'No node has id 9; nothing was changed. An id without a path names a node of the graph the user is viewing, subgraph "Text to Image (Flux.1 Dev)" (node 56). ' +
          'The root graph\'s node 9 (SaveImage) is "root:9". Node ids in subgraph "Text to Image (Flux.1 Dev)" (node 56): 56:47, 56:48, 56:49, 56:50, 56:51, 56:52, 56:53, 56:54.',
      });
      expect(await t.tools.setWidgetValues({ nodeId: "root:9", values: { filename_prefix: "x" } })).toMatchObject({ ok: true, nodeId: "root:9", graph: "root" });
      const root = await t.tools.getWorkflow({ subgraph: "root" });
      expect((root.nodes as { id: unknown }[]).map((n) => n.id)).toEqual(["root:9", "root:40", "root:56"]);
      expect(root.links).toEqual([["root:56", "IMAGE", "root:9", "images"]]);
      // Back at the root, ids without a path name root nodes again.
      t.canvas.graph = t.graph;
      expect(await t.tools.setWidgetValues({ nodeId: 9, values: { filename_prefix: "y" } })).toMatchObject({ ok: true, nodeId: 9, graph: "root" });
      expect(await t.tools.setWidgetValues({ nodeId: "root:9", values: { filename_prefix: "z" } })).toMatchObject({ ok: true, nodeId: 9 });
      expect(await t.tools.setWidgetValues({ nodeId: 52, values: { steps: 1 } })).toMatchObject({ ok: false, error: expect.stringContaining("No node has id 52") });
    });

    it("names the nodes of a run's errors as the tools do while the user views a subgraph", async () => {
      const t = flux();
      openSubgraph(t, "56");
      const errors = {
        "9": { class_type: "SaveImage", errors: [{ type: "bad", message: "bad prefix" }] },
        "56:52": { class_type: "KSampler", errors: [{ type: "bad", message: "bad sampler" }] },
      };
      Object.assign(t.app.extensionManager, { lastNodeErrors: errors, lastExecutionError: { node_id: "9", node_type: "SaveImage", exception_type: "OSError", exception_message: "disk full" } });
      expect((await t.tools.getWorkflow({ detail: "summary" })).lastRun).toEqual({
        nodeErrors: [
          { nodeId: "root:9", classType: "SaveImage", errors: [{ type: "bad", message: "bad prefix" }] },
          { nodeId: "56:52", classType: "KSampler", errors: [{ type: "bad", message: "bad sampler" }] },
        ],
        executionError: { nodeId: "root:9", nodeType: "SaveImage", message: "OSError: disk full" },
      });
    });

    it("says when other subgraph nodes share the edited definition", async () => {
      const t = flux();
      const copy = t.lg.createNode(FLUX_ID)!;
      t.graph.add(copy);
      const result = await t.tools.setWidgetValues({ nodeId: "56:52", values: { steps: 12 } });
      expect(result.notes).toContain(`subgraph nodes ${copy.id} use the same subgraph, so they changed too`);
    });
  });

  describe("connectNodes across a subgraph boundary", () => {
    function add(t: TestSetup, type: string): LGraphNode {
      const node = t.lg.createNode(type)!;
      t.graph.add(node);
      t.tracker.reset();
      return node;
    }

    it("goes into a subgraph through a new subgraph input, then reuses it", async () => {
      const t = flux();
      const latent = add(t, "EmptyLatentImage");
      const result = await t.tools.connectNodes({ fromNodeId: latent.id, fromOutput: "LATENT", toNodeId: "56:52", toInput: "latent_image" });
      expect(result).toMatchObject({ ok: true, link: [latent.id, "LATENT", "56:52", "latent_image"], via: "Text to Image (Flux.1 Dev)#56 input 'latent_image' (new)" });
      expect(t.tracker.calls).toEqual(["beforeChange", "afterChange"]);
      const root = await t.tools.getWorkflow({});
      expect(root.links).toContainEqual([latent.id, "LATENT", 56, "latent_image"]);
      expect((await t.tools.getWorkflow({ subgraph: "56" })).links).toContainEqual(["56:in", "latent_image", "56:52", "latent_image"]);
      const other = add(t, "EmptyLatentImage");
      expect(await t.tools.connectNodes({ fromNodeId: other.id, fromOutput: 0, toNodeId: "56:52", toInput: "latent_image" })).toMatchObject({
        ok: true,
        via: "Text to Image (Flux.1 Dev)#56 input 'latent_image' (existing)",
      });
      expect((await t.tools.getWorkflow({})).links).toContainEqual([other.id, "LATENT", 56, "latent_image"]);
    });

    it("replaces an inner node's link with a new subgraph input cleanly: the old origin lets go, LiteGraph logs nothing", async () => {
      const t = flux();
      const latent = add(t, "EmptyLatentImage");
      const logged: unknown[][] = [];
      const spies = (["debug", "warn", "error", "log"] as const).map((kind) => vi.spyOn(console, kind).mockImplementation((...args) => void logged.push([kind, ...args])));
      try {
        // 56:52's latent_image is fed by 56:50 (EmptySD3LatentImage, link 51)
        const result = await t.tools.connectNodes({ fromNodeId: latent.id, fromOutput: "LATENT", toNodeId: "56:52", toInput: "latent_image" });
        expect(result).toMatchObject({ ok: true, replaced: ["56:50", "LATENT"], via: "Text to Image (Flux.1 Dev)#56 input 'latent_image' (new)" });
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
      expect(logged).toEqual([]);
      expect(inner(t).getNodeById(50)!.outputs[0]!.links ?? []).toEqual([]); // (no stale link 51 left in its output)
      expect((await t.tools.getWorkflow({ subgraph: "56" })).links).toContainEqual(["56:in", "latent_image", "56:52", "latent_image"]);
    });

    it("reuses the subgraph input that already feeds the inner input (a link of the loaded workflow)", async () => {
      const t = flux();
      const text = add(t, "PrimitiveString");
      const result = await t.tools.connectNodes({ fromNodeId: text.id, fromOutput: 0, toNodeId: "56:51", toInput: "text" });
      expect(result).toMatchObject({ ok: true, via: "Text to Image (Flux.1 Dev)#56 input 'text' (existing)" });
      expect(t.graph.getNodeById(56)!.inputs.length).toBe(7);
      expect((await t.tools.getWorkflow({})).links).toContainEqual([text.id, "STRING", 56, "text"]);
    });

    it("comes out of a subgraph through a new subgraph output", async () => {
      const t = flux();
      const decode = add(t, "VAEDecode");
      const result = await t.tools.connectNodes({ fromNodeId: "56:47", fromOutput: "VAE", toNodeId: decode.id, toInput: "vae" });
      expect(result).toMatchObject({ ok: true, via: "Text to Image (Flux.1 Dev)#56 output 'VAE' (new)" });
      expect((await t.tools.getWorkflow({})).links).toContainEqual([56, "VAE", decode.id, "vae"]);
      expect((await t.tools.getWorkflow({ subgraph: "56" })).links).toContainEqual(["56:47", "VAE", "56:out", "VAE"]);
    });

    it("refuses a link that would skip a level, and changes nothing", async () => {
      const t = createTestApp({ stringIds });
      loadFixture(t, NESTED);
      const loader = add(t, "CLIPLoader");
      const result = await t.tools.connectNodes({ fromNodeId: loader.id, fromOutput: 0, toNodeId: "48:35:43", toInput: "clip" });
      expect(result).toMatchObject({ ok: false, error: expect.stringContaining("a link crosses one subgraph boundary at a time") });
      expect(t.tracker.calls).toEqual([]);
    });
  });

  describe("the frontend API of today, and 1.27", () => {
    async function everyEdit(t: TestSetup) {
      openSubgraph(t, "56");
      await t.tools.getWorkflow({ detail: "full" });
      await t.tools.addNode({ nodeType: "EmptyImage", subgraph: "root" });
      await t.tools.connectNodes({ fromNodeId: "root:57", fromOutput: 0, toNodeId: "root:9", toInput: 0 });
      await t.tools.setWidgetValues({ nodeId: "56:52", values: { steps: 10 } });
      await t.tools.removeNodes({ nodeIds: ["56:54"] });
      await t.tools.loadWorkflow({ workflow: { "1": { class_type: "EmptyImage", inputs: {} } } });
    }

    it("uses no deprecated API where the frontend offers the current one", async () => {
      const t = flux();
      t.dialog.answers = [true];
      await everyEdit(t);
      expect(t.deprecated).toEqual([]);
      expect(t.toasts.map((x) => x.kind)).toEqual(["info", "info"]);
      expect(t.tracker.calls).not.toContain("checkState");
    });

    it("falls back to app.graph, checkState and toast.add on 1.27", async () => {
      const t = flux({ legacy: true });
      expect(t.app.rootGraph).toBeUndefined();
      t.dialog.answers = [true];
      await everyEdit(t);
      expect(t.toasts.map((x) => x.kind)).toEqual(["info", "info"]); // through toast.add
      expect(t.graph.nodes.map((n) => n.type)).toEqual(["EmptyImage"]);
      t.tracker.reset();
      t.dialog.answers = [true];
      expect(await t.tools.loadWorkflow({ workflow: { nodes: [], links: [] } })).toMatchObject({ ok: true, nodeCount: 0 });
      expect(t.tracker.calls).toEqual(["checkState"]);
    });
  });
});
