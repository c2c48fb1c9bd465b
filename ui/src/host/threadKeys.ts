// Each workflow tab's thread key: an id of our own kept in the workflow JSON
// (`extra.comfyui_assistant_thread_key`), which ComfyUI saves and restores with the graph. Not the
// workflow's `id`: ComfyUI's templates carry fixed ids and many share one (in
// comfyui-workflow-templates 0.1.95, 99 of the 154 templates with an id share 26 ids), so two
// template tabs would be one "workflow". A graph gets a key as it loads (the `beforeConfigureGraph`
// hook, before ComfyUI configures it: so the tab's first state and what the frontend stores for
// a reload hold it), else when its tab is first seen active; a tab whose key another open tab
// holds (a duplicated tab, a file opened again) gets a fresh one. Writing it is not an edit:
// ComfyUI's change tracker compares `extra` (all but `ds`), so the key goes into the tracker's
// states as well as the graph — no undo step, the tab not marked modified.

export const THREAD_KEY = "comfyui_assistant_thread_key";

type Extra = Record<string, unknown>;
type State = { extra?: Extra | null } | null | undefined;

/** The change tracker's states, as ComfyUI's ChangeTracker keeps them (1.27.10 and 1.58.1). */
interface TrackerStates {
  initialState?: unknown;
  activeState?: unknown;
  undoQueue?: unknown[];
  redoQueue?: unknown[];
}

const validKey = (key: unknown): key is string => typeof key === "string" && /^[\w-]{1,64}$/.test(key);

/** The thread key a workflow JSON (or a graph, whose `extra` it serialises) holds. */
export function keyIn(state: unknown): string | undefined {
  const key = (state as State)?.extra?.[THREAD_KEY];
  return validKey(key) ? key : undefined;
}

export function newThreadKey(): string {
  return crypto.randomUUID();
}

/**
 * For `beforeConfigureGraph`: a graph loaded without a key gets one, in the data ComfyUI is
 * about to configure (its own copy), so the tab starts with it. A key it has stays (a tab
 * shown again, an undo, a restored or saved workflow); a copy is told apart when its tab is
 * seen (`ensureThreadKey`).
 */
export function keyLoadedGraph(data: unknown): void {
  if (typeof data !== "object" || data === null || keyIn(data)) return;
  const graph = data as { extra?: unknown };
  if (typeof graph.extra !== "object" || graph.extra === null || Array.isArray(graph.extra)) graph.extra = {};
  (graph.extra as Extra)[THREAD_KEY] = newThreadKey();
}

/** Write `key` into a graph's `extra` (the graph shown, or one of its tracker's states). */
function writeKey(state: unknown, key: string): void {
  if (typeof state !== "object" || state === null) return;
  const holder = state as { extra?: unknown };
  if (typeof holder.extra !== "object" || holder.extra === null) holder.extra = {};
  (holder.extra as Extra)[THREAD_KEY] = key;
}

/**
 * The active tab's thread key, written where it is missing or taken: into the graph shown and
 * every state of the tab's tracker (as it was opened, as it is, its undo and redo steps), so
 * that comparing them finds no change. `others`: the other open tabs' keys.
 */
export function ensureThreadKey(graph: unknown, workflow: { changeTracker?: unknown }, others: ReadonlySet<string>): string | undefined {
  if (typeof graph !== "object" || graph === null) return undefined;
  const tracker = (workflow.changeTracker ?? null) as TrackerStates | null;
  const current = keyIn(graph) ?? keyIn(tracker?.activeState);
  const key = current && !others.has(current) ? current : newThreadKey();
  const states = [graph, tracker?.initialState, tracker?.activeState, ...(tracker?.undoQueue ?? []), ...(tracker?.redoQueue ?? [])];
  for (const state of states) if (keyIn(state) !== key) writeKey(state, key);
  return key;
}

/** `graph` (a copy) with the thread key of `from` (the tab it is restored into), or as it is
 * when `from` has none: a graph an earlier checkpoint holds keeps the tab's key. */
export function withKeyOf<T>(graph: T, from: unknown): T {
  const key = keyIn(from);
  if (key && keyIn(graph) !== key) writeKey(graph, key);
  return graph;
}
