// Which graph a tool reads or edits, and how the model names nodes at any depth.
//
// A graph level is named by the path of subgraph node ids that leads to it from the root: ""
// (shown as "root") is the whole workflow, "12" the inside of subgraph node 12, "12:35" the
// inside of subgraph node 35 within it. A node's id is its graph's path plus its local id:
// 5 (a root node) or "12:5" (node 5 inside subgraph node 12) — ComfyUI's execution ids have the
// same form. Inside a subgraph its boundary shows as two pseudo nodes: "12:in" (outputs = the
// subgraph's inputs) and "12:out" (inputs = the subgraph's outputs).
//
// One rule for every tool: it works in the graph the user is viewing unless told otherwise. A
// tool's graph (`subgraph`, a path from the root) defaults to it, and a node id without a path
// ("5") names a node of it; an id with a path ("12:5") names one from the root. While the user
// views a subgraph, a root node is therefore named "root:5" (results name it so too).
import { rootGraph, showToast, viewedGraph, type ComfyApp, type LGraph, type LGraphNode } from "../host/comfy";
import { listText, nodeLabel, publicId, rememberId, ToolError, typeName, type NodeId } from "./context";
import { nodeById } from "./links";

/** One graph level: the graph, its path ("" for the root) and its name. */
export interface GraphRef {
  graph: LGraph;
  path: string;
  name: string;
  /** The root while the user views a subgraph: a bare id would name a node there, so its nodes are "root:5". */
  prefixed?: boolean;
}

const ROOT_PREFIX = "root:";

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

/** The root level, its ids prefixed "root:" while the user views a subgraph of the workflow. */
export function rootRef(app: ComfyApp): GraphRef {
  return { ...bareRoot(app), prefixed: viewedRef(app)?.path ? true : undefined };
}

function bareRoot(app: ComfyApp): GraphRef {
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

/** The id the model uses for `node` of `ref`: 5 at the root ("root:5" while the user views a
 * subgraph), "12:5" inside subgraph node 12. */
export function nodeRef(ref: GraphRef, node: LGraphNode | { id: unknown }): NodeId {
  const id = ref.path ? join(ref.path, node.id) : ref.prefixed ? `${ROOT_PREFIX}${String(node.id)}` : publicId(node.id);
  rememberId(node, id);
  return id;
}

/** The id ComfyUI's prompt gives `node` of `ref` (its execution id): "9", "12:5". */
export function executionId(ref: GraphRef, node: LGraphNode): string {
  return join(ref.path, node.id);
}

/** How results name a node of an execution id from ComfyUI ("9", "12:5"): as nodeRef would. */
export function executionIdRef(app: ComfyApp, id: unknown): NodeId {
  const text = String(id);
  return !text.includes(":") && viewedRef(app)?.path ? `${ROOT_PREFIX}${text}` : publicId(id);
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

export function nodesOf(ref: GraphRef): LGraphNode[] {
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
  visit(bareRoot(app), 0);
  return out;
}

/** The level the user is viewing (the canvas's graph), or undefined if the workflow does not reach it. */
export function viewedRef(app: ComfyApp): GraphRef | undefined {
  const viewed = viewedGraph(app);
  const root = bareRoot(app);
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

/**
 * The node an id names: with a path ("12:5", "root:5") from the root, without one ("5") in
 * `viewing` (the graph the user views; the root when not given).
 */
function lookup(app: ComfyApp, id: NodeId, viewing?: GraphRef): Found | NotFound {
  const given = String(id).trim();
  if (!/^(root:)?\d+(:\d+)*$/.test(given)) {
    return {
      error: `${JSON.stringify(id)} is not a node id: ids are numbers like 5 (a node of the graph the user is viewing), or paths like "12:5" (node 5 inside subgraph node 12) and "root:5" (node 5 of the root graph).`,
    };
  }
  const absolute = given.startsWith(ROOT_PREFIX);
  const text = absolute ? given.slice(ROOT_PREFIX.length) : given;
  const segments = text.split(":");
  const start = !absolute && segments.length === 1 && viewing ? viewing : rootRef(app);
  let ref = start;
  for (const [i, segment] of segments.entries()) {
    const node = localNode(ref, segment);
    if (!node) return { missing: given, ref, hint: i === 0 && segments.length === 1 && !absolute ? viewedHint(app, ref, segment) : undefined };
    if (i === segments.length - 1) {
      nodeRef(ref, node);
      return { node, ref };
    }
    if (!subgraphOf(node)) {
      return { error: `${describeNode(ref, node)} is not a subgraph, so "${given}" names no node (ids inside a subgraph look like "12:5").` };
    }
    ref = childRef(ref, node);
  }
  return { error: `"${given}" is not a node id.` };
}

/** For an id without a path missing in the subgraph the user views: where it was looked for, and
 * the root node it may have meant. */
function viewedHint(app: ComfyApp, viewing: GraphRef, segment: string): string | undefined {
  if (!viewing.path) return undefined;
  const node = localNode(bareRoot(app), segment);
  const root = node ? ` The root graph's node ${segment} (${typeName(node)}) is "${ROOT_PREFIX}${segment}".` : "";
  return `An id without a path names a node of the graph the user is viewing, ${graphLabel(viewing)}.${root}`;
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
