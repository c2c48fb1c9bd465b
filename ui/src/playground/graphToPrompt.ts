// The graph in ComfyUI's API format: {id: {class_type, inputs, _meta}}, link inputs as
// [origin id, origin slot], widget values by input name. Muted nodes are left out; bypassed
// nodes pass their matching input through, as in ComfyUI.
import type { LGraph, LGraphNode } from "@comfyorg/litegraph";
import type { ComfyPrompt, NodeDef } from "../host/comfy";

const MODE_NEVER = 2;
const MODE_BYPASS = 4;

export type PromptOutput = ComfyPrompt["output"];

function nodeDef(node: LGraphNode): NodeDef | undefined {
  return (node.constructor as { nodeData?: NodeDef }).nodeData;
}

function inputNames(def: NodeDef): Set<string> {
  return new Set([...Object.keys(def.input?.required ?? {}), ...Object.keys(def.input?.optional ?? {})]);
}

/** The real origin of an input link, following bypassed nodes; null when it leads nowhere. */
function origin(graph: LGraph, node: LGraphNode, slot: number): [string, number] | null {
  let link = node.getInputLink(slot);
  for (let hops = 0; link && hops < 100; hops++) {
    const from = graph.getNodeById(link.origin_id);
    if (!from || from.mode === MODE_NEVER) return null;
    if (from.mode !== MODE_BYPASS) return nodeDef(from) ? [String(from.id), link.origin_slot] : null;
    const type = from.outputs[link.origin_slot]?.type;
    const through = from.inputs.findIndex((input) => input.link != null && input.type === type);
    if (through < 0) return null;
    link = from.getInputLink(through);
  }
  return null;
}

export function graphToPromptOutput(graph: LGraph): PromptOutput {
  const output: PromptOutput = {};
  for (const node of graph.computeExecutionOrder(false) as LGraphNode[]) {
    const def = nodeDef(node);
    if (!def || node.mode === MODE_NEVER || node.mode === MODE_BYPASS) continue;
    const names = inputNames(def);
    const inputs: Record<string, unknown> = {};
    for (const widget of node.widgets ?? []) {
      const serialize = (widget.options as { serialize?: boolean } | undefined)?.serialize;
      if (names.has(widget.name) && serialize !== false) inputs[widget.name] = widget.value;
    }
    node.inputs.forEach((input, slot) => {
      if (input.link == null) return;
      const from = origin(graph, node, slot);
      if (from) inputs[input.name] = from;
    });
    output[String(node.id)] = { class_type: def.name ?? node.type, inputs, _meta: { title: node.title } } as PromptOutput[string];
  }
  return output;
}

export function graphToPrompt(graph: LGraph): ComfyPrompt {
  return { output: graphToPromptOutput(graph), workflow: graph.serialize() };
}
