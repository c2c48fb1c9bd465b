// getWorkflow: the graph as the model reads it, in three sizes.
//   summary — node count, count per type, link count;
//   compact — per node: id, type, title (only if renamed), mode (only if not normal), linked
//             inputs {name: [fromId, fromOutput]}, unlinked required inputs, widget values that
//             differ from the definition's default; plus links [fromId, fromOutput, toId, toInput];
//   full    — per node: every widget value, position, size, all slots with their types and links.
import type { ComfyApp, LGraphNode } from "../comfy";
import { findInput, nodeDefOf, widgetKind } from "../litegraph/defs";
import { allNodes, publicId, requireNodes, type NodeId, type ToolContext, type ToolResult } from "./context";
import { linkById, typeText } from "./slots";
import { widgetValues } from "./widgets";

export interface GetWorkflowArgs {
  detail?: "summary" | "compact" | "full";
  nodeIds?: number[];
}

type LinkRow = [NodeId, string, NodeId, string];

/** Longest string widget value shown by "compact". */
const COMPACT_STRING = 400;
const MODES: Record<number, string> = { 1: "on event", 2: "muted", 3: "on trigger", 4: "bypassed" };

/** Where an input's link comes from: [source node id, source output name]. */
function source(app: ComfyApp, node: LGraphNode, index: number): [NodeId, string] | null {
  const link = linkById(app.graph, node.inputs?.[index]?.link);
  if (!link) return null;
  const from = app.graph.getNodeById(link.origin_id as NodeId);
  const name = from?.outputs?.[link.origin_slot]?.name ?? String(link.origin_slot);
  return [publicId(link.origin_id), name];
}

function links(app: ComfyApp, nodes: LGraphNode[], ids: Set<unknown>): LinkRow[] {
  const rows: LinkRow[] = [];
  const seen = new Set<unknown>();
  const visit = (target: LGraphNode) => {
    (target.inputs ?? []).forEach((input, index) => {
      if (input.link == null || seen.has(input.link)) return;
      const from = source(app, target, index);
      if (!from) return;
      seen.add(input.link);
      rows.push([from[0], from[1], publicId(target.id), input.name]);
    });
  };
  for (const node of nodes) visit(node);
  // Links leaving the selected nodes towards nodes outside the selection.
  for (const node of allNodes(app)) if (!ids.has(publicId(node.id))) {
    (node.inputs ?? []).forEach((input, index) => {
      const from = input.link != null ? source(app, node, index) : null;
      if (from && ids.has(from[0]) && !seen.has(input.link)) {
        seen.add(input.link);
        rows.push([from[0], from[1], publicId(node.id), input.name]);
      }
    });
  }
  return rows;
}

function defaultTitle(node: LGraphNode): string {
  const ctor = node.constructor as { title?: string };
  return ctor.title || nodeDefOf(node)?.display_name || node.type;
}

function common(node: LGraphNode): Record<string, unknown> {
  const out: Record<string, unknown> = { id: publicId(node.id), type: node.type };
  if (node.title && node.title !== defaultTitle(node)) out.title = node.title;
  const mode = MODES[node.mode as number];
  if (mode) out.mode = mode;
  return out;
}

function compactNode(app: ComfyApp, node: LGraphNode): Record<string, unknown> {
  const out = common(node);
  const def = nodeDefOf(node);
  const inputs: Record<string, [NodeId, string]> = {};
  const unlinked: string[] = [];
  (node.inputs ?? []).forEach((input, index) => {
    const from = source(app, node, index);
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

function fullNode(app: ComfyApp, node: LGraphNode): Record<string, unknown> {
  const out = common(node);
  out.title = node.title;
  out.pos = [Math.round(node.pos[0]), Math.round(node.pos[1])];
  out.size = [Math.round(node.size[0]), Math.round(node.size[1])];
  out.inputs = (node.inputs ?? []).flatMap((input, index) => {
    const from = source(app, node, index);
    if (input.widget && !from) return []; // ComfyUI's widget sockets: shown as widgets
    return [{ name: input.name, type: typeText(input.type), ...(from ? { link: from } : {}) }];
  });
  out.outputs = (node.outputs ?? []).map((output) => {
    const targets = (output.links ?? []).flatMap((id) => {
      const link = linkById(app.graph, id);
      const to = link ? app.graph.getNodeById(link.target_id as NodeId) : null;
      return link && to ? [[publicId(link.target_id), to.inputs?.[link.target_slot]?.name ?? String(link.target_slot)]] : [];
    });
    return { name: output.name, type: typeText(output.type), ...(targets.length ? { links: targets } : {}) };
  });
  out.widgets = widgetValues(node, "all");
  return out;
}

export function getWorkflow(ctx: ToolContext, args: GetWorkflowArgs): ToolResult {
  const { app } = ctx;
  const detail = args.detail ?? "compact";
  const byId = (a: LGraphNode, b: LGraphNode) => Number(a.id) - Number(b.id) || String(a.id).localeCompare(String(b.id));
  const nodes = args.nodeIds
    ? requireNodes(app, [...new Set(args.nodeIds)], "ask for existing ids, or omit nodeIds for the whole graph")
    : allNodes(app).sort(byId);
  const ids = new Set<unknown>(nodes.map((n) => publicId(n.id)));
  const rows = links(app, nodes, ids);
  if (detail === "summary") {
    const types: Record<string, number> = {};
    for (const node of nodes) types[node.type] = (types[node.type] ?? 0) + 1;
    return { ok: true, detail, nodeCount: nodes.length, linkCount: rows.length, types };
  }
  const shape = detail === "full" ? fullNode : compactNode;
  return { ok: true, detail, nodes: nodes.map((node) => shape(app, node)), links: rows };
}
