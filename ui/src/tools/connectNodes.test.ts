import { describe, expect, it } from "vitest";
import { buildTxt2Img, createTestApp, link, place, type TestSetup } from "../../test/testing";

const EDIT = ["beforeChange", "afterChange"];

/** A loader, a sampler and a decode, unlinked. */
function parts(t: TestSetup) {
  const ckpt = place(t, "CheckpointLoaderSimple", [0, 0]);
  const sampler = place(t, "KSampler", [400, 0]);
  const decode = place(t, "VAEDecode", [800, 0]);
  t.tracker.reset();
  return { ckpt, sampler, decode };
}

describe("connectNodes", () => {
  it("links by slot names, ignoring case, as one undo step", async () => {
    const t = createTestApp();
    const { sampler } = parts(t);
    const result = await t.tools.connectNodes({ fromNodeId: 1, fromOutput: "model", toNodeId: 2, toInput: "MODEL" });
    expect(result).toEqual({ ok: true, graph: "root", link: [1, "MODEL", 2, "model"], linkId: 1 });
    expect(sampler.inputs[0]!.link).toBe(1);
    expect(t.tracker.calls).toEqual(EDIT);
    t.tracker.undo();
    expect(t.graph.getNodeById(2)!.inputs[0]!.link).toBeNull();
  });

  it("links by index, also given as a digit string", async () => {
    const t = createTestApp();
    parts(t);
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 2, toNodeId: 3, toInput: "1" })).toEqual({
      ok: true, graph: "root",
      link: [1, "VAE", 3, "vae"],
      linkId: 1,
    });
    expect(await t.tools.connectNodes({ fromNodeId: 2, fromOutput: "0", toNodeId: 3, toInput: 0 })).toEqual({
      ok: true, graph: "root",
      link: [2, "LATENT", 3, "samples"],
      linkId: 2,
    });
  });

  it("takes a type name for the one slot of that type", async () => {
    const t = createTestApp();
    parts(t);
    expect(await t.tools.connectNodes({ fromNodeId: 2, fromOutput: "latent", toNodeId: 3, toInput: "LATENT" })).toEqual({
      ok: true, graph: "root",
      link: [2, "LATENT", 3, "samples"],
      linkId: 1,
    });
  });

  it("replaces the link already in the input", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const other = place(t, "EmptySD3LatentImage", [0, 900]);
    t.tracker.reset();
    expect(await t.tools.connectNodes({ fromNodeId: 8, fromOutput: 0, toNodeId: 5, toInput: "latent_image" })).toEqual({
      ok: true, graph: "root",
      link: [8, "LATENT", 5, "latent_image"],
      linkId: 10,
      replaced: [4, "LATENT"],
    });
    expect(t.graph.getNodeById(4)!.outputs[0]!.links).toEqual([]);
    expect(other.outputs[0]!.links).toEqual([10]);
    expect(t.graph.links.size).toBe(9);
    expect(t.tracker.calls).toEqual(EDIT);
  });

  it("reports an existing identical link as unchanged, without an edit", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: "MODEL", toNodeId: 5, toInput: "model" })).toEqual({
      ok: true, graph: "root",
      link: [1, "MODEL", 5, "model"],
      linkId: 1,
      unchanged: true,
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("links into ComfyUI's widget sockets, wildcard inputs and multi-type inputs", async () => {
    const t = createTestApp();
    const primitive = place(t, "PrimitiveInt", [0, 0]);
    const sampler = place(t, "KSampler", [300, 0]);
    sampler.addInput("seed", "INT", { widget: { name: "seed" } });
    place(t, "PreviewAny", [700, 0]);
    place(t, "TripoTextToModelNode", [0, 400]);
    place(t, "TripoConversionNode", [400, 400]);
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 0, toNodeId: 2, toInput: "seed" })).toMatchObject({
      ok: true, graph: "root",
      link: [1, "INT", 2, "seed"],
    });
    expect(primitive.outputs[0]!.links).toHaveLength(1);
    expect(await t.tools.connectNodes({ fromNodeId: 2, fromOutput: "LATENT", toNodeId: 3, toInput: "source" })).toMatchObject({
      ok: true, graph: "root",
      link: [2, "LATENT", 3, "source"],
    });
    expect(await t.tools.connectNodes({ fromNodeId: 4, fromOutput: "model task_id", toNodeId: 5, toInput: 0 })).toMatchObject({
      ok: true, graph: "root",
      link: [4, "model task_id", 5, "original_model_task_id"],
    });
  });

  it("fails on a type mismatch, listing what would fit", async () => {
    const t = createTestApp();
    parts(t);
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: "CLIP", toNodeId: 2, toInput: "model" })).toEqual({
      ok: false,
      error:
        "Type mismatch: KSampler#2 input 'model' takes MODEL, but CheckpointLoaderSimple#1 output 'CLIP' (1) is CLIP. " +
        "CheckpointLoaderSimple#1 outputs MODEL at 0, CLIP at 1, VAE at 2; compatible with 'model': MODEL at 0. " +
        "Inputs of KSampler#2 that take CLIP: none.",
    });
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 2, toNodeId: 3, toInput: "samples" })).toEqual({
      ok: false,
      error:
        "Type mismatch: VAEDecode#3 input 'samples' takes LATENT, but CheckpointLoaderSimple#1 output 'VAE' (2) is VAE. " +
        "CheckpointLoaderSimple#1 outputs MODEL at 0, CLIP at 1, VAE at 2; compatible with 'samples': none. " +
        "Inputs of VAEDecode#3 that take VAE: vae (VAE) at 1.",
    });
    expect(t.graph.links.size).toBe(0);
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on unknown slots, listing the node's slots", async () => {
    const t = createTestApp();
    parts(t);
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: "LATENT", toNodeId: 2, toInput: "model" })).toEqual({
      ok: false,
      error: 'CheckpointLoaderSimple#1 has no output "LATENT". Its outputs: MODEL at 0, CLIP at 1, VAE at 2.',
    });
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 3, toNodeId: 2, toInput: "model" })).toEqual({
      ok: false,
      error: "CheckpointLoaderSimple#1 has no output 3. Its outputs: MODEL at 0, CLIP at 1, VAE at 2.",
    });
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 0, toNodeId: 2, toInput: "image" })).toEqual({
      ok: false,
      error:
        'KSampler#2 has no input "image". Its inputs: model (MODEL) at 0, positive (CONDITIONING) at 1, ' +
        "negative (CONDITIONING) at 2, latent_image (LATENT) at 3.",
    });
    expect(await t.tools.connectNodes({ fromNodeId: 2, fromOutput: 0, toNodeId: 1, toInput: 0 })).toEqual({
      ok: false,
      error: "CheckpointLoaderSimple#1 has no input 0. CheckpointLoaderSimple#1 has no inputs.",
    });
    const save = place(t, "SaveImage", [1200, 0]);
    expect(await t.tools.connectNodes({ fromNodeId: save.id as number, fromOutput: 0, toNodeId: 3, toInput: 0 })).toEqual({
      ok: false,
      error: "SaveImage#4 has no outputs.",
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on a widget name: widgets take values, not links", async () => {
    const t = createTestApp();
    parts(t);
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 0, toNodeId: 2, toInput: "seed" })).toEqual({
      ok: false,
      error:
        "'seed' is a widget of KSampler#2, not an input: it cannot take a link here. Set its value with setWidgetValues instead. " +
        "Its inputs: model (MODEL) at 0, positive (CONDITIONING) at 1, negative (CONDITIONING) at 2, latent_image (LATENT) at 3.",
    });
  });

  it("fails on unknown nodes, self links and cycles", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.connectNodes({ fromNodeId: 10, fromOutput: 0, toNodeId: 11, toInput: 0 })).toEqual({
      ok: false,
      error: "No nodes have ids 10, 11; nothing was linked. Node ids in the graph: 1, 2, 3, 4, 5, 6, 7.",
    });
    expect(await t.tools.connectNodes({ fromNodeId: 6, fromOutput: 0, toNodeId: 6, toInput: 0 })).toEqual({
      ok: false,
      error: "A node can't be linked to itself (VAEDecode#6).",
    });
    const scale = place(t, "ImageScale", [1500, 600]);
    link(t.graph.getNodeById(6)!, 0, scale, 0);
    const encode = place(t, "VAEEncode", [1800, 600]);
    link(scale, 0, encode, 0);
    expect(await t.tools.connectNodes({ fromNodeId: encode.id as number, fromOutput: 0, toNodeId: 5, toInput: "latent_image" })).toEqual({
      ok: false,
      error: "Linking VAEEncode#9 into KSampler#5 would make a cycle: KSampler#5 already feeds VAEEncode#9.",
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails when the target node refuses the link, changing nothing", async () => {
    const t = createTestApp();
    const { sampler } = parts(t);
    sampler.onConnectInput = () => false;
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 0, toNodeId: 2, toInput: 0 })).toEqual({
      ok: false,
      error: "KSampler#2 refused the link from CheckpointLoaderSimple#1 'MODEL' (a node rule blocked it); nothing changed.",
    });
    expect(t.graph.links.size).toBe(0);
    expect(t.tracker.undoQueue).toEqual([]);
  });

  it("fails on invalid arguments", async () => {
    const t = createTestApp();
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: 0, toNodeId: 2 })).toEqual({
      ok: false,
      error: "Invalid arguments for connectNodes: 'toInput' is required.",
    });
    expect(await t.tools.connectNodes({ fromNodeId: 1, fromOutput: true, toNodeId: 2, toInput: 0 })).toEqual({
      ok: false,
      error: "Invalid arguments for connectNodes: 'fromOutput' must be string or integer, got boolean true.",
    });
  });
});
