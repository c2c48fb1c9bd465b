// The two ends of a link as connectNodes sees them: a node at any depth, or a subgraph's
// boundary seen from inside it — "12:in" (its outputs are subgraph 12's inputs) and "12:out"
// (its inputs are subgraph 12's outputs). Linking two ends of one graph level is one LiteGraph
// call; which call depends on the kinds of the ends.
import type { ComfyApp, LGraphNode } from "../host/comfy";
import { ToolError, type NodeId } from "./context";
import { graphByPath, graphLabel, nodeRef, requireNodes, subgraphOf, type GraphRef, type SubgraphLike } from "./graphs";
import { LinkIndex, nodeById, sameId, SUBGRAPH_INPUT_ID, SUBGRAPH_OUTPUT_ID, type LinkLike } from "./links";

type Slot = { name: string; type: unknown };

export interface Endpoint {
  kind: "node" | "in" | "out";
  ref: GraphRef;
  /** The node; for a boundary, a stand-in whose outputs ("in") or inputs ("out") are the subgraph's slots. */
  node: LGraphNode;
  id: NodeId;
}

/** The id LiteGraph's links use for this end. */
function linkId(end: Endpoint): unknown {
  return end.kind === "in" ? SUBGRAPH_INPUT_ID : end.kind === "out" ? SUBGRAPH_OUTPUT_ID : end.node.id;
}

function subgraphOfRef(ref: GraphRef): SubgraphLike {
  return ref.graph as unknown as SubgraphLike;
}

/** A stand-in node for a subgraph boundary: named and slotted for resolveInput/resolveOutput. */
export function boundary(ref: GraphRef, kind: "in" | "out"): Endpoint {
  const sub = subgraphOfRef(ref);
  const id = `${ref.path}:${kind}`;
  const node = {
    id,
    type: kind === "in" ? "Subgraph inputs" : "Subgraph outputs",
    inputs: kind === "out" ? sub.outputs : [],
    outputs: kind === "in" ? sub.inputs : [],
    widgets: [],
  } as unknown as LGraphNode;
  return { kind, ref, node, id };
}

/** Resolves each id to an end: a node (5, "12:5") or a boundary ("12:in", "12:out"). */
export function requireEnds(app: ComfyApp, ids: NodeId[], consequence: string): Endpoint[] {
  const nodeIds = ids.filter((id) => !/:(in|out)$/i.test(String(id).trim()));
  const found = requireNodes(app, nodeIds, consequence);
  return ids.map((id) => {
    const text = String(id).trim();
    const side = /:(in|out)$/i.exec(text);
    if (!side) {
      const f = found[nodeIds.indexOf(id)]!;
      return { kind: "node" as const, ref: f.ref, node: f.node, id: nodeRef(f.ref, f.node) };
    }
    const ref = graphByPath(app, text.slice(0, side.index));
    if (!ref.path) throw new ToolError(`"${text}" names the boundary of the root graph, which has none; ${consequence}.`);
    return boundary(ref, side[1]!.toLowerCase() as "in" | "out");
  });
}

/** The link into input `slot` of `to`, if any. */
export function linkInto(to: Endpoint, slot: number): LinkLike | undefined {
  return new LinkIndex(to.ref.graph).into(linkId(to), slot);
}

/** Whether this link comes from output `slot` of `from`. */
export function comesFrom(link: LinkLike, from: Endpoint, slot: number): boolean {
  return sameId(link.origin_id, linkId(from)) && link.origin_slot === slot;
}

/** Links output `out` of `from` to input `inp` of `to` (same graph level); the link, or undefined if refused. */
export function linkEnds(from: Endpoint, out: number, to: Endpoint, inp: number): { id: unknown } | undefined {
  if (from.ref.graph !== to.ref.graph) throw new Error("linkEnds: the ends are in different graphs");
  const sub = subgraphOfRef(from.ref) as SubgraphLike & {
    inputs: { connect(slot: unknown, node: LGraphNode): { id: unknown } | undefined }[];
    outputs: { connect(slot: unknown, node: LGraphNode): { id: unknown } | undefined }[];
  };
  if (from.kind === "in" && to.kind === "out") {
    throw new ToolError(`A subgraph input can't feed a subgraph output directly in ${graphLabel(from.ref)}; link a node between them. Nothing changed.`);
  }
  if (from.kind === "in") {
    // LiteGraph's SubgraphInput.connect takes the input's old link for one of its own: one from
    // a node stays in that node's output ("link ID not found" later). The node's own disconnect
    // knows both kinds of origin.
    if (linkInto(to, inp)) to.node.disconnectInput(inp);
    return sub.inputs[out]!.connect(to.node.inputs[inp], to.node) ?? undefined;
  }
  if (to.kind === "out") return sub.outputs[inp]!.connect(from.node.outputs[out], from.node) ?? undefined;
  return from.node.connect(out, to.node, inp) ?? undefined;
}

/** The subgraph node whose inside is `inner`, if `inner` is one level below `outer`. */
export function gateway(outer: GraphRef, inner: GraphRef): LGraphNode | undefined {
  if (!inner.path || !inner.path.startsWith(outer.path ? `${outer.path}:` : "")) return undefined;
  const rest = outer.path ? inner.path.slice(outer.path.length + 1) : inner.path;
  if (rest.includes(":")) return undefined;
  const node = nodeById(outer.graph, rest);
  return node && subgraphOf(node) === inner.graph ? node : undefined;
}

/** A slot name not yet used among `slots`: `name`, else `name_2`, `name_3`, ... */
export function freeName(slots: readonly Slot[], name: string): string {
  const taken = new Set(slots.map((s) => s.name));
  if (!taken.has(name)) return name;
  let n = 2;
  while (taken.has(`${name}_${n}`)) n++;
  return `${name}_${n}`;
}
