// Links, read from the graph's link map (`graph.links`, a Map on every frontend) rather than from
// the slots' `input.link` / `output.links`, which newer frontends deprecate (and a subgraph node's
// getInputLink() answers for the inside of the subgraph). One index per read: O(links).
import type { LGraph, LGraphNode } from "../host/comfy";

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

/**
 * Whether two LiteGraph node ids name the same node. Frontends up to about 1.48 keep node ids
 * (and a link's origin_id/target_id) as numbers, later ones as strings ("5"; "-10" and "-20" for
 * a subgraph's boundary): every comparison of ids goes through here, never `===`.
 */
export function sameId(a: unknown, b: unknown): boolean {
  return a !== null && a !== undefined && b !== null && b !== undefined && String(a) === String(b);
}

/** Whether a link end is a subgraph's input boundary (-10 or "-10"). */
export const fromSubgraphInput = (id: unknown): boolean => sameId(id, SUBGRAPH_INPUT_ID);

/** Whether a link end is a subgraph's output boundary (-20 or "-20"). */
export const toSubgraphOutput = (id: unknown): boolean => sameId(id, SUBGRAPH_OUTPUT_ID);

/** The node with this id (a number or a string, as the frontend keeps it) in `graph`'s own level. */
export function nodeById(graph: LGraph, id: unknown): LGraphNode | undefined {
  if (id === null || id === undefined) return undefined;
  // getNodeById looks the id up as an object key: 5 and "5" find the same node on every version.
  return (graph.getNodeById(id as number) ?? undefined) as LGraphNode | undefined;
}

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
    if (sameId(id, to.id)) return true;
    if (seen.has(String(id))) continue;
    seen.add(String(id));
    for (const link of index.from(id)) stack.push(link.target_id);
  }
  return false;
}
