// Which graph a tool reads or edits, and how the model names nodes at any depth.
//
// A graph level is named by the path of subgraph node ids that leads to it from the root: ""
// (shown as "root") is the whole workflow, "12" the inside of subgraph node 12, "12:35" the
// inside of subgraph node 35 within it. A node's id is its graph's path plus its local id:
// 5 (a root node) or "12:5" (node 5 inside subgraph node 12) — ComfyUI's execution ids have the
// same form. Inside a subgraph its boundary shows as two pseudo nodes: "12:in" (outputs = the
// subgraph's inputs) and "12:out" (inputs = the subgraph's outputs).
import { rootGraph, showToast, viewedGraph, type ComfyApp, type LGraph, type LGraphNode } from "../comfy";
import { listText, nodeLabel, publicId, rememberId, ToolError, type NodeId } from "./context";
import { nodeById } from "./links";

/** One graph level: the graph, its path ("" for the root) and its name. */
export interface GraphRef {
  graph: LGraph;
  path: string;
  name: string;
}

/** A subgraph definition as LiteGraph's Subgraph shows it (only what the tools use). */
export interface SubgraphLike {
  id: string;
  name: string;
  inputs: { name: string; type: unknown; label?: string }[];
  outputs: { name: string; type: unknown; label?: string }[];
  addInput?(name: string, type: string): unknown;
  addOutput?(name: string, type: string): unknown;
}

/** Subgraphs may nest; LiteGraph caps it too. A cycle of definitions stops here. */
const MAX_DEPTH = 16;

/** The definition inside a subgraph node, or undefined for any other node. */
export function subgraphOf(node: LGraphNode | undefined | null): (LGraph & SubgraphLike) | undefined {
  const candidate = node as (LGraphNode & { isSubgraphNode?: () => boolean; subgraph?: unknown }) | undefined | null;
  if (!candidate || typeof candidate.isSubgraphNode !== "function" || !candidate.isSubgraphNode()) return undefined;
  return (candidate.subgraph ?? undefined) as (LGraph & SubgraphLike) | undefined;
}

export function rootRef(app: ComfyApp): GraphRef {
  return { graph: rootGraph(app), path: "", name: "root" };
}

function join(path: string, id: unknown): string {
  return path ? `${path}:${String(id)}` : String(id);
}

/** The graph inside subgraph node `node` of `parent`. */
export function childRef(parent: GraphRef, node: LGraphNode): GraphRef {
  const inner = subgraphOf(node);
  if (!inner) throw new ToolError(`${describeNode(parent, node)} is not a subgraph.`);
  return { graph: inner, path: join(parent.path, node.id), name: inner.name };
}

/** The id the model uses for `node` of `ref`: 5 at the root, "12:5" inside subgraph node 12. */
export function nodeRef(ref: GraphRef, node: LGraphNode | { id: unknown }): NodeId {
  const id = ref.path ? join(ref.path, node.id) : publicId(node.id);
  rememberId(node, id);
  return id;
}

/** "the root graph" or 'subgraph "Text to Image" (node 12)'. */
export function graphLabel(ref: GraphRef): string {
  return ref.path ? `subgraph "${ref.name}" (node ${ref.path})` : "the root graph";
}

/** How results name a graph: "root" or the path. */
export function graphName(ref: GraphRef): string {
  return ref.path || "root";
}

/** "KSampler#12:5", or "Text to Image#12" for a subgraph node. */
export function describeNode(ref: GraphRef, node: LGraphNode): string {
  nodeRef(ref, node);
  return nodeLabel(node);
}

function nodesOf(ref: GraphRef): LGraphNode[] {
  return [...((ref.graph.nodes ?? []) as LGraphNode[])];
}

function localNode(ref: GraphRef, segment: string): LGraphNode | undefined {
  return nodeById(ref.graph, segment);
}

/** Every subgraph level reachable from the root, depth first (a definition used twice shows twice). */
export function allGraphs(app: ComfyApp): GraphRef[] {
  const out: GraphRef[] = [];
  const visit = (ref: GraphRef, depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const node of nodesOf(ref)) {
      if (!subgraphOf(node)) continue;
      const child = childRef(ref, node);
      out.push(child);
      visit(child, depth + 1);
    }
  };
  visit(rootRef(app), 0);
  return out;
}

/** The level the user is viewing (the canvas's graph), or undefined if the workflow does not reach it. */
export function viewedRef(app: ComfyApp): GraphRef | undefined {
  const viewed = viewedGraph(app);
  const root = rootRef(app);
  if (viewed === root.graph) return root;
  return allGraphs(app).find((ref) => ref.graph === viewed);
}

/** Paths of the other subgraph nodes that use the same definition as `ref` (edits change them all). */
export function otherInstances(app: ComfyApp, ref: GraphRef): string[] {
  if (!ref.path) return [];
  return allGraphs(app)
    .filter((other) => other.graph === ref.graph && other.path !== ref.path)
    .map((other) => other.path);
}

function idList(ref: GraphRef): string {
  const ids = nodesOf(ref).map((n) => nodeRef(ref, n));
  if (!ids.length) return ref.path ? `${graphLabel(ref)} has no nodes.` : "The graph is empty.";
  return `Node ids in ${ref.path ? graphLabel(ref) : "the graph"}: ${listText(ids, 50)}.`;
}

export type Found = { node: LGraphNode; ref: GraphRef };
/** An id that names nothing: `missing` ids were not found at level `ref`; else an `error`. */
type NotFound = { missing: string; ref: GraphRef; hint?: string } | { error: string };

function lookup(app: ComfyApp, id: NodeId, viewing?: GraphRef): Found | NotFound {
  const text = String(id).trim();
  if (!/^\d+(:\d+)*$/.test(text)) {
    return { error: `${JSON.stringify(id)} is not a node id: ids are numbers like 5, or paths like "12:5" (node 5 inside subgraph node 12).` };
  }
  const segments = text.split(":");
  let ref = rootRef(app);
  for (const [i, segment] of segments.entries()) {
    const node = segment ? localNode(ref, segment) : undefined;
    if (!node) {
      const local = !ref.path && viewing?.path && segments.length === 1 && localNode(viewing, segment);
      const hint = local ? `The user is viewing ${graphLabel(viewing!)}: its node ${segment} is "${join(viewing!.path, segment)}".` : undefined;
      return { missing: text, ref, hint };
    }
    if (i === segments.length - 1) {
      nodeRef(ref, node);
      return { node, ref };
    }
    if (!subgraphOf(node)) {
      return { error: `${describeNode(ref, node)} is not a subgraph, so "${text}" names no node (ids inside a subgraph look like "12:5").` };
    }
    ref = childRef(ref, node);
  }
  return { error: `"${text}" is not a node id.` };
}

/** "No node has id 9" / "No nodes have ids 10, 11", for ids missing at one level. */
function missingText(ids: string[]): string {
  return ids.length === 1 ? `No node has id ${ids[0]}` : `No nodes have ids ${ids.join(", ")}`;
}

/**
 * The nodes with these ids (5, "5" or "12:5"), or one ToolError naming every id that names
 * nothing, then `consequence` (e.g. "nothing was removed"), then the ids that exist there.
 */
export function requireNodes(app: ComfyApp, ids: readonly NodeId[], consequence = ""): Found[] {
  const viewing = viewedRef(app);
  const results = ids.map((id) => lookup(app, id, viewing));
  if (results.every((r) => "node" in r)) return results as Found[];
  const byLevel = new Map<GraphRef["graph"], { ref: GraphRef; ids: string[]; hints: string[] }>();
  const errors: string[] = [];
  for (const r of results) {
    if ("error" in r) errors.push(r.error);
    else if ("missing" in r) {
      const level = byLevel.get(r.ref.graph) ?? { ref: r.ref, ids: [], hints: [] };
      level.ids.push(r.missing);
      if (r.hint) level.hints.push(r.hint);
      byLevel.set(r.ref.graph, level);
    }
  }
  const tail = consequence ? `; ${consequence}` : "";
  for (const { ref, ids: missing, hints } of byLevel.values()) {
    errors.push(`${missingText(missing)}${tail}. ${[...hints, idList(ref)].join(" ")}`);
  }
  return throwErrors(errors, byLevel.size ? "" : tail);
}

function throwErrors(errors: string[], tail: string): never {
  const after = tail.slice(2);
  throw new ToolError(`${errors.join(" ")}${after ? ` ${after[0]!.toUpperCase()}${after.slice(1)}.` : ""}`);
}

/** One node by id, or undefined. */
export function findNode(app: ComfyApp, id: NodeId): Found | undefined {
  const found = lookup(app, id);
  return "node" in found ? found : undefined;
}

/** The graph at `path` ("root", "", "12", "12:35"), or a ToolError. */
export function graphByPath(app: ComfyApp, path: string | number): GraphRef {
  const text = String(path).trim();
  if (text === "" || text.toLowerCase() === "root") return rootRef(app);
  const found = lookup(app, text);
  const subgraphs = allGraphs(app).map((r) => `${r.path} ("${r.name}")`);
  const known = subgraphs.length ? `Subgraph nodes: ${listText(subgraphs, 20)}.` : "The workflow has no subgraphs.";
  if (!("node" in found)) throw new ToolError(`No subgraph node "${text}". ${known}`);
  if (!subgraphOf(found.node)) throw new ToolError(`${describeNode(found.ref, found.node)} is not a subgraph. ${known}`);
  return childRef(found.ref, found.node);
}

/** The graph a tool works on: the named one, else the one the user is viewing. */
export function targetGraph(app: ComfyApp, path?: string | number): GraphRef {
  if (path !== undefined) return graphByPath(app, path);
  const viewed = viewedRef(app);
  if (!viewed) throw new ToolError('The canvas shows a graph that is not part of the workflow; name the graph with "subgraph" ("root" for the top level).');
  return viewed;
}

/**
 * What an edit result says about where it happened: the graph, and notes when the user is not
 * viewing it (they also get a toast) or when other subgraph nodes share the definition.
 */
export function editedGraph(app: ComfyApp, ref: GraphRef, what: string): { graph: string; notes: string[] } {
  const notes: string[] = [];
  const viewed = viewedRef(app);
  if (viewed?.graph !== ref.graph) {
    const where = viewed ? graphLabel(viewed) : "another graph";
    notes.push(`${what} in ${graphLabel(ref)}; the user is viewing ${where}, so they do not see it`);
    showToast(app, "info", `Assistant: ${what} in ${graphLabel(ref)}`, `You are viewing ${where}.`);
  }
  const others = otherInstances(app, ref);
  if (others.length) notes.push(`subgraph nodes ${listText(others)} use the same subgraph, so they changed too`);
  return { graph: graphName(ref), notes };
}
