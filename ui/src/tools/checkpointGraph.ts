// The workflow graph as checkpoints and rewinds use it (runtime/checkpoints.ts, runtime/rewind.ts):
// serialized as ComfyUI saves it, and restored into the workflow tab it belongs to as ONE undo
// step, so Ctrl+Z brings the newer graph back.
//
// Restoring goes through the tab's own change tracker, the way its undo restores a state (checked
// in the sources of frontends 1.27.10 and 1.58.1, scripts/changeTracker.ts): the checkpoint is put
// on the undo queue and `undo()` loads it (app.loadGraphData into that workflow, its dialogs off,
// the subgraph the user was in restored when it still exists); the graph it replaced, which undo
// puts on the redo queue, is moved to the undo queue instead. Net effect: one new undo step, the
// redo queue cleared, as any edit does. Without such a tracker the graph is loaded between
// beforeChange() and afterChange().
import {
  captureState,
  changeTracker,
  raw,
  rootGraph,
  workflowKey,
  workflowTitle,
  type ChangeTracker,
  type ComfyApp,
  type ComfyWorkflow,
} from "../host/comfy";
import { THREAD_KEY, withKeyOf } from "../host/threadKeys";

/** How restoring a checkpoint went: restored (in tab `tab`, after switching to it), or its
 * workflow's tab is closed, or it failed. */
export type RestoreOutcome =
  | { ok: true; tab?: string; switched: boolean; unchanged?: boolean }
  | { ok: false; closed: true }
  | { ok: false; error: string };

/** The workflow graph as checkpoints and rewinds use it (workflowAccess below binds it to ComfyUI). */
export interface WorkflowAccess {
  /** The whole workflow as ComfyUI saves it (`rootGraph.serialize()`: subgraphs included). */
  serialize(): unknown;
  /** Restores `graph` into the tab of workflow `key` (the active one for null), as one undo step. */
  restore(key: string | null, graph: unknown): Promise<RestoreOutcome>;
  /** Opens `graph` in a new tab; its name. */
  openInNewTab(graph: unknown): Promise<string | undefined>;
}

/** Two graphs equal but for the view (pan and zoom): nothing to rewind between them. */
export function sameGraph(a: unknown, b: unknown): boolean {
  const text = (value: unknown) => JSON.stringify(value, (key, v: unknown) => (key === "ds" || key === THREAD_KEY ? undefined : v));
  return text(a) === text(b);
}

/** ComfyUI's ChangeTracker.MAX_HISTORY (both frontends). */
const MAX_HISTORY = 50;
const QUIET = { showMissingNodesDialog: false, showMissingModelsDialog: false, checkForRerouteMigration: false };

/** The graph of the workflow the user is on, as ComfyUI serializes it (subgraph definitions
 * included): `app.rootGraph.serialize()`, the state its change tracker and its save keep. */
export function serializeWorkflow(app: ComfyApp): unknown {
  return (rootGraph(app) as { serialize(): unknown }).serialize();
}

type History = ChangeTracker & { undoQueue: unknown[]; redoQueue: unknown[]; undo(): Promise<void> | void };

function hasHistory(tracker: ChangeTracker | undefined): tracker is History {
  const t = tracker as Partial<History> | undefined;
  return !!t && Array.isArray(t.undoQueue) && Array.isArray(t.redoQueue) && typeof t.undo === "function";
}

/** Loads `graph` into the active workflow as one undo step, under the tab's thread key (a graph
 * checkpointed before the tab had one); whether it was loaded. */
async function restoreAsOneStep(app: ComfyApp, checkpoint: unknown): Promise<boolean> {
  // A JSON copy, as ComfyUI's tracker keeps its states: serialize() has keys set to undefined
  // (extra.reroutes) that a JSON copy drops, and 1.27's graphEqual counts keys, so a state kept
  // with them never equals the graph it loads. The next checkState (any mouse-up) then recorded
  // an undo step that changes nothing, and the first Ctrl+Z after "Put the graph back" did nothing.
  const graph = withKeyOf(JSON.parse(JSON.stringify(checkpoint)) as unknown, serializeWorkflow(app));
  const tracker = changeTracker(app);
  if (!hasHistory(tracker)) {
    tracker?.beforeChange();
    try {
      await app.loadGraphData(graph, false, false, app.extensionManager?.workflow?.activeWorkflow ?? null, QUIET);
    } finally {
      tracker?.afterChange();
    }
    return true;
  }
  captureState(tracker); // an edit not recorded yet stays one step back, not lost
  const state = graph;
  const redo = tracker.redoQueue.length;
  tracker.undoQueue.push(state);
  await tracker.undo();
  if (tracker.redoQueue.length !== redo + 1) {
    const left = tracker.undoQueue.lastIndexOf(state);
    if (left >= 0) tracker.undoQueue.splice(left, 1);
    return false;
  }
  tracker.undoQueue.push(tracker.redoQueue.pop());
  while (tracker.undoQueue.length > MAX_HISTORY) tracker.undoQueue.shift();
  tracker.redoQueue.length = 0;
  return true;
}

function openTabs(app: ComfyApp): ComfyWorkflow[] | undefined {
  const store = app.extensionManager?.workflow;
  return store && Array.isArray(store.openWorkflows) ? store.openWorkflows : undefined;
}

/** Shows an open tab, as ComfyUI's workflow service does (its graph loaded into the canvas). */
async function showTab(app: ComfyApp, workflow: ComfyWorkflow): Promise<void> {
  if (workflow.isLoaded === false && typeof workflow.load === "function") await workflow.load();
  const state = raw(workflow.activeState) ?? (workflow.content ? JSON.parse(workflow.content) : null);
  await app.loadGraphData(state, true, true, workflow, QUIET);
}

/**
 * Restores a checkpoint's graph into the tab of workflow `key` (switching to it when another tab
 * is shown; the active one when the key is unknown), as one undo step. A workflow whose tab is
 * closed is not opened here: the outcome says so (openInNewTab does it when the user asks).
 */
export async function restoreWorkflow(app: ComfyApp, key: string | null, graph: unknown): Promise<RestoreOutcome> {
  const tabs = openTabs(app);
  const store = app.extensionManager?.workflow;
  let switched = false;
  if (tabs && key !== null && workflowKey(store?.activeWorkflow) !== key) {
    const target = tabs.find((w) => workflowKey(w) === key);
    if (!target) return { ok: false, closed: true };
    await showTab(app, target);
    if (workflowKey(store?.activeWorkflow) !== key) return { ok: false, error: "ComfyUI did not switch to its tab." };
    switched = true;
  }
  const tab = store?.activeWorkflow ? workflowTitle(store.activeWorkflow) : undefined;
  if (sameGraph(serializeWorkflow(app), graph)) return { ok: true, tab, switched, unchanged: true };
  if (!(await restoreAsOneStep(app, graph))) return { ok: false, error: "ComfyUI could not load the checkpoint's graph." };
  return { ok: true, tab, switched };
}

/** Opens a checkpoint's graph in a new tab (ComfyUI's app.loadGraphData opens one). */
export async function openInNewTab(app: ComfyApp, graph: unknown): Promise<string | undefined> {
  await app.loadGraphData(structuredClone(graph));
  const active = app.extensionManager?.workflow?.activeWorkflow;
  return active ? workflowTitle(active) : undefined;
}

export function workflowAccess(app: ComfyApp): WorkflowAccess {
  return {
    serialize: () => serializeWorkflow(app),
    restore: (key, graph) => restoreWorkflow(app, key, graph),
    openInNewTab: (graph) => openInNewTab(app, graph),
  };
}
