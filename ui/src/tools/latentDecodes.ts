// Which of a run's files came after a latent decode, read from the prompt ComfyUI ran (API
// format: node id -> {class_type, inputs}; a link is [from id, output slot]), walking upstream
// from each output node. A decoder is a node whose type takes a LATENT and gives an IMAGE
// (VAEDecode, VAEDecodeTiled, a pack's decoder), or, where its definition is unknown, one whose
// type is named like VAEDecode. Only for those files does the look at an all-black image name a
// failed decode as its usual cause (routes/outputs.py); an EmptyImage is black by design.
import type { LiteGraphGlobal, NodeDef } from "../host/comfy";
import { outputFiles } from "./outputFiles";

export type ApiPrompt = Record<string, { class_type?: unknown; inputs?: Record<string, unknown> } | undefined>;

const DECODE_NAME = /VAEDecode/i;

function isLink(value: unknown): value is [string | number, number] {
  return Array.isArray(value) && value.length === 2 && (typeof value[0] === "string" || typeof value[0] === "number") && typeof value[1] === "number";
}

/** The type names a definition's inputs take (a list of choices is a combo, not a type). */
function inputTypes(def: NodeDef): string[] {
  const sections = [def.input?.required, def.input?.optional];
  return sections.flatMap((specs) => Object.values(specs ?? {}).map((spec) => (Array.isArray(spec) && typeof spec[0] === "string" ? spec[0] : "")));
}

/** Whether nodes of this type decode latents into images. */
export function decodesLatents(type: string, lg: LiteGraphGlobal | undefined): boolean {
  const def = lg?.registered_node_types[type]?.nodeData;
  if (!def?.input) return DECODE_NAME.test(type);
  const outputs = Array.isArray(def.output) ? def.output.map(String) : [];
  return inputTypes(def).includes("LATENT") && outputs.includes("IMAGE");
}

/** Whether a latent decode is upstream of node `id` in `prompt` (the node itself included). */
export function afterDecode(prompt: ApiPrompt, id: string, lg: LiteGraphGlobal | undefined): boolean {
  const seen = new Set<string>();
  const queue = [id];
  while (queue.length) {
    const at = queue.pop()!;
    const node = prompt[at];
    if (seen.has(at) || !node) continue;
    seen.add(at);
    if (typeof node.class_type === "string" && decodesLatents(node.class_type, lg)) return true;
    for (const value of Object.values(node.inputs ?? {})) if (isLink(value)) queue.push(String(value[0]));
  }
  return false;
}

/** The files of the outputs ({nodeId: {images: ["x.png [output]", …]}}) made after a decode. */
export function decodedFiles(outputs: Record<string, Record<string, unknown>>, prompt: ApiPrompt | undefined, lg: LiteGraphGlobal | undefined): string[] {
  if (!prompt) return [];
  return outputFiles(Object.fromEntries(Object.entries(outputs).filter(([id]) => afterDecode(prompt, id, lg))));
}

/** The prompt of a ComfyUI history entry (`prompt: [number, id, prompt, extra, outputs]`). */
export function historyPrompt(entry: Record<string, unknown>): ApiPrompt | undefined {
  const prompt = Array.isArray(entry.prompt) ? (entry.prompt[2] as unknown) : undefined;
  return prompt && typeof prompt === "object" && !Array.isArray(prompt) ? (prompt as ApiPrompt) : undefined;
}
