// connectNodes: links an output to an input, by slot name or index, after checking both slots,
// their types and that the link would not close a cycle. An existing link into the input is
// replaced (as on the canvas). Ends may be nodes at any depth or a subgraph's boundary ("12:in",
// "12:out"); a link between a graph and a subgraph one level inside it goes through a subgraph
// input or output (an existing one that already carries it, else a new one).
import type { LGraphNode } from "../host/comfy";
import { nodeLabel, publicId, recordEdit, ToolError, type NodeId, type ToolContext, type ToolResult } from "./context";
import { boundary, comesFrom, freeName, gateway, linkEnds, linkInto, requireEnds, type Endpoint } from "./endpoints";
import { editedGraph, graphLabel, graphName, nodeRef, subgraphOf, type SubgraphLike } from "./graphs";
import { fromSubgraphInput, LinkIndex, nodeById, reaches, toSubgraphOutput } from "./links";
import { describeSlots, resolveInput, resolveOutput, typeText, typesMatch } from "./slots";

export interface ConnectNodesArgs {
  fromNodeId: NodeId;
  fromOutput: string | number;
  toNodeId: NodeId;
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

function refused(from: Endpoint, out: number, to: Endpoint): ToolError {
  const name = from.node.outputs[out]?.name;
  return new ToolError(`${nodeLabel(to.node)} refused the link from ${nodeLabel(from.node)} '${name}' (a node rule blocked it); nothing changed.`);
}

function nodeEnd(ref: Endpoint["ref"], node: LGraphNode): Endpoint {
  return { kind: "node", ref, node, id: nodeRef(ref, node) };
}

/** [source id, output name] of the link now feeding `to`'s input, if any. */
function currentSource(to: Endpoint, inp: number): [NodeId, string | number] | undefined {
  const old = linkInto(to, inp);
  if (!old) return undefined;
  if (fromSubgraphInput(old.origin_id)) {
    const sub = to.ref.graph as unknown as SubgraphLike;
    return [`${to.ref.path}:in`, sub.inputs[old.origin_slot]?.name ?? old.origin_slot];
  }
  const source = nodeById(to.ref.graph, old.origin_id);
  return [source ? nodeRef(to.ref, source) : publicId(old.origin_id), source?.outputs?.[old.origin_slot]?.name ?? old.origin_slot];
}

async function sameLevel(ctx: ToolContext, from: Endpoint, out: number, to: Endpoint, inp: number, row: unknown[]): Promise<ToolResult> {
  if (from.kind === "node" && to.kind === "node" && reaches(to.node, from.node)) {
    throw new ToolError(`Linking ${nodeLabel(from.node)} into ${nodeLabel(to.node)} would make a cycle: ${nodeLabel(to.node)} already feeds ${nodeLabel(from.node)}.`);
  }
  const old = linkInto(to, inp);
  if (old && comesFrom(old, from, out)) return { ok: true, link: row, linkId: old.id, unchanged: true, graph: graphName(from.ref) };
  const replaced = currentSource(to, inp);
  const link = await recordEdit(ctx.app, () => linkEnds(from, out, to, inp));
  if (!link) throw refused(from, out, to);
  const { graph, notes } = editedGraph(ctx.app, from.ref, "a link was made");
  return { ok: true, link: row, linkId: link.id, graph, ...(replaced ? { replaced } : {}), ...(notes.length ? { notes } : {}) };
}

/** Links across one subgraph boundary: outer node -> subgraph input -> inner node, or inner -> subgraph output -> outer. */
async function across(ctx: ToolContext, from: Endpoint, out: number, to: Endpoint, inp: number, row: unknown[]): Promise<ToolResult> {
  const down = gateway(from.ref, to.ref); // `to` is inside subgraph node `down`
  const up = gateway(to.ref, from.ref); // `from` is inside subgraph node `up`
  const gate = down ?? up;
  if (!gate || from.kind !== "node" || to.kind !== "node") {
    throw new ToolError(
      `${nodeLabel(from.node)} is in ${graphLabel(from.ref)} and ${nodeLabel(to.node)} in ${graphLabel(to.ref)}: a link crosses one subgraph boundary at a time. ` +
        `Link to the subgraph node's input or from its output, then inside it from "<id>:in" or to "<id>:out". Nothing was linked.`,
    );
  }
  const outer = down ? from.ref : to.ref;
  const inner = down ? to.ref : from.ref;
  const sub = subgraphOf(gate)!;
  const gateEnd = nodeEnd(outer, gate);
  if (down ? reaches(gate, from.node) : reaches(to.node, gate)) {
    throw new ToolError(`Linking ${nodeLabel(from.node)} into ${nodeLabel(to.node)} would make a cycle through ${nodeLabel(gate)}.`);
  }
  const innerIndex = new LinkIndex(inner.graph);
  const reuse = down
    ? innerIndex.into(to.node.id, inp)
    : innerIndex.from(from.node.id, out).find((l) => toSubgraphOutput(l.target_id));
  let slot = down ? (reuse && fromSubgraphInput(reuse.origin_id) ? reuse.origin_slot : -1) : (reuse?.target_slot ?? -1);
  const reused = slot >= 0;
  const replaced = down && !reused ? currentSource(to, inp) : undefined; // (its link gives way to the new input)
  await recordEdit(ctx.app, () => {
    if (slot < 0) {
      if (down) {
        const input = to.node.inputs[inp]!;
        sub.addInput!(freeName(sub.inputs, input.name), typeText(input.type));
        slot = sub.inputs.length - 1;
        if (!linkEnds(boundary(inner, "in"), slot, to, inp)) throw refused(boundary(inner, "in"), slot, to);
      } else {
        const output = from.node.outputs[out]!;
        sub.addOutput!(freeName(sub.outputs, output.name), typeText(output.type));
        slot = sub.outputs.length - 1;
        if (!linkEnds(from, out, boundary(inner, "out"), slot)) throw refused(from, out, boundary(inner, "out"));
      }
    }
    const linked = down ? linkEnds(from, out, gateEnd, slot) : linkEnds(gateEnd, slot, to, inp);
    if (!linked) throw down ? refused(from, out, gateEnd) : refused(gateEnd, slot, to);
  });
  const name = down ? sub.inputs[slot]?.name : sub.outputs[slot]?.name;
  const notes = [outer, inner].flatMap((ref) => editedGraph(ctx.app, ref, "a link was made").notes);
  return {
    ok: true,
    link: row,
    graph: graphName(from.ref),
    via: `${nodeLabel(gate)} ${down ? "input" : "output"} '${name}'${reused ? " (existing)" : " (new)"}`,
    ...(replaced ? { replaced } : {}),
    ...(notes.length ? { notes } : {}),
  };
}

export async function connectNodes(ctx: ToolContext, args: ConnectNodesArgs): Promise<ToolResult> {
  const [from, to] = requireEnds(ctx.app, [args.fromNodeId, args.toNodeId], "nothing was linked") as [Endpoint, Endpoint];
  if (from.node === to.node) throw new ToolError(`A node can't be linked to itself (${nodeLabel(from.node)}).`);
  const out = resolveOutput(from.node, args.fromOutput);
  if ("error" in out) throw new ToolError(out.error);
  const inp = resolveInput(to.node, args.toInput);
  if ("error" in inp) throw new ToolError(inp.error);
  const output = from.node.outputs[out.index]!;
  const input = to.node.inputs[inp.index]!;
  if (!typesMatch(output.type, input.type)) throw new ToolError(mismatch(from.node, out.index, to.node, inp.index));
  const row = [from.id, output.name, to.id, input.name];
  return from.ref.graph === to.ref.graph ? sameLevel(ctx, from, out.index, to, inp.index, row) : across(ctx, from, out.index, to, inp.index, row);
}
