// getWorkflow: one graph level as the model reads it — by default the one the user is viewing
// (the root graph, or the subgraph they opened), or the level named by `subgraph`, or the
// nodes named by `nodeIds` at any depth — in three sizes:
//   summary — node count, count per type, link count;
//   compact — per node: id, type, title (only if renamed), mode (only if not normal), linked
//             inputs {name: [fromId, fromOutput]}, unlinked required inputs, widget values that
//             differ from the definition's default; plus links [fromId, fromOutput, toId, toInput];
//   full    — per node: every widget value, position, size, all slots with their types and links.
// A subgraph node shows as a named block: its name, its slots (`in`, `out`) and how many nodes it
// holds; its inside is read with `subgraph`. Ids follow graphs.ts ("12:5", "12:in", "12:out").
import { lastRunErrors, type ComfyApp, type LGraphNode } from "../host/comfy";
import { findInput, nodeDefOf, widgetKind } from "../litegraph/defs";
import { publicId, typeName, type NodeId, type ToolContext, type ToolResult } from "./context";
import { nodeErrorList } from "./execution";
import { executionIdRef, graphName, nodeRef, requireNodes, rootRef, subgraphOf, targetGraph, viewedRef, type GraphRef, type SubgraphLike } from "./graphs";
import { fromSubgraphInput, LinkIndex, nodeById, toSubgraphOutput, type LinkLike } from "./links";
import { slotSummary, typeText } from "./slots";
import { widgetValues } from "./widgets";

export interface GetWorkflowArgs {
  detail?: "summary" | "compact" | "full";
  nodeIds?: NodeId[];
  subgraph?: string;
}

type LinkRow = [NodeId, string | number, NodeId, string | number];

/** Longest string widget value shown by "compact". */
const COMPACT_STRING = 400;
const MODES: Record<number, string> = { 1: "on event", 2: "muted", 3: "on trigger", 4: "bypassed" };

/** Reads one graph level's links and names their ends the way the model addresses them. */
class Level {
  readonly index: LinkIndex;
  private readonly sub: SubgraphLike | undefined;

  constructor(readonly ref: GraphRef) {
    this.index = new LinkIndex(ref.graph);
    this.sub = ref.path ? (ref.graph as unknown as SubgraphLike) : undefined;
  }

  /** [id, slot name] of a link's origin: a node, or this subgraph's input boundary. */
  origin(link: LinkLike): [NodeId, string | number] {
    if (fromSubgraphInput(link.origin_id)) return [`${this.ref.path}:in`, this.sub?.inputs[link.origin_slot]?.name ?? link.origin_slot];
    const node = nodeById(this.ref.graph, link.origin_id);
    return [node ? nodeRef(this.ref, node) : publicId(link.origin_id), node?.outputs?.[link.origin_slot]?.name ?? link.origin_slot];
  }

  /** [id, slot name] of a link's target: a node, or this subgraph's output boundary. */
  target(link: LinkLike): [NodeId, string | number] {
    if (toSubgraphOutput(link.target_id)) return [`${this.ref.path}:out`, this.sub?.outputs[link.target_slot]?.name ?? link.target_slot];
    const node = nodeById(this.ref.graph, link.target_id);
    return [node ? nodeRef(this.ref, node) : publicId(link.target_id), node?.inputs?.[link.target_slot]?.name ?? link.target_slot];
  }

  source(node: LGraphNode, slot: number): [NodeId, string | number] | null {
    const link = this.index.into(node.id, slot);
    return link ? this.origin(link) : null;
  }

  /** Links touching any of `nodes`, each once: those into them (by node, by input), then those leaving them. */
  links(nodes: LGraphNode[]): LinkRow[] {
    const seen = new Set<unknown>();
    const rows: LinkRow[] = [];
    const add = (link: LinkLike) => {
      if (seen.has(link.id)) return;
      seen.add(link.id);
      rows.push([...this.origin(link), ...this.target(link)]);
    };
    for (const node of nodes) {
      (node.inputs ?? []).forEach((_, i) => {
        const link = this.index.into(node.id, i);
        if (link) add(link);
      });
    }
    const order = new Map(((this.ref.graph.nodes ?? []) as LGraphNode[]).map((n, i) => [String(n.id), i]));
    const rank = (l: LinkLike) => order.get(String(l.target_id)) ?? Infinity;
    const leaving = nodes.flatMap((node) => this.index.from(node.id));
    leaving.sort((a, b) => rank(a) - rank(b) || a.target_slot - b.target_slot).forEach(add);
    return rows;
  }
}

function defaultTitle(node: LGraphNode): string {
  const ctor = node.constructor as { title?: string };
  return subgraphOf(node)?.name ?? (ctor.title || nodeDefOf(node)?.display_name || node.type);
}

function common(level: Level, node: LGraphNode): Record<string, unknown> {
  const inner = subgraphOf(node);
  const out: Record<string, unknown> = { id: nodeRef(level.ref, node) };
  if (inner) {
    out.subgraph = inner.name;
    out.nodeCount = inner.nodes?.length ?? 0;
    out.in = (node.inputs ?? []).map(slotSummary);
    out.out = (node.outputs ?? []).map(slotSummary);
  } else out.type = node.type;
  if (node.title && node.title !== defaultTitle(node)) out.title = node.title;
  const mode = MODES[node.mode as number];
  if (mode) out.mode = mode;
  return out;
}

function compactNode(level: Level, node: LGraphNode): Record<string, unknown> {
  const out = common(level, node);
  const def = nodeDefOf(node);
  const inputs: Record<string, [NodeId, string | number]> = {};
  const unlinked: string[] = [];
  (node.inputs ?? []).forEach((input, index) => {
    const from = level.source(node, index);
    if (from) inputs[input.name] = from;
    else if (!input.widget) {
      const spec = findInput(def, input.name);
      if (spec?.required && widgetKind(spec.spec) === null) unlinked.push(input.name);
    }
  });
  if (Object.keys(inputs).length) out.inputs = inputs;
  if (unlinked.length) out.unlinked = unlinked;
  const widgets = widgetValues(node, "changed", COMPACT_STRING);
  if (Object.keys(widgets).length) out.widgets = widgets;
  return out;
}

function fullNode(level: Level, node: LGraphNode): Record<string, unknown> {
  const out = common(level, node);
  out.title = node.title;
  out.pos = [Math.round(node.pos[0]), Math.round(node.pos[1])];
  out.size = [Math.round(node.size[0]), Math.round(node.size[1])];
  out.inputs = (node.inputs ?? []).flatMap((input, index) => {
    const from = level.source(node, index);
    if (input.widget && !from) return []; // ComfyUI's widget sockets: shown as widgets
    return [{ name: input.name, type: typeText(input.type), ...(from ? { link: from } : {}) }];
  });
  out.outputs = (node.outputs ?? []).map((output, index) => {
    const targets = level.index.from(node.id, index).map((link) => level.target(link));
    return { name: output.name, type: typeText(output.type), ...(targets.length ? { links: targets } : {}) };
  });
  out.widgets = widgetValues(node, "all");
  return out;
}

function byId(a: LGraphNode, b: LGraphNode): number {
  return Number(a.id) - Number(b.id) || String(a.id).localeCompare(String(b.id));
}

/** The last run's errors, when the frontend still holds some. */
function lastRun(app: ComfyApp): Record<string, unknown> | undefined {
  const { nodeErrors, executionError } = lastRunErrors(app);
  const errors = nodeErrorList(nodeErrors, (id) => executionIdRef(app, id));
  const out: Record<string, unknown> = {};
  if (errors.length) out.nodeErrors = errors;
  if (executionError) {
    const e = executionError;
    out.executionError = { nodeId: e.node_id == null ? null : executionIdRef(app, e.node_id), nodeType: e.node_type, message: `${String(e.exception_type ?? "Error")}: ${String(e.exception_message ?? "").trim()}` };
  }
  return Object.keys(out).length ? out : undefined;
}

export function getWorkflow(ctx: ToolContext, args: GetWorkflowArgs): ToolResult {
  const { app } = ctx;
  const detail = args.detail ?? "compact";
  const viewed = viewedRef(app);
  let groups: { level: Level; nodes: LGraphNode[] }[];
  if (args.nodeIds) {
    const found = requireNodes(app, args.nodeIds, "ask for existing ids, or omit nodeIds for the whole graph");
    const levels = new Map<unknown, { level: Level; nodes: LGraphNode[] }>();
    for (const { node, ref } of found) {
      const group = levels.get(ref.graph) ?? { level: new Level(ref), nodes: [] };
      if (!group.nodes.includes(node)) group.nodes.push(node);
      levels.set(ref.graph, group);
    }
    groups = [...levels.values()];
  } else {
    // A canvas left inside a subgraph that was since removed: read the root graph instead.
    const ref = args.subgraph === undefined && !viewed ? rootRef(app) : targetGraph(app, args.subgraph);
    groups = [{ level: new Level(ref), nodes: [...((ref.graph.nodes ?? []) as LGraphNode[])].sort(byId) }];
  }
  const head: Record<string, unknown> = { detail };
  const refs = groups.map((g) => g.level.ref);
  head.graph = refs.length === 1 ? graphName(refs[0]!) : refs.map(graphName);
  if (refs.length === 1 && refs[0]!.path && !args.nodeIds) {
    const sub = refs[0]!.graph as unknown as SubgraphLike;
    Object.assign(head, { name: sub.name, in: sub.inputs.map(slotSummary), out: sub.outputs.map(slotSummary) });
  }
  if (!viewed) head.viewing = "a subgraph that is no longer in the workflow";
  else if (!refs.some((r) => r.graph === viewed.graph)) head.viewing = graphName(viewed);
  const errors = lastRun(app);
  const tail = errors ? { lastRun: errors } : {};
  const nodes = groups.flatMap((g) => g.nodes.map((node) => ({ level: g.level, node })));
  const rows = groups.flatMap((g) => g.level.links(g.nodes));
  if (detail === "summary") {
    const types: Record<string, number> = {};
    for (const { node } of nodes) {
      const name = subgraphOf(node) ? `subgraph "${typeName(node)}"` : node.type;
      types[name] = (types[name] ?? 0) + 1;
    }
    return { ok: true, ...head, nodeCount: nodes.length, linkCount: rows.length, types, ...tail };
  }
  const shape = detail === "full" ? fullNode : compactNode;
  return { ok: true, ...head, nodes: nodes.map(({ level, node }) => shape(level, node)), links: rows, ...tail };
}
