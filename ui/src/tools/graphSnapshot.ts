// The workflow as the user's own edits are told against (tools/handEdits.ts compares two of
// these; the chat store keeps one per thread, taken when the assistant's turn ends). Every level
// of the graph, subgraphs included: per node its id path ("5", "12:5": graphs.ts), type, title,
// mode and widget values by name, and every link by its ends' ids and slot names. Positions and
// sizes are left out: moving or resizing a node is not an edit worth telling the model.
import { activeWorkflowKey, rootGraph, type ComfyApp, type LGraphNode } from "../host/comfy";
import { CONTROL_WIDGET } from "../litegraph/defs";
import { allGraphs, executionId, subgraphOf, viewedRef, type GraphRef, type SubgraphLike } from "./graphs";
import { fromSubgraphInput, graphLinks, nodeById, toSubgraphOutput, type LinkLike } from "./links";
import { valueWidgets, type Widget } from "./widgets";

export type WidgetValue = string | number | boolean;

export interface NodeShot {
  /** The node's type; a subgraph node's is `subgraph "<its name>"` (its type is a UUID). */
  type: string;
  title: string;
  /** LiteGraph's mode: 0 normal, 2 muted ("never"), 4 bypassed. */
  mode: number;
  /** Values a person can set (strings, numbers, booleans), by widget name. */
  widgets: Record<string, WidgetValue>;
  /** Widgets whose value ComfyUI rewrites on every run: their "control after generate" is not
   * "fixed" (a seed set to randomize or increment). */
  auto: string[];
}

/** One link: its origin (a node id, or "12:in" for subgraph 12's inputs) and output slot's
 * name, its target (a node id, or "12:out") and input slot's name. */
export interface LinkShot {
  from: string;
  fromSlot: string;
  to: string;
  toSlot: string;
}

export interface GraphShot {
  /** The workflow tab's key (comfy.ts workflowKey); undefined without ComfyUI's workflow API. */
  workflow: string | undefined;
  nodes: Map<string, NodeShot>;
  links: LinkShot[];
  /** Whether the user was viewing a subgraph: a root node's id then reads "root:5" (graphs.ts). */
  inSubgraph: boolean;
}

/** The graph of the active workflow tab as it is now; null if it cannot be read. */
export function graphShot(app: ComfyApp): GraphShot | null {
  try {
    const levels: GraphRef[] = [{ graph: rootGraph(app), path: "", name: "root" }, ...allGraphs(app)];
    const nodes = new Map<string, NodeShot>();
    const links: LinkShot[] = [];
    for (const ref of levels) {
      for (const node of (ref.graph.nodes ?? []) as LGraphNode[]) nodes.set(executionId(ref, node), nodeShot(node));
      for (const link of graphLinks(ref.graph)) {
        const shot = linkShot(ref, link);
        if (shot) links.push(shot);
      }
    }
    return { workflow: activeWorkflowKey(app), nodes, links, inSubgraph: !!viewedRef(app)?.path };
  } catch (error) {
    console.warn("[comfyui-assistant] the graph could not be read for the user's edits", error);
    return null;
  }
}

function nodeShot(node: LGraphNode): NodeShot {
  const inner = subgraphOf(node);
  const widgets: Record<string, WidgetValue> = {};
  for (const widget of valueWidgets(node)) {
    const value = widget.value;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") widgets[widget.name] = value;
  }
  return {
    type: inner ? `subgraph "${inner.name}"` : String(node.type),
    title: String(node.title ?? ""),
    mode: Number(node.mode ?? 0),
    widgets,
    auto: (node.widgets ?? []).filter((w, i, all) => runControlled(w, all[i + 1])).map((w) => w.name),
  };
}

/** Whether ComfyUI sets `widget` after each run: the "control after generate" combo that
 * follows it (the frontends add it right after its widget and list it in `linkedWidgets`) is
 * not "fixed". */
function runControlled(widget: Widget, next: Widget | undefined): boolean {
  const linked = (widget as { linkedWidgets?: Widget[] }).linkedWidgets ?? [];
  const control = linked.find((w) => w?.name === CONTROL_WIDGET) ?? (next?.name === CONTROL_WIDGET ? next : undefined);
  return control !== undefined && control.value !== "fixed";
}

function linkShot(ref: GraphRef, link: LinkLike): LinkShot | null {
  const sub = ref.path ? (ref.graph as unknown as SubgraphLike) : undefined;
  const origin = fromSubgraphInput(link.origin_id) ? null : nodeById(ref.graph, link.origin_id);
  const target = toSubgraphOutput(link.target_id) ? null : nodeById(ref.graph, link.target_id);
  const from = origin ? executionId(ref, origin) : fromSubgraphInput(link.origin_id) && sub ? `${ref.path}:in` : null;
  const to = target ? executionId(ref, target) : toSubgraphOutput(link.target_id) && sub ? `${ref.path}:out` : null;
  if (from === null || to === null) return null; // a link to a node that is not there
  const fromSlot = origin ? origin.outputs?.[link.origin_slot]?.name : sub?.inputs[link.origin_slot]?.name;
  const toSlot = target ? target.inputs?.[link.target_slot]?.name : sub?.outputs[link.target_slot]?.name;
  return { from, fromSlot: fromSlot ?? String(link.origin_slot), to, toSlot: toSlot ?? String(link.target_slot) };
}
