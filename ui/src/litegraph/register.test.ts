import { LGraph, LiteGraph, type LGraphNode } from "@comfyorg/litegraph";
import { describe, expect, it } from "vitest";
import { loadObjectInfo, realLiteGraph } from "../../test/testing";
import { comboChoices, controlDefault, numberRule, orderedInputs, widgetDefault, widgetKind, type InputSpec } from "./defs";
import { registerNodeDefs } from "./register";

const defs = loadObjectInfo();
realLiteGraph(); // registers all of them

function create(type: string): LGraphNode {
  const node = LiteGraph.createNode(type);
  if (!node) throw new Error(`cannot create ${type}`);
  return node;
}

const widgets = (node: LGraphNode) => (node.widgets ?? []).map((w) => [w.name, w.type, w.value]);
const slots = (list: { name: string; type: unknown }[]) => list.map((s) => [s.name, s.type]);

describe("registerNodeDefs", () => {
  it("registers every object_info type, with its definition, title and category", () => {
    expect(Object.keys(defs)).toHaveLength(478);
    for (const [type, def] of Object.entries(defs)) {
      const ctor = LiteGraph.registered_node_types[type] as unknown as { nodeData: unknown; title: string; category: string };
      expect(ctor.nodeData).toBe(def);
      expect(ctor.title).toBe(def.display_name || type);
      expect(ctor.category).toBe(def.category);
    }
  });

  it("returns the registered names and replaces a type registered again", () => {
    const graphLike = { registerNodeType: LiteGraph.registerNodeType.bind(LiteGraph), LGraphNode: LiteGraph.LGraphNode };
    const before = LiteGraph.registered_node_types.VAEDecode;
    expect(registerNodeDefs(graphLike, { VAEDecode: defs.VAEDecode!, broken: {} as never })).toEqual(["VAEDecode"]);
    expect(LiteGraph.registered_node_types.VAEDecode).not.toBe(before);
  });

  it("builds every type into a node that serialises and configures back", () => {
    const graph = new LGraph();
    for (const type of Object.keys(defs)) graph.add(create(type));
    expect(graph.nodes).toHaveLength(478);
    const copy = new LGraph();
    copy.configure(graph.serialize());
    expect(copy.nodes.map((n) => n.type)).toEqual(graph.nodes.map((n) => n.type));
  });

  it("KSampler: link inputs, widgets in order with the seed control, output, comfyClass", () => {
    const node = create("KSampler");
    expect(node.title).toBe("KSampler");
    expect(node.comfyClass).toBe("KSampler");
    expect(slots(node.inputs)).toEqual([
      ["model", "MODEL"],
      ["positive", "CONDITIONING"],
      ["negative", "CONDITIONING"],
      ["latent_image", "LATENT"],
    ]);
    expect(widgets(node)).toEqual([
      ["seed", "number", 0],
      ["control_after_generate", "combo", "randomize"],
      ["steps", "number", 20],
      ["cfg", "number", 8],
      ["sampler_name", "combo", "euler"],
      ["scheduler", "combo", "simple"],
      ["denoise", "number", 1],
    ]);
    expect(slots(node.outputs)).toEqual([["LATENT", "LATENT"]]);
    const [seed, control, steps, cfg] = node.widgets!;
    expect(seed!.options).toMatchObject({ min: 0, max: 18446744073709551615, step2: 1, precision: 0 });
    expect(control!.options).toEqual({ values: ["fixed", "increment", "decrement", "randomize"] });
    expect(steps!.options).toMatchObject({ min: 1, max: 10000, step: 10, step2: 1 });
    expect(cfg!.options).toMatchObject({ min: 0, max: 100, step2: 0.1, round: 0.01, precision: 1 });
    expect(node.serialize_widgets).toBe(true);
  });

  it("text, toggle, V3 combo, forceInput and list outputs", () => {
    const encode = create("CLIPTextEncode");
    expect(slots(encode.inputs)).toEqual([["clip", "CLIP"]]);
    expect(widgets(encode)).toEqual([["text", "text", ""]]);
    expect(encode.widgets![0]!.options).toMatchObject({ multiline: true });
    expect(encode.title).toBe("CLIP Text Encode (Prompt)");

    expect(widgets(create("GrowMask"))).toEqual([
      ["expand", "number", 0],
      ["tapered_corners", "toggle", true],
    ]);
    const behaviour = create("LatentBatchSeedBehavior");
    expect(widgets(behaviour)).toEqual([["seed_behavior", "combo", "fixed"]]);
    expect(behaviour.widgets![0]!.options).toEqual({ values: ["random", "fixed"] });

    const lora = create("SaveLoRANode");
    expect(lora.inputs.find((i) => i.name === "steps")?.type).toBe("INT");
    expect(lora.widgets?.some((w) => w.name === "steps")).toBe(false);

    expect(create("RebatchLatents").outputs[0]).toMatchObject({ name: "LATENT", type: "LATENT", shape: LiteGraph.GRID_SHAPE });
    expect(create("CheckpointLoaderSimple").outputs.map((o) => o.name)).toEqual(["MODEL", "CLIP", "VAE"]);
    expect(create("PreviewAny").inputs[0]).toMatchObject({ name: "source", type: "*" });
  });

  it("sizes nodes like ComfyUI (1.5 × LiteGraph's width, room for text boxes)", () => {
    const sampler = create("KSampler");
    const computed = sampler.computeSize();
    expect(sampler.size[0]).toBeCloseTo(computed[0] * 1.5);
    expect(sampler.size[1]).toBe(computed[1]);
    const encode = create("CLIPTextEncode");
    expect(encode.size[1]).toBe(encode.computeSize()[1] + 60);
  });
});

describe("node definition helpers", () => {
  const spec = (s: unknown[]) => s as unknown as InputSpec;

  it("orders inputs by input_order, required first", () => {
    expect(orderedInputs(defs.KSampler!).map((i) => i.name)).toEqual([
      "model", "seed", "steps", "cfg", "sampler_name", "scheduler", "positive", "negative", "latent_image", "denoise",
    ]);
    const withOptional = orderedInputs({ name: "X", input: { required: { b: ["INT"], a: ["INT"] }, optional: { c: ["MODEL"] } } });
    expect(withOptional.map((i) => [i.name, i.required])).toEqual([["b", true], ["a", true], ["c", false]]);
  });

  it("reads widget kinds, choices, defaults and number rules like ComfyUI", () => {
    expect(widgetKind(spec(["MODEL"]))).toBeNull();
    expect(widgetKind(spec(["INT", { forceInput: true }]))).toBeNull();
    expect(widgetKind(spec([["a", "b"]]))).toBe("COMBO");
    expect(widgetKind(spec(["COMBO", { options: ["x"] }]))).toBe("COMBO");
    expect(comboChoices(spec(["COMBO", {}]))).toEqual([]);
    expect(comboChoices(spec(["INT"]))).toBeNull();
    expect(widgetDefault("INT", spec(["INT", { min: 5 }]))).toBe(0);
    expect(widgetDefault("COMBO", spec([["a", "b"]]))).toBe("a");
    expect(widgetDefault("COMBO", spec([["a", "b"], { default: "b" }]))).toBe("b");
    expect(widgetDefault("STRING", spec(["STRING"]))).toBe("");
    expect(widgetDefault("BOOLEAN", spec(["BOOLEAN"]))).toBe(false);
    expect(numberRule("INT", spec(["INT"]))).toEqual({ min: 0, max: 2048, step: 1, round: 0 });
    expect(numberRule("FLOAT", spec(["FLOAT", { step: 0.01 }]))).toEqual({ min: 0, max: 2048, step: 0.01, round: 0.01 });
    expect(numberRule("FLOAT", spec(["FLOAT", { step: 1 }]))).toEqual({ min: 0, max: 2048, step: 1, round: 0 });
    expect(controlDefault("noise_seed", spec(["INT"]))).toBe("randomize");
    expect(controlDefault("value", spec(["INT", { control_after_generate: "fixed" }]))).toBe("fixed");
    expect(controlDefault("steps", spec(["INT"]))).toBeNull();
  });
});
