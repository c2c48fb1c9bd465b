// Links, read from the graph's link map (`graph.links`, a Map on every frontend) rather than from
// the slots' `input.link` / `output.links`, which newer frontends deprecate (and a subgraph node's
// getInputLink() answers for the inside of the subgraph). One index per read: O(links).
import type { LGraph, LGraphNode } from "../comfy";

export interface LinkLike {
  id: unknown;
  origin_id: unknown;
  origin_slot: number;
  target_id: unknown;
  target_slot: number;
}

/** LiteGraph's ids of a subgraph's boundary nodes: its inputs come from -10, its outputs go to -20. */
export const SUBGRAPH_INPUT_ID = -10;
export const SUBGRAPH_OUTPUT_ID = -20;

/** Every link of `graph` (its own level only). */
export function graphLinks(graph: LGraph | undefined | null): LinkLike[] {
  const links = (graph as { links?: Map<unknown, LinkLike> | Record<string, LinkLike> } | undefined | null)?.links;
  if (!links) return [];
  const all = links instanceof Map ? [...links.values()] : Object.values(links);
  return all.filter((l): l is LinkLike => !!l && typeof l === "object" && "origin_id" in l && "target_id" in l);
}

const slotKey = (id: unknown, slot: number) => `${String(id)}#${slot}`;

/** The links of one graph level by target slot and by origin node. */
export class LinkIndex {
  private readonly byTarget = new Map<string, LinkLike>();
  private readonly byOrigin = new Map<string, LinkLike[]>();

  constructor(readonly graph: LGraph | undefined | null) {
    for (const link of graphLinks(graph)) {
      this.byTarget.set(slotKey(link.target_id, link.target_slot), link);
      const origin = String(link.origin_id);
      const list = this.byOrigin.get(origin);
      if (list) list.push(link);
      else this.byOrigin.set(origin, [link]);
    }
  }

  /** The link into input `slot` of the node with this id (the boundary's id for a subgraph output). */
  into(nodeId: unknown, slot: number): LinkLike | undefined {
    return this.byTarget.get(slotKey(nodeId, slot));
  }

  /** The links leaving the node with this id, optionally from one output only. */
  from(nodeId: unknown, slot?: number): LinkLike[] {
    const links = this.byOrigin.get(String(nodeId)) ?? [];
    return slot === undefined ? links : links.filter((l) => l.origin_slot === slot);
  }

  /** Every link touching the node with this id. */
  touching(node: LGraphNode): LinkLike[] {
    const incoming = (node.inputs ?? []).flatMap((_, i) => this.into(node.id, i) ?? []);
    return [...incoming, ...this.from(node.id)];
  }
}

/** Whether `to` is reachable from `from` by following links downstream (same graph level). */
export function reaches(from: LGraphNode, to: LGraphNode): boolean {
  const graph = from.graph as LGraph | null | undefined;
  if (!graph) return false;
  const index = new LinkIndex(graph);
  const seen = new Set<string>();
  const stack: unknown[] = [from.id];
  while (stack.length) {
    const id = stack.pop();
    if (String(id) === String(to.id)) return true;
    if (seen.has(String(id))) continue;
    seen.add(String(id));
    for (const link of index.from(id)) stack.push(link.target_id);
  }
  return false;
}
