// The workflow a new user sees: ComfyUI's default text-to-image graph, built from the registered
// node types (so it is right whatever widgets the registration creates).
import type { LGraph, LGraphNode, LiteGraph as LiteGraphValue } from "@comfyorg/litegraph";

type LiteGraphGlobal = typeof LiteGraphValue;

interface Spec {
  key: string;
  type: string;
  column: number;
  values?: Record<string, unknown>;
}

const NODES: Spec[] = [
  { key: "ckpt", type: "CheckpointLoaderSimple", column: 0, values: { ckpt_name: "v1-5-pruned-emaonly.safetensors" } },
  { key: "pos", type: "CLIPTextEncode", column: 1, values: { text: "a watercolor fox in a snowy forest, soft morning light" } },
  { key: "neg", type: "CLIPTextEncode", column: 1, values: { text: "blurry, low quality, watermark" } },
  { key: "latent", type: "EmptyLatentImage", column: 1 },
  { key: "sampler", type: "KSampler", column: 2, values: { seed: 156680208700286, steps: 20, cfg: 8 } },
  { key: "decode", type: "VAEDecode", column: 3 },
  { key: "save", type: "SaveImage", column: 4 },
];

const GAP_X = 70;
const GAP_Y = 60;
const TOP = 60;

const LINKS: [string, string, string, string][] = [
  ["ckpt", "MODEL", "sampler", "model"],
  ["ckpt", "CLIP", "pos", "clip"],
  ["ckpt", "CLIP", "neg", "clip"],
  ["pos", "CONDITIONING", "sampler", "positive"],
  ["neg", "CONDITIONING", "sampler", "negative"],
  ["latent", "LATENT", "sampler", "latent_image"],
  ["sampler", "LATENT", "decode", "samples"],
  ["ckpt", "VAE", "decode", "vae"],
  ["decode", "IMAGE", "save", "images"],
];

/** Add the default graph; node types missing from this environment are skipped. */
export function addDefaultWorkflow(liteGraph: LiteGraphGlobal, graph: LGraph): void {
  const nodes = new Map<string, LGraphNode>();
  const columns: LGraphNode[][] = [];
  for (const spec of NODES) {
    const node = liteGraph.createNode(spec.type);
    if (!node) continue;
    for (const [name, value] of Object.entries(spec.values ?? {})) {
      const widget = node.widgets?.find((w) => w.name === name);
      if (widget) widget.value = value as typeof widget.value;
    }
    graph.add(node);
    nodes.set(spec.key, node);
    (columns[spec.column] ??= []).push(node);
  }
  // Laid out by the nodes' real sizes: columns left to right, each stacked from the top.
  let x = 0;
  for (const column of columns) {
    if (!column) continue;
    let y = TOP;
    for (const node of column) {
      node.pos = [x, y];
      y += node.size[1] + GAP_Y;
    }
    x += Math.max(...column.map((node) => node.size[0])) + GAP_X;
  }
  for (const [from, output, to, input] of LINKS) {
    const source = nodes.get(from);
    const target = nodes.get(to);
    if (!source || !target) continue;
    const slot = target.findInputSlot(input);
    if (slot >= 0) source.connect(source.findOutputSlot(output), target, slot);
  }
}
