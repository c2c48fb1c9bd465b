// The part of ComfyUI's frontend API the panel uses (checked on ComfyUI frontend 1.27; see
// docs/DESIGN.md §6). Types only: at run time the panel gets `app` from ComfyUI's own
// "../../scripts/app.js" (or from the playground, which serves the same path), and LiteGraph
// from `window.LiteGraph` — the panel never bundles a second LiteGraph.
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

/** The active workflow's undo history: checkState() after an edit makes Ctrl+Z undo it. */
export interface ChangeTracker {
  beforeChange(): void;
  afterChange(): void;
  checkState(): void;
  undo?(): Promise<void> | void;
  redo?(): Promise<void> | void;
}

export interface ComfyExtensionManager {
  toast: { add(message: { severity: string; summary: string; detail?: string; life?: number }): void };
  dialog: {
    confirm(options: { title: string; message: string; type?: string }): Promise<boolean | null>;
  };
  setting: { get(id: string): unknown; set(id: string, value: unknown): Promise<void> | void };
  command: { execute(id: string): Promise<void> | void };
  workflow?: { activeWorkflow?: { changeTracker?: ChangeTracker } | null };
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
  graph: LGraph;
  canvas: LGraphCanvas;
  api: ComfyApi;
  extensionManager: ComfyExtensionManager;
  registerExtension(extension: ComfyExtension): void;
  graphToPrompt(): Promise<ComfyPrompt>;
  loadGraphData(data: unknown, clean?: boolean): Promise<void> | void;
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
