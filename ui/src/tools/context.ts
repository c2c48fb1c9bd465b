// Shared plumbing of the graph tools: results, expected failures, undo recording, redraw, and
// "did you mean" suggestions. Which graph and which node an id names: graphs.ts.
import { changeTracker, rootGraph, type ComfyApp, type LGraphNode, type LiteGraphGlobal } from "../host/comfy";
import type { Approve } from "./approvals";

export { ToolError } from "./toolError";

/** What every panel tool returns: JSON-serialisable, never thrown. */
export type ToolResult =
  | ({ ok: true } & Record<string, unknown>)
  | ({ ok: false; error: string } & Record<string, unknown>);

export interface ToolContext {
  app: ComfyApp;
  lg: LiteGraphGlobal;
  /** Hears a long call's progress (a run's node and step), for its card. */
  progress?: (update: Record<string, unknown>) => void;
  /** Aborted when the user stops waiting for a long call (a run goes on without us). */
  detach?: AbortSignal;
  /** Asks the user before an action that destroys work or costs money (tools/approvals.ts). */
  approve?: Approve;
}

export type NodeId = number | string;

/** The ids the model knows nodes by ("12:5" inside subgraph node 12), as graphs.ts named them. */
const modelIds = new WeakMap<object, NodeId>();

export function rememberId(node: object, id: NodeId): void {
  modelIds.set(node, id);
}

/** A node's type for the model: the subgraph's name for a subgraph node (its type is a UUID). */
export function typeName(node: LGraphNode): string {
  const inner = node as LGraphNode & { isSubgraphNode?: () => boolean; subgraph?: { name?: string } };
  return (typeof inner.isSubgraphNode === "function" && inner.isSubgraphNode() && inner.subgraph?.name) || node.type;
}

/** "KSampler#3", "KSampler#12:5": how nodes are named in messages to the model ("KSampler" before it is added). */
export function nodeLabel(node: LGraphNode): string {
  // -1: not added yet (a number up to about 1.48, "-1" since).
  if (node.id === null || node.id === undefined || String(node.id) === "-1") return typeName(node);
  return `${typeName(node)}#${modelIds.get(node) ?? node.id}`;
}

/** Node ids as the model sees them: numbers where they are numeric. */
export function publicId(id: unknown): NodeId {
  if (typeof id === "number") return id;
  const text = String(id);
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

/** Up to `max` items joined with ", ", then "… and N more". */
export function listText(items: readonly unknown[], max = 30): string {
  const shown = items.slice(0, max).map(String).join(", ");
  return items.length > max ? `${shown} … and ${items.length - max} more` : shown;
}

/** Asks the canvas to redraw (foreground and background). */
export function redraw(app: ComfyApp): void {
  rootGraph(app)?.setDirtyCanvas?.(true, true);
  (app.canvas as { setDirty?: (fg: boolean, bg?: boolean) => void } | undefined)?.setDirty?.(true, true);
}

/**
 * Runs one edit as one undo step: between the active change tracker's beforeChange() and
 * afterChange() (the closing afterChange records the state, on 1.27 and on newer frontends),
 * then redraws. The tracker is closed even if the edit throws.
 */
export async function recordEdit<T>(app: ComfyApp, edit: () => T | Promise<T>): Promise<T> {
  const tracker = changeTracker(app);
  tracker?.beforeChange();
  try {
    return await edit();
  } finally {
    tracker?.afterChange();
    redraw(app);
  }
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, "");
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The `max` candidates closest to `query`: equal ignoring case and punctuation first, then
 * containing it (or making up at least half of it), then by edit distance, less for a shared prefix;
 * beyond the containing ones, only those close to the query and not much worse than the best. `aliases` are other names a
 * candidate answers to (e.g. display names).
 */
export function closest(
  query: string,
  candidates: readonly string[],
  max = 5,
  aliases: (candidate: string) => readonly string[] = () => [],
): string[] {
  const q = normalise(query);
  if (!q) return [];
  const score = (name: string): number => {
    let best = Infinity;
    for (const form of [name, ...aliases(name)]) {
      const n = normalise(form);
      if (!n) continue;
      let s: number;
      if (n === q) s = 0;
      else if (n.includes(q) || (q.includes(n) && n.length * 2 >= q.length)) s = 1 + Math.abs(n.length - q.length) / 100;
      else {
        let prefix = 0;
        while (prefix < q.length && q[prefix] === n[prefix]) prefix++;
        s = 2 + editDistance(q, n) / Math.max(q.length, n.length) - (0.5 * prefix) / q.length;
      }
      best = Math.min(best, s);
    }
    return best;
  };
  const scored = candidates.map((name) => ({ name, s: score(name) })).sort((a, b) => a.s - b.s || a.name.localeCompare(b.name));
  // Containing matches always count; others only when close and not much worse than the best.
  const cutoff = Math.max(2, Math.min(2.5, (scored[0]?.s ?? 0) + 0.5));
  return scored
    .filter((c) => c.s < cutoff)
    .slice(0, max)
    .map((c) => c.name);
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
}
