// The part of ComfyUI's frontend API the panel uses (checked on ComfyUI frontend 1.27.10 and
// 1.58.1; see docs/DESIGN.md §6), and the few accessors that pick the current API where the
// frontend offers it and fall back for 1.27 (feature detection, never version strings). At
// run time the panel gets `app` from ComfyUI's own "../../scripts/app.js" (or from the
// playground, which serves the same path), and LiteGraph from `window.LiteGraph` — the panel
// never bundles a second LiteGraph.
import type { LGraph, LGraphCanvas, LGraphNode } from "@comfyorg/litegraph";
import { ensureThreadKey, keyIn, keyLoadedGraph } from "./threadKeys";

export type { LGraph, LGraphCanvas, LGraphNode };

/** One node definition, as ComfyUI's /api/object_info serves it. */
export interface NodeDef {
  name: string;
  display_name?: string;
  description?: string;
  category?: string;
  python_module?: string;
  output_node?: boolean;
  /** A node that calls a paid API (ComfyUI's partner nodes), charged in ComfyUI credits. */
  api_node?: boolean;
  input: {
    required?: Record<string, [unknown, Record<string, unknown>?]>;
    optional?: Record<string, [unknown, Record<string, unknown>?]>;
    hidden?: Record<string, unknown>;
  };
  input_order?: { required?: string[]; optional?: string[] };
  output?: string[];
  output_name?: string[];
  output_is_list?: boolean[];
}

export interface ComfyApi {
  clientId?: string;
  /** The user `fetchApi` names in its `Comfy-User` header ("" until a multi-user login). */
  user?: string;
  fetchApi(route: string, init?: RequestInit): Promise<Response>;
  /** The URL of an api route under the frontend's base path ("/view?…" -> "/api/view?…"). */
  apiURL(route: string): string;
  /** The URL of a file ComfyUI serves under the frontend's base path ("/templates/x.json"). */
  fileURL?(route: string): string;
  addEventListener(type: string, listener: (event: CustomEvent) => void): void;
  removeEventListener(type: string, listener: (event: CustomEvent) => void): void;
}

/** The active workflow's undo history: edits between beforeChange() and the matching
 * afterChange() are one Ctrl+Z step. captureCanvasState() (1.58) replaced checkState() (1.27). */
export interface ChangeTracker {
  /** The graph as last recorded: a new value after each recorded change. */
  activeState?: unknown;
  beforeChange(): void;
  afterChange(): void;
  captureCanvasState?(): void;
  checkState?(): void;
  undo?(): Promise<void> | void;
  redo?(): Promise<void> | void;
}

type ToastKind = "success" | "error" | "info" | "warning";

/** 1.27 has add() only; newer frontends add one method per kind and deprecate add(). */
export type ComfyToast = { add(message: { severity: string; summary: string; detail?: string; life?: number }): void } & Partial<
  Record<ToastKind, (summary: string, options?: { description?: string; duration?: number }) => void>
>;

export interface ComfyExtensionManager {
  toast: ComfyToast;
  dialog: {
    confirm(options: { title: string; message: string; type?: string }): Promise<boolean | null>;
  };
  setting: { get(id: string): unknown; set(id: string, value: unknown): Promise<void> | void };
  command: { execute(id: string): Promise<void> | void };
  workflow?: ComfyWorkflowStore;
  /** The last run's errors (newer frontends; 1.27 has them on `app`). */
  lastNodeErrors?: Record<string, unknown> | null;
  lastExecutionError?: Record<string, unknown> | null;
}

/** One workflow tab (ComfyWorkflow in both frontends): `path` is "workflows/<key>"; `key` the
 * path under workflows/ ("portraits/flux.json"); a tab never saved is temporary (its key a name
 * such as "Unsaved Workflow.json", unique among the open tabs only: ComfyUI gives it again). */
export interface ComfyWorkflow {
  path?: string;
  key?: string;
  filename?: string;
  isTemporary?: boolean;
  /** Whether it differs from its file (a saved one) or from how it was opened. */
  isModified?: boolean;
  changeTracker?: ChangeTracker | null;
  /** The graph as the tab's tracker holds it now, and as it was opened (the workflow JSON). */
  activeState?: { id?: unknown; extra?: unknown } | null;
  initialState?: { id?: unknown; extra?: unknown } | null;
  /** The workflow JSON as text: what a tab not loaded yet holds. */
  content?: string | null;
  /** Whether its content was read (a saved tab restored after a reload may not be yet). */
  isLoaded?: boolean;
  load?(): Promise<unknown>;
}

/** What Pinia passes an action hook: the action's name and arguments, and `after(callback)`,
 * called once the action (and the promise it returned) completed. */
export interface ComfyActionContext {
  name: string;
  args: unknown[];
  after(callback: (result: unknown) => void): void;
}

/** The workflow tabs: ComfyUI's Pinia workflow store (`useWorkflowStore()`, 1.27.10 and 1.58.1). */
export interface ComfyWorkflowStore {
  activeWorkflow?: ComfyWorkflow | null;
  openWorkflows?: ComfyWorkflow[];
  /** Pinia's hook on the store's actions (openWorkflow, renameWorkflow, closeWorkflow...);
   * the returned function unsubscribes. `detached` keeps it past any Vue component. */
  $onAction?(callback: (context: ComfyActionContext) => void, detached?: boolean): () => void;
}

export interface BottomPanelTab {
  id: string;
  title: string;
  /** A key of ComfyUI's own i18n messages, shown instead of `title` where the frontend has it. */
  titleKey?: string;
  type: "custom";
  render(element: HTMLElement): void;
  destroy?(): void;
}

export interface ComfyCommand {
  id: string;
  label: string;
  icon?: string;
  function: () => void | Promise<void>;
}

export interface ComfyKeybinding {
  combo: { key: string; ctrl?: boolean; alt?: boolean; shift?: boolean };
  commandId: string;
}

export interface ComfyExtension {
  name: string;
  bottomPanelTabs?: BottomPanelTab[];
  commands?: ComfyCommand[];
  keybindings?: ComfyKeybinding[];
  setup?(app: ComfyApp): void | Promise<void>;
  /** Called with the workflow JSON app.loadGraphData is about to configure (its own copy). */
  beforeConfigureGraph?(graphData: unknown, missingNodeTypes: unknown[]): void | Promise<void>;
}

export interface ComfyPrompt {
  output: Record<string, { class_type: string; inputs: Record<string, unknown> }>;
  workflow: unknown;
}

export interface ComfyApp {
  /** The whole workflow (newer frontends); 1.27 has only the deprecated `graph`. */
  rootGraph?: LGraph;
  graph: LGraph;
  /** `canvas.graph` is the level the user is viewing: a subgraph while one is open. */
  canvas: LGraphCanvas;
  api: ComfyApi;
  extensionManager: ComfyExtensionManager;
  registerExtension(extension: ComfyExtension): void;
  graphToPrompt(): Promise<ComfyPrompt>;
  /** Loads a workflow: into a new tab, or with `workflow` (an open tab) into that tab — how
   * ComfyUI's workflow service switches tabs and its undo restores a state. */
  loadGraphData(
    data: unknown,
    clean?: boolean,
    restoreView?: boolean,
    workflow?: ComfyWorkflow | string | null,
    options?: { showMissingNodesDialog?: boolean; showMissingModelsDialog?: boolean; checkForRerouteMigration?: boolean },
  ): Promise<unknown> | void;
  lastNodeErrors?: Record<string, unknown> | null;
  lastExecutionError?: Record<string, unknown> | null;
  /** The settings dialog: both frontends send each setting change on it as `<id>.change`. */
  ui?: { settings?: EventTarget };
}

/** LiteGraph's global, as ComfyUI exposes it on window. */
export interface LiteGraphGlobal {
  createNode(type: string, title?: string): LGraphNode | null;
  registered_node_types: Record<string, { nodeData?: NodeDef } & (new (...args: never[]) => unknown)>;
}

export function liteGraph(): LiteGraphGlobal {
  const global = (globalThis as { LiteGraph?: LiteGraphGlobal }).LiteGraph;
  if (!global) throw new Error("LiteGraph is not loaded on this page");
  return global;
}

/** The whole workflow: `app.rootGraph`, else (1.27) `app.graph`. */
export function rootGraph(app: ComfyApp): LGraph {
  return app.rootGraph ?? app.graph;
}

/** The graph level the user is looking at: the open subgraph, else the root graph. */
export function viewedGraph(app: ComfyApp): LGraph {
  return (app.canvas as { graph?: LGraph | null } | undefined)?.graph ?? rootGraph(app);
}

/** The active workflow's change tracker, if the frontend has one. */
export function changeTracker(app: ComfyApp): ChangeTracker | undefined {
  return app.extensionManager?.workflow?.activeWorkflow?.changeTracker ?? undefined;
}

/** Records the graph as it is now as an undo step (captureCanvasState, else checkState). */
export function captureState(tracker: ChangeTracker | undefined): void {
  if (typeof tracker?.captureCanvasState === "function") tracker.captureCanvasState();
  else tracker?.checkState?.();
}

/** Shows a toast: the per-kind method where the frontend has it, else toast.add(). */
export function showToast(app: ComfyApp, kind: ToastKind, summary: string, detail?: string, life = 5000): void {
  const toast = app.extensionManager?.toast;
  const method = toast?.[kind];
  if (typeof method === "function") method.call(toast, summary, { description: detail, duration: life });
  else toast?.add?.({ severity: kind === "warning" ? "warn" : kind, summary, detail, life });
}

/** The last run's node errors and execution error, from the extension manager, else (1.27) the app. */
export function lastRunErrors(app: ComfyApp): { nodeErrors: Record<string, unknown> | null; executionError: Record<string, unknown> | null } {
  const manager = app.extensionManager;
  const from = manager && ("lastNodeErrors" in manager || "lastExecutionError" in manager) ? manager : app;
  return { nodeErrors: from.lastNodeErrors ?? null, executionError: from.lastExecutionError ?? null };
}

/** The start of an unsaved workflow's key; the rest is its thread key (threadKeys.ts). */
export const UNSAVED = "unsaved:";
const ZERO_UUID = "00000000-0000-0000-0000-000000000000";

/**
 * The workflow JSON a tab holds: its tracker's state, else (a tab not loaded yet) its text,
 * read once per text — the store's actions come often (1.58 runs isActive per tab as it draws
 * them).
 */
function statesOf(workflow: ComfyWorkflow): unknown[] {
  const states: unknown[] = [workflow.activeState, workflow.initialState];
  const content = workflow.content;
  if (typeof content !== "string") return states;
  const known = parsed.get(raw(workflow));
  if (known?.content === content) return [...states, known.json];
  let json: unknown;
  try {
    json = JSON.parse(content) as unknown;
  } catch {
    json = undefined;
  }
  parsed.set(raw(workflow), { content, json });
  return [...states, json];
}

const parsed = new WeakMap<object, { content: string; json: unknown }>();

/**
 * The id of a workflow's graph: the `id` (a UUID) of its workflow JSON. The frontend gives each
 * new graph one (a blank tab, the default workflow, a loaded file keeps its own: templates share
 * theirs) and keeps it with the tab's state across tab switches and reloads.
 */
export function graphIdOf(workflow: ComfyWorkflow): string | undefined {
  for (const state of statesOf(workflow)) {
    const id = (state as { id?: unknown } | null | undefined)?.id;
    if (typeof id === "string" && id !== "" && id !== ZERO_UUID) return id;
  }
  return undefined;
}

/** A tab's thread key, as its workflow JSON keeps it (threadKeys.ts); none until it was seen. */
export function threadKeyOf(workflow: ComfyWorkflow): string | undefined {
  for (const state of statesOf(workflow)) {
    const key = keyIn(state);
    if (key) return key;
  }
  return undefined;
}

/**
 * A workflow's key, which its threads are bound to: a saved workflow's path under workflows/
 * ("portraits/flux.json"); an unsaved one's thread key ("unsaved:<uuid>"), not its name, which
 * ComfyUI gives to other new tabs later ("Unsaved Workflow.json"), nor its graph id, which
 * templates share.
 */
export function workflowKey(workflow: ComfyWorkflow | null | undefined): string | undefined {
  if (!workflow) return undefined;
  if (workflow.isTemporary === true) {
    const key = threadKeyOf(workflow);
    return key ? `${UNSAVED}${key}` : undefined;
  }
  const key = workflow.key ?? workflow.path;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/**
 * Gives the active tab its thread key where it has none or another open tab has the same (a
 * duplicated tab, a file opened twice): call only once the tab's graph is the one shown (after
 * the store's openWorkflow).
 */
export function keyActiveTab(app: ComfyApp): void {
  const store = app.extensionManager?.workflow;
  const active = store?.activeWorkflow;
  if (!active || active.isTemporary !== true) return;
  const others = new Set<string>();
  for (const workflow of Array.isArray(store.openWorkflows) ? store.openWorkflows : []) {
    const key = raw(workflow) === raw(active) ? undefined : threadKeyOf(workflow);
    if (key) others.add(key);
  }
  ensureThreadKey(rootGraph(app), raw(active), others);
}

/**
 * For `beforeConfigureGraph`: a graph ComfyUI loads without a thread key gets one. When it is an
 * open tab's state, shown again (a tab that had none: opened before this extension), the key goes
 * into that tab's tracker states too — ComfyUI resets the tracker to the graph it loaded.
 */
export function keyGraphToLoad(app: ComfyApp, data: unknown): void {
  if (typeof data !== "object" || data === null || keyIn(data)) return;
  const store = app.extensionManager?.workflow;
  const text = JSON.stringify(data);
  const tabs = Array.isArray(store?.openWorkflows) ? store.openWorkflows : [];
  const tab = tabs.find((w) => w.activeState && !keyIn(w.activeState) && JSON.stringify(raw(w.activeState)) === text);
  if (tab) ensureThreadKey(data, raw(tab), new Set());
  else keyLoadedGraph(data);
}

/** The name a tab shows ("Unsaved Workflow (2)", "flux"). */
export function workflowTitle(workflow: ComfyWorkflow): string | undefined {
  const name = workflow.filename ?? (workflow.key ?? workflow.path)?.split("/").pop()?.replace(/\.json$/i, "");
  return name || undefined;
}

/** The open tabs' names by key (ComfyUI's `openWorkflows`; the active one where it has no list). */
export function openWorkflowTitles(app: ComfyApp): Map<string, string> {
  const store = app.extensionManager?.workflow;
  const open = [...(Array.isArray(store?.openWorkflows) ? store.openWorkflows : []), store?.activeWorkflow];
  const titles = new Map<string, string>();
  for (const workflow of open) {
    const key = workflowKey(workflow);
    const title = workflow ? workflowTitle(workflow) : undefined;
    if (key && title) titles.set(key, title);
  }
  return titles;
}

/** The graph id of the workflow tab the user is on (graphIdOf). */
export function activeGraphId(app: ComfyApp): string | undefined {
  const active = app.extensionManager?.workflow?.activeWorkflow;
  return active ? graphIdOf(active) : undefined;
}

/** The key of the workflow tab the user is on; undefined without a workflow API (or none open). */
export function activeWorkflowKey(app: ComfyApp): string | undefined {
  return workflowKey(app.extensionManager?.workflow?.activeWorkflow);
}

const SAVED_FOLDER = "workflows/";

/** The saved workflows' keys among the entries of ComfyUI's GET /v2/userdata (the user's whole
 * folder, walked: `{path, type}` each, `path` from the user's folder). */
function savedAmong(entries: unknown): Set<string> | undefined {
  if (!Array.isArray(entries)) return undefined;
  const files = entries.filter((e): e is { path: string } => e?.type === "file" && typeof e.path === "string" && e.path.startsWith(SAVED_FOLDER));
  return new Set(files.map((e) => e.path.slice(SAVED_FOLDER.length)));
}

/**
 * The keys of the saved workflows (paths under workflows/), or undefined when they cannot be
 * read. Asked of the user's whole folder (GET /v2/userdata, ComfyUI 0.3.31+), which answers []
 * for a new user where /userdata?dir=workflows answers 404 (a console error on every page load
 * until the user saves a workflow); that one only on a ComfyUI without /v2/userdata.
 */
export async function savedWorkflowKeys(app: ComfyApp): Promise<Set<string> | undefined> {
  try {
    const response = await app.api.fetchApi("/v2/userdata");
    if (response.ok) return savedAmong(await response.json());
    if (response.status !== 404 && response.status !== 405) return undefined;
    const old = await app.api.fetchApi("/userdata?dir=workflows&recurse=true&split=false&full_info=false");
    if (old.status === 404) return new Set(); // (no workflows folder: none saved)
    if (!old.ok) return undefined;
    const paths = (await old.json()) as unknown;
    return Array.isArray(paths) ? new Set(paths.filter((p): p is string => typeof p === "string")) : undefined;
  } catch {
    return undefined;
  }
}

export type WorkflowChange =
  /** Another tab became active (or the first one opened). */
  | { type: "active"; key: string | undefined }
  /** A workflow got a new key: an unsaved one saved under a path, a file renamed. */
  | { type: "renamed"; from: string; to: string }
  /** An unsaved tab was closed: its graph is gone. */
  | { type: "closed"; key: string };

function asWorkflow(value: unknown): ComfyWorkflow | undefined {
  return typeof value === "object" && value !== null && ("path" in value || "key" in value) ? (value as ComfyWorkflow) : undefined;
}

/**
 * Calls `listener` when the active workflow tab changes, a workflow gets a new key, or an
 * unsaved one is closed. The workflow store's actions are the events (Pinia's `$onAction`:
 * every tab switch goes through `openWorkflow`, a rename through `renameWorkflow`, and an
 * unsaved tab saved under a name through `renameWorkflow` then `saveWorkflow`, which makes it a
 * saved one — the same object, a new key; in 1.27.10 and 1.58.1): any action given a workflow
 * whose key it changed reports a rename, and so does the active tab found under a new key (1.58
 * runs `isActive` inside `saveWorkflow`, whose hook sees the new key before saveWorkflow's does).
 * A store without the hook is checked every second. No
 * workflow store at all: nothing is ever reported. Returns the unsubscribe function.
 */
export function watchWorkflows(app: ComfyApp, listener: (change: WorkflowChange) => void): () => void {
  const store = app.extensionManager?.workflow;
  if (!store || !("activeWorkflow" in store)) return () => {};
  keyActiveTab(app);
  let active = activeWorkflowKey(app);
  let shown = raw(store.activeWorkflow);
  const reported = new Map<string, string>(); // renames told already: from -> to
  const renamed = (from: string, to: string) => {
    if (reported.get(from) === to) return;
    reported.set(from, to);
    if (active === from) active = to; // the same tab, under its new key
    listener({ type: "renamed", from, to });
  };
  const check = () => {
    const key = activeWorkflowKey(app);
    const workflow = raw(store.activeWorkflow);
    if (key !== active && workflow && workflow === shown && active && key) renamed(active, key); // saved in place
    shown = workflow;
    if (key === active) return;
    active = key;
    listener({ type: "active", key });
  };
  if (typeof store.$onAction !== "function") {
    const timer = setInterval(() => {
      if (raw(store.activeWorkflow) !== shown) keyActiveTab(app);
      check();
    }, 1000);
    return () => clearInterval(timer);
  }
  return store.$onAction(({ name, args, after }) => {
    const workflow = asWorkflow(args[0]);
    const before = workflowKey(workflow);
    const temporary = workflow?.isTemporary === true;
    after(() => {
      const now = workflowKey(workflow);
      if (before && now && now !== before) renamed(before, now);
      else if (name === "closeWorkflow" && temporary && before) listener({ type: "closed", key: before });
      // The tab opened shows its graph now: it gets its thread key (a copy a fresh one).
      if (name === "openWorkflow") keyActiveTab(app);
      check();
    });
  }, true);
}

/** The object behind a Vue reactive proxy (Pinia's store hands out proxies; actions may get either). */
export function raw<T>(value: T): T {
  return ((value as { __v_raw?: T } | null | undefined)?.__v_raw ?? value) as T;
}
