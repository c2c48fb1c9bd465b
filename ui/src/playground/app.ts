// `window.app` for the playground: the subset of ComfyUI's app object the panel and its tools use
// (see ../host/comfy.ts), over a real LiteGraph graph and canvas.
import { LGraph, LGraphCanvas, LiteGraph, SubgraphNode } from "@comfyorg/litegraph";
import type { ComfyApp, ComfyExtension, ComfyPrompt } from "../host/comfy";
import { registerSubgraphTypes } from "../litegraph/subgraphs";
import { THREAD_KEY } from "../host/threadKeys";
import { PlaygroundApi } from "./api";
import { BottomPanel } from "./bottomPanel";
import type { PlaygroundChangeTracker } from "./changeTracker";
import { graphToPrompt } from "./graphToPrompt";
import type { NodeDefs } from "./nodeDefs";
import { QueueSimulator } from "./simulator";
import { PlaygroundWorkflows } from "./workflows";
import { Commands, extensionManager, Settings, Toasts } from "./workspace";

export interface PlaygroundElements {
  canvas: HTMLCanvasElement;
  bottom: HTMLElement;
  toasts: HTMLElement;
  /** Where the workflow tabs are drawn. */
  tabs?: HTMLElement | null;
}

/**
 * The first tab's graph id and thread key. ComfyUI gives a new graph a random id (LGraph starts
 * with zeros) and restores the graph it showed after a reload, id and `extra` (the panel's thread
 * key, ui/src/host/threadKeys.ts) included; the playground rebuilds the same default graph each time,
 * so it keeps those two across reloads (localStorage): the key as the page goes, while the first
 * graph is the one shown.
 */
function keepFirstGraph(graph: LGraph): void {
  const store = "cua-playground-graph";
  try {
    const kept = JSON.parse(localStorage.getItem(store) ?? "null") as { id?: string; key?: string } | null;
    graph.id = kept?.id ?? crypto.randomUUID();
    if (kept?.key) graph.extra = { ...graph.extra, [THREAD_KEY]: kept.key };
    const id = graph.id;
    const save = () => {
      if (graph.id !== id) return;
      const key = (graph.extra as Record<string, unknown> | undefined)?.[THREAD_KEY];
      localStorage.setItem(store, JSON.stringify({ id, key: typeof key === "string" ? key : kept?.key }));
    };
    save();
    addEventListener("pagehide", save);
  } catch {
    graph.id = crypto.randomUUID();
  }
}

export class PlaygroundApp implements ComfyApp {
  readonly graph: LGraph;
  readonly canvas: LGraphCanvas;
  readonly api = new PlaygroundApi();
  readonly extensions: ComfyExtension[] = [];
  readonly bottomPanel: BottomPanel;
  readonly workflows: PlaygroundWorkflows;
  readonly extensionManager;
  /** The settings dialog's events, as in ComfyUI (`ui.settings` sends `<id>.change`). */
  readonly ui: { settings: Settings };
  nodeDefs: NodeDefs = {};
  /** True once node types, the default workflow and the extensions are loaded. */
  ready = false;
  private setUp = new Set<ComfyExtension>();

  constructor(elements: PlaygroundElements) {
    this.graph = new LGraph();
    keepFirstGraph(this.graph);
    registerSubgraphTypes(LiteGraph, SubgraphNode, this.graph); // workflows with subgraphs load as in ComfyUI
    this.canvas = new LGraphCanvas(elements.canvas, this.graph);
    this.canvas.show_info = false;
    this.canvas.render_canvas_border = false;
    this.workflows = new PlaygroundWorkflows(
      { serialize: () => this.graph.serialize(), load: (state) => this.showGraph(state) },
      elements.tabs,
    );
    const command = new Commands();
    const setting = new Settings();
    this.ui = { settings: setting };
    this.extensionManager = extensionManager({
      toast: new Toasts(elements.toasts),
      setting,
      command,
      workflow: this.workflows,
    });
    this.bottomPanel = new BottomPanel(elements.bottom);
    this.bottomPanel.onLayout = () => requestAnimationFrame(() => this.resizeCanvas());
    this.api.simulator = new QueueSimulator(
      () => this.nodeDefs,
      (type, detail) => this.api.dispatchCustomEvent(type, detail),
    );
    const builtins: [string, string, () => unknown][] = [
      ["Comfy.Undo", "Undo", () => this.changeTracker.undo()],
      ["Comfy.Redo", "Redo", () => this.changeTracker.redo()],
      ["Comfy.QueuePrompt", "Queue Prompt (simulated)", () => this.queuePrompt(0)],
      ["Comfy.Canvas.FitView", "Fit view to selection", () => this.fitView()],
      ["Workspace.ToggleBottomPanel", "Toggle Bottom Panel", () => this.bottomPanel.togglePanel()],
      ["Comfy.NewBlankWorkflow", "New Blank Workflow", () => this.workflows.newBlank()],
      ["Workspace.NextOpenedWorkflow", "Next Opened Workflow", () => this.workflows.cycle(1)],
      ["Workspace.PreviousOpenedWorkflow", "Previous Opened Workflow", () => this.workflows.cycle(-1)],
    ];
    for (const [id, label, run] of builtins) command.register({ id, label, function: async () => void (await run()) });
  }

  /** The active workflow tab's undo history. */
  get changeTracker(): PlaygroundChangeTracker {
    const active = this.workflows.activeWorkflow;
    if (!active) throw new Error("the playground has no workflow tab open");
    return active.changeTracker;
  }

  registerExtension(extension: ComfyExtension): void {
    if (!extension?.name) throw new Error("Extensions must have a 'name' property.");
    if (this.extensions.some((e) => e.name === extension.name)) {
      throw new Error(`Extension named '${extension.name}' already registered.`);
    }
    this.extensions.push(extension);
    for (const command of extension.commands ?? []) this.extensionManager.command.register(command);
    for (const tab of extension.bottomPanelTabs ?? []) {
      this.extensionManager.command.register({
        id: `Workspace.ToggleBottomPanelTab.${tab.id}`,
        label: `Toggle ${tab.title} Bottom Panel`,
        function: () => this.bottomPanel.toggle(tab.id),
      });
      this.bottomPanel.add(tab);
    }
    if (this.ready) void this.runSetup(extension);
  }

  /** ComfyUI calls setup() on every extension once the app is up. */
  async runSetup(extension: ComfyExtension): Promise<void> {
    if (this.setUp.has(extension)) return;
    this.setUp.add(extension);
    try {
      await extension.setup?.(this);
    } catch (error) {
      console.error(`Error in extension ${extension.name} setup`, error);
    }
  }

  async graphToPrompt(): Promise<ComfyPrompt> {
    return graphToPrompt(this.graph);
  }

  /** ComfyUI's app.loadGraphData: the workflow opens in a new tab (named as ComfyUI names one,
   * "Unsaved Workflow (2)"), or given a name (a template's), under that name; the tab the user
   * was on keeps its graph. Given one of the open tabs (`workflow`), into that tab instead (how
   * ComfyUI's workflow service switches tabs). */
  async loadGraphData(data: unknown, _clean = true, _restoreView = true, workflow: unknown = null): Promise<void> {
    // As ComfyUI: the extensions' beforeConfigureGraph sees (and may change) its own copy first.
    if (data !== null && data !== undefined) data = structuredClone(data);
    for (const extension of this.extensions) await extension.beforeConfigureGraph?.(data, []);
    const tab = this.workflows.openWorkflows.find((w) => w === workflow);
    if (tab) await this.workflows.loadInto(tab, data);
    else await this.workflows.openNew(data, typeof workflow === "string" && workflow ? workflow : undefined);
  }

  /** Show a tab's graph (the same LGraph instance, like ComfyUI): a tab switch, an undo. */
  private showGraph(data: unknown): void {
    this.graph.clear();
    if (data) this.graph.configure(data as Parameters<LGraph["configure"]>[0]);
    this.canvas.setDirty(true, true);
  }

  /** ComfyUI's app.queuePrompt: refusals are shown, not thrown. */
  async queuePrompt(number: number, batchCount = 1): Promise<boolean> {
    for (let i = 0; i < batchCount; i++) {
      try {
        await this.api.queuePrompt(number, await this.graphToPrompt());
      } catch (error) {
        const body = (error as { response?: { error?: { message?: string; details?: string } } }).response;
        this.extensionManager.toast.add({
          severity: "error",
          summary: body?.error?.message ?? "Queueing failed",
          detail: body?.error?.details || String((error as Error).message ?? error),
          life: 8000,
        });
        return false;
      }
    }
    return true;
  }

  fitView(): void {
    const nodes = this.graph.nodes;
    if (nodes.length === 0) return;
    const title = LiteGraph.NODE_TITLE_HEIGHT;
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const { pos, size } of nodes) {
      [x0, y0] = [Math.min(x0, pos[0]), Math.min(y0, pos[1] - title)];
      [x1, y1] = [Math.max(x1, pos[0] + size[0]), Math.max(y1, pos[1] + size[1])];
    }
    const margin = 40;
    this.canvas.ds.fitToBounds([x0 - margin, y0 - margin, x1 - x0 + 2 * margin, y1 - y0 + 2 * margin], { zoom: 0.95 });
    this.canvas.setDirty(true, true);
  }

  resizeCanvas(): void {
    const element = this.canvas.canvas;
    const parent = element.parentElement;
    if (!parent) return;
    const { width, height } = parent.getBoundingClientRect();
    if (width > 0 && height > 0) this.canvas.resize(Math.floor(width), Math.floor(height));
    this.canvas.setDirty(true, true);
  }
}

export { LiteGraph };
