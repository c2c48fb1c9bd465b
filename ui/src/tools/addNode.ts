// addNode: one node of a registered type, its widgets checked before anything changes, placed
// next to a related node in free space (or exactly where asked), in the graph the user is
// viewing (or the named subgraph, or nearNodeId's graph).
import type { LGraphNode, LiteGraphGlobal } from "../host/comfy";
import { closest, recordEdit, ToolError, type NodeId, type ToolContext, type ToolResult } from "./context";
import { editedGraph, graphLabel, nodeRef, requireNodes, targetGraph, type GraphRef } from "./graphs";
import { overlapping, placeNewNode, type Point } from "./layout";
import { linkInputs, slotSummary } from "./slots";
import { applyWidgetChanges, planWidgetValues, widgetValues } from "./widgets";

export interface AddNodeArgs {
  nodeType: string;
  title?: string;
  widgets?: Record<string, unknown>;
  nearNodeId?: NodeId;
  position?: { x: number; y: number };
  subgraph?: string;
}

function displayName(lg: LiteGraphGlobal, type: string): string | undefined {
  return lg.registered_node_types[type]?.nodeData?.display_name;
}

/** "Unknown node type ... Closest registered types: ..." (class names, display names in quotes). */
export function unknownTypeMessage(lg: LiteGraphGlobal, type: string): string {
  const types = Object.keys(lg.registered_node_types);
  const near = closest(type, types, 5, (name) => {
    const display = displayName(lg, name);
    return display ? [display] : [];
  });
  const shown = near.map((name) => {
    const display = displayName(lg, name);
    return display && display !== name ? `${name} ("${display}")` : name;
  });
  const hint = shown.length ? `Closest registered types: ${shown.join(", ")}.` : "No registered type is close to it.";
  return `Unknown node type "${type}". ${hint} Use the exact class name; search the installed node types if unsure.`;
}

export function isRegistered(lg: LiteGraphGlobal, type: string): boolean {
  return Object.prototype.hasOwnProperty.call(lg.registered_node_types, type);
}

/** Where the node goes: the named graph, else nearNodeId's, else the one the user is viewing. */
function placement(ctx: ToolContext, args: AddNodeArgs): { ref: GraphRef; near?: LGraphNode } {
  if (args.nearNodeId === undefined) return { ref: targetGraph(ctx.app, args.subgraph) };
  const near = requireNodes(ctx.app, [args.nearNodeId], "nearNodeId must be an existing node; nothing was added")[0]!;
  if (args.subgraph !== undefined) {
    const ref = targetGraph(ctx.app, args.subgraph);
    if (ref.graph !== near.ref.graph) {
      throw new ToolError(`nearNodeId ${args.nearNodeId} is in ${graphLabel(near.ref)}, not in ${graphLabel(ref)}; nothing was added. Pick a node of that graph or leave out one of them.`);
    }
  }
  return { ref: near.ref, near: near.node };
}

export async function addNode(ctx: ToolContext, args: AddNodeArgs): Promise<ToolResult> {
  const { app, lg } = ctx;
  const type = args.nodeType;
  if (!isRegistered(lg, type)) throw new ToolError(unknownTypeMessage(lg, type));
  const { ref, near } = placement(ctx, args);
  const node = lg.createNode(type, args.title);
  if (!node) throw new ToolError(`LiteGraph could not create a ${type} node (its constructor failed). Nothing was added.`);
  if (args.title !== undefined) node.title = args.title;

  const plan = args.widgets ? planWidgetValues(node, args.widgets) : { ok: true as const, changes: [], notes: [] };
  if (!plan.ok) {
    throw new ToolError(`${type} was not added: ${plan.errors.join(" ")} Fix the widget values and call addNode again.`);
  }
  const notes = [...plan.notes];
  const size: Point = [node.size[0], node.size[1]];
  let pos: Point;
  if (args.position) {
    pos = [args.position.x, args.position.y];
    const hit = overlapping(ref.graph, lg, pos, size);
    if (hit.length) notes.push(`at the requested position it overlaps node(s) ${hit.map((n) => nodeRef(ref, n)).join(", ")}`);
  } else {
    pos = placeNewNode(app, ref.graph, lg, size, near);
  }

  await recordEdit(app, () => {
    node.pos = pos;
    ref.graph.add(node);
    notes.push(...applyWidgetChanges(app, node, plan.changes));
  });
  const where = editedGraph(app, ref, `${type} was added`);

  return {
    ok: true,
    nodeId: nodeRef(ref, node),
    type,
    graph: where.graph,
    ...(args.title !== undefined ? { title: node.title } : {}),
    pos: [Math.round(node.pos[0]), Math.round(node.pos[1])],
    inputs: linkInputs(node).map(({ slot }) => slotSummary(slot)),
    outputs: (node.outputs ?? []).map(slotSummary),
    widgets: widgetValues(node, "all", 200),
    ...(notes.length || where.notes.length ? { notes: [...where.notes, ...notes] } : {}),
  };
}
