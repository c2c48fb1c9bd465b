// Workflow tabs for the playground, shaped like ComfyUI's workflow store (a Pinia store in
// 1.27.10 and 1.58.1): `activeWorkflow` (path, key, filename, isTemporary, changeTracker, and
// activeState: the tab's graph as its tracker holds it, whose `id` names the graph),
// `openWorkflows`, the actions openWorkflow / createTemporary / renameWorkflow / closeWorkflow,
// and Pinia's `$onAction` hook, which calls `after` once an action completed. Each tab keeps its
// graph (serialized while another is shown) and its own undo history. A strip of tabs above the
// canvas shows them; + opens a new blank workflow (Comfy.NewBlankWorkflow, as in ComfyUI).
import type { ComfyActionContext, ComfyWorkflowStore } from "../host/comfy";
import { PlaygroundChangeTracker, type TrackedGraph } from "./changeTracker";

const BASE = "workflows/";

export class PlaygroundWorkflow {
  /** The graph while another tab is shown. */
  state: unknown = null;
  size = -1; // ComfyUI's rule: a workflow never saved has size -1
  /** Shown once: its undo history starts from its own graph. */
  opened = false;

  constructor(
    public path: string,
    readonly changeTracker: PlaygroundChangeTracker,
  ) {}

  get key(): string {
    return this.path.slice(BASE.length);
  }

  get filename(): string {
    return (this.key.split("/").pop() ?? this.key).replace(/\.json$/, "");
  }

  get isTemporary(): boolean {
    return this.size === -1;
  }

  /** The graph as its tracker holds it (ComfyUI's `activeState`; its `id` names the graph). */
  get activeState(): { id?: unknown } | null {
    return (this.changeTracker.activeState as { id?: unknown } | null) ?? null;
  }
}

/** A new graph, with an id of its own as ComfyUI gives one. */
function blankGraph(): { id: string; nodes: []; links: []; groups: []; version: number } {
  return { id: crypto.randomUUID(), nodes: [], links: [], groups: [], version: 0.4 };
}

type ActionHook = (context: ComfyActionContext) => void;

export class PlaygroundWorkflows implements ComfyWorkflowStore {
  activeWorkflow: PlaygroundWorkflow | null = null;
  openWorkflows: PlaygroundWorkflow[] = [];
  private readonly hooks = new Set<ActionHook>();

  constructor(
    private readonly graph: TrackedGraph,
    private readonly strip: HTMLElement | null = null,
  ) {
    const first = this.createTemporary(undefined, graph.serialize());
    first.opened = true;
    this.openWorkflows.push(first);
    this.activeWorkflow = first;
    this.render();
  }

  $onAction(callback: ActionHook): () => void {
    this.hooks.add(callback);
    return () => this.hooks.delete(callback);
  }

  /** Run an action as Pinia does: the hooks first, their `after` callbacks once it is done. */
  private async act<T>(name: string, args: unknown[], run: () => T | Promise<T>): Promise<T> {
    const afters: ((result: unknown) => void)[] = [];
    for (const hook of [...this.hooks]) hook({ name, args, after: (callback) => afters.push(callback) });
    const result = await run();
    for (const callback of afters) callback(result);
    this.render();
    return result;
  }

  /** A new unsaved workflow, named as ComfyUI names them ("Unsaved Workflow (2).json"), holding
   * `state` (a blank graph with an id of its own when not given). */
  createTemporary(name = "Unsaved Workflow.json", state: unknown = blankGraph()): PlaygroundWorkflow {
    const taken = new Set(this.openWorkflows.map((w) => w.path));
    let path = BASE + name;
    for (let n = 2; taken.has(path); n++) path = BASE + name.replace(/\.json$/, ` (${n}).json`);
    const workflow = new PlaygroundWorkflow(path, new PlaygroundChangeTracker(this.graph, state));
    workflow.state = state;
    return workflow;
  }

  openWorkflow(workflow: PlaygroundWorkflow): Promise<PlaygroundWorkflow> {
    return this.act("openWorkflow", [workflow], async () => {
      if (workflow === this.activeWorkflow) return workflow;
      if (!this.openWorkflows.includes(workflow)) this.openWorkflows.push(workflow);
      if (this.activeWorkflow) this.activeWorkflow.state = this.graph.serialize();
      this.activeWorkflow = workflow;
      await this.graph.load(workflow.state);
      if (!workflow.opened) workflow.changeTracker.reset();
      workflow.opened = true;
      return workflow;
    });
  }

  /** Saving a temporary tab under a name renames it (size ≥ 0: saved). */
  renameWorkflow(workflow: PlaygroundWorkflow, newPath: string): Promise<void> {
    return this.act("renameWorkflow", [workflow, newPath], () => {
      workflow.path = newPath.startsWith(BASE) ? newPath : BASE + newPath;
      workflow.size = 0;
    });
  }

  /** As ComfyUI's workflow service closes a tab: the last one gets a new blank tab first, the
   * active one shows its neighbour, then the store's closeWorkflow forgets it. */
  async closeTab(workflow: PlaygroundWorkflow): Promise<void> {
    if (this.openWorkflows.length === 1) await this.newBlank();
    else if (workflow === this.activeWorkflow) {
      const index = this.openWorkflows.indexOf(workflow);
      await this.openWorkflow(this.openWorkflows[index > 0 ? index - 1 : 1]!);
    }
    await this.closeWorkflow(workflow);
  }

  closeWorkflow(workflow: PlaygroundWorkflow): Promise<void> {
    return this.act("closeWorkflow", [workflow], () => {
      this.openWorkflows = this.openWorkflows.filter((w) => w !== workflow);
    });
  }

  /** Comfy.NewBlankWorkflow: an empty graph in a new tab. */
  async newBlank(): Promise<void> {
    await this.openWorkflow(this.createTemporary());
  }

  /** app.loadGraphData: `data` in a new tab (named `name`, as a template's is); a graph without
   * an id gets one, as in ComfyUI. */
  async openNew(data: unknown, name?: string): Promise<void> {
    const state = typeof data === "object" && data !== null ? { id: crypto.randomUUID(), ...data } : blankGraph();
    await this.openWorkflow(this.createTemporary(name === undefined ? undefined : `${name.replace(/\.json$/i, "")}.json`, state));
  }

  /** app.loadGraphData into an open tab: shown with `data` as its graph (its history kept). */
  async loadInto(workflow: PlaygroundWorkflow, data: unknown): Promise<void> {
    if (workflow !== this.activeWorkflow) {
      workflow.state = data;
      await this.openWorkflow(workflow);
    } else await this.graph.load(data);
  }

  /** Workspace.NextOpenedWorkflow / PreviousOpenedWorkflow. */
  async cycle(step: 1 | -1): Promise<void> {
    const count = this.openWorkflows.length;
    const index = this.activeWorkflow ? this.openWorkflows.indexOf(this.activeWorkflow) : 0;
    const next = this.openWorkflows[(index + step + count) % count];
    if (next) await this.openWorkflow(next);
  }

  private render(): void {
    const strip = this.strip;
    if (!strip) return;
    strip.replaceChildren();
    for (const workflow of this.openWorkflows) {
      const tab = strip.appendChild(document.createElement("button"));
      tab.type = "button";
      tab.className = "pg-tab";
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-selected", String(workflow === this.activeWorkflow));
      tab.title = workflow.key;
      tab.textContent = workflow.filename + (workflow.isTemporary ? " *" : "");
      tab.addEventListener("click", () => void this.openWorkflow(workflow));
    }
    const add = strip.appendChild(document.createElement("button"));
    add.type = "button";
    add.className = "pg-tab pg-tab-new";
    add.setAttribute("aria-label", "New blank workflow");
    add.textContent = "+";
    add.addEventListener("click", () => void this.newBlank());
  }
}
