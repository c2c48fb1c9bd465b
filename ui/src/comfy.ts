// The part of ComfyUI's frontend API the panel uses (checked on ComfyUI frontend 1.27.10 and
// 1.58.1; see docs/DESIGN.md §6), and the few accessors that pick the current API where the
// frontend offers it and fall back for 1.27 (feature detection, never version strings). At
// run time the panel gets `app` from ComfyUI's own "../../scripts/app.js" (or from the
// playground, which serves the same path), and LiteGraph from `window.LiteGraph` — the panel
// never bundles a second LiteGraph.
import type { LGraph, LGraphCanvas, LGraphNode } from "@comfyorg/litegraph";

export type { LGraph, LGraphCanvas, LGraphNode };

/** One node definition, as ComfyUI's /api/object_info serves it. */
export interface NodeDef {
  name: string;
  display_name?: string;
  description?: string;
  category?: string;
  python_module?: string;
  output_node?: boolean;
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
  fetchApi(route: string, init?: RequestInit): Promise<Response>;
  addEventListener(type: string, listener: (event: CustomEvent) => void): void;
  removeEventListener(type: string, listener: (event: CustomEvent) => void): void;
}

/** The active workflow's undo history: edits between beforeChange() and the matching
 * afterChange() are one Ctrl+Z step. captureCanvasState() (1.58) replaced checkState() (1.27). */
export interface ChangeTracker {
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
 * such as "Unsaved Workflow.json", unique among the open tabs, the same again after a reload). */
export interface ComfyWorkflow {
  path?: string;
  key?: string;
  filename?: string;
  isTemporary?: boolean;
  changeTracker?: ChangeTracker | null;
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
  /** Pinia's hook on the store's actions (openWorkflow, renameWorkflow, closeWorkflow...);
   * the returned function unsubscribes. `detached` keeps it past any Vue component. */
  $onAction?(callback: (context: ComfyActionContext) => void, detached?: boolean): () => void;
}

export interface BottomPanelTab {
  id: string;
  title: string;
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
  loadGraphData(data: unknown, clean?: boolean): Promise<void> | void;
  lastNodeErrors?: Record<string, unknown> | null;
  lastExecutionError?: Record<string, unknown> | null;
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

/** A workflow's key: the path under workflows/ (a temporary tab's name), else its path. */
export function workflowKey(workflow: ComfyWorkflow | null | undefined): string | undefined {
  const key = workflow?.key ?? workflow?.path;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/** The key of the workflow tab the user is on; undefined without a workflow API (or none open). */
export function activeWorkflowKey(app: ComfyApp): string | undefined {
  return workflowKey(app.extensionManager?.workflow?.activeWorkflow);
}

export type WorkflowChange =
  /** Another tab became active (or the first one opened). */
  | { type: "active"; key: string | undefined }
  /** A workflow got a new key: a temporary tab saved under a path, a file renamed. */
  | { type: "renamed"; from: string; to: string }
  /** A temporary tab was closed unsaved: its key may name another new tab later. */
  | { type: "closed"; key: string };

/**
 * Calls `listener` when the active workflow tab changes, a workflow is renamed, or a temporary
 * one is closed. The workflow store's actions are the events (Pinia's `$onAction`: every tab
 * switch goes through `openWorkflow`, every rename and save-as of a temporary tab through
 * `renameWorkflow`, in 1.27.10 and 1.58.1); a store without the hook is checked every second.
 * No workflow store at all: nothing is ever reported. Returns the unsubscribe function.
 */
export function watchWorkflows(app: ComfyApp, listener: (change: WorkflowChange) => void): () => void {
  const store = app.extensionManager?.workflow;
  if (!store || !("activeWorkflow" in store)) return () => {};
  let active = activeWorkflowKey(app);
  const check = () => {
    const key = activeWorkflowKey(app);
    if (key === active) return;
    active = key;
    listener({ type: "active", key });
  };
  if (typeof store.$onAction !== "function") {
    const timer = setInterval(check, 1000);
    return () => clearInterval(timer);
  }
  return store.$onAction(({ name, args, after }) => {
    const workflow = args[0] as ComfyWorkflow | undefined;
    const before = typeof workflow === "object" && workflow !== null ? workflowKey(workflow) : undefined;
    const temporary = workflow?.isTemporary === true;
    after(() => {
      const now = workflowKey(workflow);
      if (name === "renameWorkflow" && before && now && now !== before) {
        if (active === before) active = now; // the same tab, under its new name
        listener({ type: "renamed", from: before, to: now });
      } else if (name === "closeWorkflow" && temporary && before) {
        listener({ type: "closed", key: before });
      }
      check();
    });
  }, true);
}
