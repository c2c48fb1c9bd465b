import { LGraphNode } from "@comfyorg/litegraph";
import { describe, expect, it } from "vitest";
import { buildTxt2Img, createTestApp, link, place } from "../../test/testing";

const TXT2IMG_LINKS = [
  [1, "CLIP", 2, "clip"],
  [1, "CLIP", 3, "clip"],
  [1, "MODEL", 5, "model"],
  [2, "CONDITIONING", 5, "positive"],
  [3, "CONDITIONING", 5, "negative"],
  [4, "LATENT", 5, "latent_image"],
  [5, "LATENT", 6, "samples"],
  [1, "VAE", 6, "vae"],
  [6, "IMAGE", 7, "images"],
];

describe("getWorkflow", () => {
  it("compact (the default): ids, types, linked inputs, non-default widgets, links", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.getWorkflow({})).toEqual({
      ok: true, graph: "root",
      detail: "compact",
      nodes: [
        { id: 1, type: "CheckpointLoaderSimple", widgets: { ckpt_name: "" } },
        { id: 2, type: "CLIPTextEncode", inputs: { clip: [1, "CLIP"] }, widgets: { text: "a photo of a cat" } },
        { id: 3, type: "CLIPTextEncode", inputs: { clip: [1, "CLIP"] }, widgets: { text: "blurry" } },
        { id: 4, type: "EmptyLatentImage" },
        {
          id: 5,
          type: "KSampler",
          inputs: { model: [1, "MODEL"], positive: [2, "CONDITIONING"], negative: [3, "CONDITIONING"], latent_image: [4, "LATENT"] },
          widgets: { seed: 42, control_after_generate: "fixed" },
        },
        { id: 6, type: "VAEDecode", inputs: { samples: [5, "LATENT"], vae: [1, "VAE"] } },
        { id: 7, type: "SaveImage", inputs: { images: [6, "IMAGE"] } },
      ],
      links: TXT2IMG_LINKS,
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("compact shows renamed titles, bypassed or muted nodes, unlinked required inputs and shortens long text", async () => {
    const t = createTestApp();
    const sampler = place(t, "KSampler", [0, 0], { steps: 30, cfg: 8.0000000001 });
    sampler.title = "Main sampler";
    sampler.mode = 4;
    const encode = place(t, "CLIPTextEncode", [0, 400], { text: "x".repeat(450) });
    encode.mode = 2;
    const result = await t.tools.getWorkflow({ detail: "compact" });
    expect(result).toEqual({
      ok: true, graph: "root",
      detail: "compact",
      nodes: [
        {
          id: 1,
          type: "KSampler",
          title: "Main sampler",
          mode: "bypassed",
          unlinked: ["model", "positive", "negative", "latent_image"],
          widgets: { steps: 30 },
        },
        {
          id: 2,
          type: "CLIPTextEncode",
          mode: "muted",
          unlinked: ["clip"],
          widgets: { text: `${"x".repeat(400)}… [50 more characters; detail "full" shows all]` },
        },
      ],
      links: [],
    });
  });

  it("summary: node count, count per type, link count", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.getWorkflow({ detail: "summary" })).toEqual({
      ok: true, graph: "root",
      detail: "summary",
      nodeCount: 7,
      linkCount: 9,
      types: { CheckpointLoaderSimple: 1, CLIPTextEncode: 2, EmptyLatentImage: 1, KSampler: 1, VAEDecode: 1, SaveImage: 1 },
    });
  });

  it("full, for chosen nodes: every widget, position, size, slots with links in and out", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.getWorkflow({ detail: "full", nodeIds: [6, 4, 6] })).toEqual({
      ok: true, graph: "root",
      detail: "full",
      nodes: [
        {
          id: 6,
          type: "VAEDecode",
          title: "VAE Decode",
          pos: [1209, 188],
          size: [Math.round(t.graph.getNodeById(6)!.size[0]), Math.round(t.graph.getNodeById(6)!.size[1])],
          inputs: [
            { name: "samples", type: "LATENT", link: [5, "LATENT"] },
            { name: "vae", type: "VAE", link: [1, "VAE"] },
          ],
          outputs: [{ name: "IMAGE", type: "IMAGE", links: [[7, "images"]] }],
          widgets: {},
        },
        {
          id: 4,
          type: "EmptyLatentImage",
          title: "Empty Latent Image",
          pos: [473, 609],
          size: [Math.round(t.graph.getNodeById(4)!.size[0]), Math.round(t.graph.getNodeById(4)!.size[1])],
          inputs: [],
          outputs: [{ name: "LATENT", type: "LATENT", links: [[5, "latent_image"]] }],
          widgets: { width: 512, height: 512, batch_size: 1 },
        },
      ],
      links: [
        [5, "LATENT", 6, "samples"],
        [1, "VAE", 6, "vae"],
        [4, "LATENT", 5, "latent_image"],
        [6, "IMAGE", 7, "images"],
      ],
    });
  });

  it("reads ComfyUI's widget sockets: linked ones as inputs, unlinked ones only as widgets", async () => {
    const t = createTestApp();
    const primitive = place(t, "PrimitiveInt", [0, 0], { value: 7 });
    const sampler = place(t, "KSampler", [300, 0]);
    sampler.addInput("seed", "INT", { widget: { name: "seed" } });
    sampler.addInput("steps", "INT", { widget: { name: "steps" } });
    link(primitive, 0, sampler, 4);
    const compact = await t.tools.getWorkflow({ nodeIds: [2] });
    expect(compact).toMatchObject({ nodes: [{ id: 2, inputs: { seed: [1, "INT"] }, unlinked: ["model", "positive", "negative", "latent_image"] }] });
    const full = (await t.tools.getWorkflow({ detail: "full", nodeIds: [2] })) as unknown as { nodes: { inputs: { name: string }[] }[] };
    expect(full.nodes[0]!.inputs.map((i) => i.name)).toEqual(["model", "positive", "negative", "latent_image", "seed"]);
  });

  it("shows every widget of a node without a definition", async () => {
    const t = createTestApp();
    const note = new LGraphNode("Note");
    note.type = "Note";
    note.addWidget("text", "text", "remember", () => {});
    t.graph.add(note);
    expect(await t.tools.getWorkflow({})).toEqual({
      ok: true, graph: "root",
      detail: "compact",
      nodes: [{ id: 1, type: "Note", widgets: { text: "remember" } }],
      links: [],
    });
  });

  it("an empty graph", async () => {
    const t = createTestApp();
    expect(await t.tools.getWorkflow({})).toEqual({ ok: true, graph: "root", detail: "compact", nodes: [], links: [] });
    expect(await t.tools.getWorkflow({ detail: "summary" })).toEqual({ ok: true, graph: "root", detail: "summary", nodeCount: 0, linkCount: 0, types: {} });
    expect(await t.tools.getWorkflow({ nodeIds: [1] })).toEqual({
      ok: false,
      error: "No node has id 1; ask for existing ids, or omit nodeIds for the whole graph. The graph is empty.",
    });
  });

  it("fails on unknown node ids, naming them and the ids that exist", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.getWorkflow({ nodeIds: [5, 12, 13] })).toEqual({
      ok: false,
      error: "No nodes have ids 12, 13; ask for existing ids, or omit nodeIds for the whole graph. Node ids in the graph: 1, 2, 3, 4, 5, 6, 7.",
    });
  });

  it("fails on invalid arguments", async () => {
    const t = createTestApp();
    expect(await t.tools.getWorkflow({ detail: "all" })).toEqual({
      ok: false,
      error: `Invalid arguments for getWorkflow: 'detail' must be one of "summary", "compact", "full", got "all".`,
    });
    expect(await t.tools.getWorkflow({ nodeIds: "5" })).toEqual({
      ok: false,
      error: `Invalid arguments for getWorkflow: 'nodeIds' must be array, got string "5".`,
    });
  });
});
