// connectNodes: links an output to an input, by slot name or index, after checking both slots,
// their types and that the link would not close a cycle. An existing link into the input is
// replaced (as on the canvas).
import type { LGraphNode } from "../comfy";
import { nodeLabel, publicId, recordEdit, requireNodes, ToolError, type ToolContext, type ToolResult } from "./context";
import { describeSlots, linkById, reaches, resolveInput, resolveOutput, typeText, typesMatch } from "./slots";

export interface ConnectNodesArgs {
  fromNodeId: number;
  fromOutput: string | number;
  toNodeId: number;
  toInput: string | number;
}

function mismatch(from: LGraphNode, out: number, to: LGraphNode, inp: number): string {
  const output = from.outputs[out]!;
  const input = to.inputs[inp]!;
  const inType = typeText(input.type);
  const outType = typeText(output.type);
  const fitting = from.outputs.flatMap((o, i) => (typesMatch(o.type, input.type) ? [i] : []));
  const accepting = to.inputs.flatMap((s, i) => (!s.widget && typesMatch(output.type, s.type) ? [i] : []));
  return (
    `Type mismatch: ${nodeLabel(to)} input '${input.name}' takes ${inType}, but ${nodeLabel(from)} output ` +
    `'${output.name}' (${out}) is ${outType}. ${nodeLabel(from)} outputs ${describeSlots(from.outputs)}; ` +
    `compatible with '${input.name}': ${describeSlots(from.outputs, fitting)}. ` +
    `Inputs of ${nodeLabel(to)} that take ${outType}: ${describeSlots(to.inputs, accepting)}.`
  );
}

export async function connectNodes(ctx: ToolContext, args: ConnectNodesArgs): Promise<ToolResult> {
  const { app } = ctx;
  const [from, to] = requireNodes(app, [args.fromNodeId, args.toNodeId], "nothing was linked") as [LGraphNode, LGraphNode];
  if (from === to) throw new ToolError(`A node can't be linked to itself (${nodeLabel(from)}).`);
  const out = resolveOutput(from, args.fromOutput);
  if ("error" in out) throw new ToolError(out.error);
  const inp = resolveInput(to, args.toInput);
  if ("error" in inp) throw new ToolError(inp.error);
  const output = from.outputs[out.index]!;
  const input = to.inputs[inp.index]!;
  if (!typesMatch(output.type, input.type)) throw new ToolError(mismatch(from, out.index, to, inp.index));
  if (reaches(to, from)) {
    throw new ToolError(`Linking ${nodeLabel(from)} into ${nodeLabel(to)} would make a cycle: ${nodeLabel(to)} already feeds ${nodeLabel(from)}.`);
  }
  const row = [publicId(from.id), output.name, publicId(to.id), input.name];
  const old = linkById(app.graph, input.link);
  if (old && old.origin_id === from.id && old.origin_slot === out.index) {
    return { ok: true, link: row, linkId: input.link, unchanged: true };
  }
  const replaced = old ? [publicId(old.origin_id), app.graph.getNodeById(old.origin_id as number)?.outputs?.[old.origin_slot]?.name ?? old.origin_slot] : undefined;
  const link = await recordEdit(app, () => from.connect(out.index, to, inp.index));
  if (!link) {
    throw new ToolError(`${nodeLabel(to)} refused the link from ${nodeLabel(from)} '${output.name}' (a node rule blocked it); nothing changed.`);
  }
  return { ok: true, link: row, linkId: link.id, ...(replaced ? { replaced } : {}) };
}
