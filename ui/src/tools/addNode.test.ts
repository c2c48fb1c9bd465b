import { describe, expect, it } from "vitest";
import { graphTools } from "./index";
import { nodeBox, overlaps } from "./layout";
import { buildTxt2Img, createTestApp, type TestSetup } from "../../test/testing";

const EDIT = ["beforeChange", "afterChange"];

function assertNoOverlap(t: TestSetup): void {
  const boxes = t.graph.nodes.map((n) => ({ id: n.id, box: nodeBox(n, 30) }));
  for (const a of boxes) for (const b of boxes) {
    if (a.id !== b.id) expect(overlaps(a.box, b.box), `nodes ${a.id} and ${b.id} overlap`).toBe(false);
  }
}

describe("addNode", () => {
  it("adds a node centred in the visible canvas of an empty graph, as one undo step", async () => {
    const t = createTestApp();
    const result = await t.tools.addNode({ nodeType: "EmptyLatentImage" });
    const node = t.graph.getNodeById(1)!;
    const [w, h] = [node.size[0], node.size[1]];
    expect(result).toEqual({
      ok: true, graph: "root",
      nodeId: 1,
      type: "EmptyLatentImage",
      pos: [Math.round(800 - w / 2), Math.round(450 - h / 2)],
      inputs: [],
      outputs: ["LATENT"],
      widgets: { width: 512, height: 512, batch_size: 1 },
    });
    expect(t.tracker.calls).toEqual(EDIT);
    expect(t.canvas.dirty).toBeGreaterThan(0);
    t.tracker.undo();
    expect(t.graph.nodes).toHaveLength(0);
  });

  it("applies title and widgets (rounded to step, combo matched) and reports what it adjusted", async () => {
    const t = createTestApp();
    const result = await t.tools.addNode({
      nodeType: "KSampler",
      title: "Refiner",
      widgets: { steps: "30", cfg: 6.55, denoise: 0.333, sampler_name: "DPMPP_2M", seed: 12 },
      position: { x: 100, y: 200 },
    });
    expect(result).toEqual({
      ok: true, graph: "root",
      nodeId: 1,
      type: "KSampler",
      title: "Refiner",
      pos: [100, 200],
      inputs: ["model: MODEL", "positive: CONDITIONING", "negative: CONDITIONING", "latent_image: LATENT"],
      outputs: ["LATENT"],
      widgets: {
        seed: 12,
        control_after_generate: "randomize",
        steps: 30,
        cfg: 6.55,
        sampler_name: "dpmpp_2m",
        scheduler: "simple",
        denoise: 0.33,
      },
      notes: ["'denoise': 0.333 rounded to 0.33", `'sampler_name': used "dpmpp_2m" for "DPMPP_2M"`],
    });
    expect(t.graph.getNodeById(1)!.title).toBe("Refiner");
  });

  it("places a node to the right of nearNodeId, in free space", async () => {
    const t = createTestApp();
    const { sampler, decode } = buildTxt2Img(t);
    const result = (await t.tools.addNode({ nodeType: "LatentUpscale", nearNodeId: 5 })) as unknown as { pos: [number, number] };
    expect(result.pos[0]).toBe(Math.round(sampler.pos[0] + sampler.size[0] + 40));
    // The VAE Decode already sits right of the sampler: the new node goes below it.
    expect(result.pos[1]).toBeGreaterThan(decode.pos[1] + decode.size[1]);
    assertNoOverlap(t);
  });

  it("never puts a node on top of another, however many are added", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    for (let i = 0; i < 12; i++) {
      const near = i % 2 ? 5 : undefined;
      expect(await t.tools.addNode({ nodeType: "CLIPTextEncode", ...(near ? { nearNodeId: near } : {}) })).toMatchObject({ ok: true });
    }
    expect(t.graph.nodes).toHaveLength(19);
    assertNoOverlap(t);
    expect(t.tracker.calls).toEqual(Array(12).fill(EDIT).flat());
  });

  it("without nearNodeId, goes next to the most recently added node", async () => {
    const t = createTestApp();
    const { save } = buildTxt2Img(t);
    const result = (await t.tools.addNode({ nodeType: "PreviewImage" })) as unknown as { pos: [number, number] };
    expect(result.pos).toEqual([Math.round(save.pos[0] + save.size[0] + 40), Math.round(save.pos[1])]);
  });

  it("keeps an exact position even on top of a node, and says so", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const result = await t.tools.addNode({ nodeType: "PreviewImage", position: { x: 870, y: 200 } });
    expect(result).toMatchObject({ ok: true, graph: "root", nodeId: 8, pos: [870, 200], notes: ["at the requested position it overlaps node(s) 5"] });
  });

  it("fails on an unknown type with the closest registered names; nothing is added", async () => {
    const t = createTestApp();
    expect(await t.tools.addNode({ nodeType: "Load Checkpoint" })).toEqual({
      ok: false,
      error:
        'Unknown node type "Load Checkpoint". Closest registered types: CheckpointLoaderSimple ("Load Checkpoint"), ' +
        'CheckpointLoader ("Load Checkpoint With Config (DEPRECATED)"). ' +
        "Use the exact class name; search the installed node types if unsure.",
    });
    expect(await t.tools.addNode({ nodeType: "Upscale Image" })).toEqual({
      ok: false,
      error:
        'Unknown node type "Upscale Image". Closest registered types: ImageScale ("Upscale Image"), ImageScaleBy ("Upscale Image By"), ' +
        'ImageUpscaleWithModel ("Upscale Image (using Model)"), RecraftCrispUpscaleNode ("Recraft Crisp Upscale Image"), ' +
        'RecraftCreativeUpscaleNode ("Recraft Creative Upscale Image"). Use the exact class name; search the installed node types if unsure.',
    });
    const far = await t.tools.addNode({ nodeType: "qqqqqqqqqqqqqqqqqqqqqq" });
    expect(far).toEqual({
      ok: false,
      error: 'Unknown node type "qqqqqqqqqqqqqqqqqqqqqq". No registered type is close to it. Use the exact class name; search the installed node types if unsure.',
    });
    expect(t.graph.nodes).toHaveLength(0);
    expect(t.tracker.calls).toEqual([]);
  });

  it("does not add the node when a widget value is invalid", async () => {
    const t = createTestApp();
    expect(await t.tools.addNode({ nodeType: "EmptyLatentImage", widgets: { width: 8, batch: 2 } })).toEqual({
      ok: false,
      error:
        "EmptyLatentImage was not added: 'width' must be between 16 and 16384, got 8. EmptyLatentImage has no widget 'batch' " +
        "(did you mean batch_size?). Its widgets: width, height, batch_size. Fix the widget values and call addNode again.",
    });
    expect(t.graph.nodes).toHaveLength(0);
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on an unknown nearNodeId", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.addNode({ nodeType: "VAEDecode", nearNodeId: 99 })).toEqual({
      ok: false,
      error: "No node has id 99; nearNodeId must be an existing node; nothing was added. Node ids in the graph: 1, 2, 3, 4, 5, 6, 7.",
    });
    expect(t.graph.nodes).toHaveLength(7);
  });

  it("fails when LiteGraph cannot create the node", async () => {
    const t = createTestApp();
    const tools = graphTools(t.app, { registered_node_types: t.lg.registered_node_types, createNode: () => null });
    expect(await tools.addNode({ nodeType: "VAEDecode" })).toEqual({
      ok: false,
      error: "LiteGraph could not create a VAEDecode node (its constructor failed). Nothing was added.",
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on invalid arguments", async () => {
    const t = createTestApp();
    expect(await t.tools.addNode({ type: "KSampler" })).toEqual({
      ok: false,
      error: "Invalid arguments for addNode: 'nodeType' is required; unknown argument 'type' (allowed: nodeType, title, widgets, nearNodeId, position, subgraph).",
    });
    expect(await t.tools.addNode({ nodeType: "KSampler", position: { x: 1 } })).toEqual({
      ok: false,
      error: "Invalid arguments for addNode: 'position.y' is required.",
    });
  });
});
