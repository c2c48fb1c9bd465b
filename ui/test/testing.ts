// Test helpers (vitest only; never imported by the panel): a real LiteGraph LGraph with the
// real ComfyUI node types of data/object_info.json.gz, inside a minimal ComfyApp whose change
// tracker, confirm dialog and api (fetchApi + events) each test scripts and inspects.
import { LGraph, LiteGraph, SubgraphNode, type ISerialisedGraph } from "@comfyorg/litegraph";
import type { ChangeTracker, ComfyApi, ComfyApp, ComfyPrompt, LGraphNode, LiteGraphGlobal, NodeDef } from "../src/host/comfy";
import { keyGraphToLoad, watchWorkflows } from "../src/host/comfy";
import { registerNodeDefs } from "../src/litegraph/register";
import { registerSubgraphTypes } from "../src/litegraph/subgraphs";
import { PlaygroundWorkflows } from "../src/playground/workflows";
import { graphTools, type PanelTools } from "../src/tools/index";

// Node's modules, fetched at run time: vitest's happy-dom environment transforms imports for
// the browser and would stub "node:fs" and "node:zlib" out (and import.meta.url is not a file).
const { existsSync, readFileSync } = process.getBuiltinModule("node:fs");
const { resolve } = process.getBuiltinModule("node:path");
const { gunzipSync } = process.getBuiltinModule("node:zlib");

/** data/object_info.json.gz of the repository (tests run from ui/ or from the repository root). */
export function objectInfoPath(): string {
  const candidates = [resolve(process.cwd(), "../data/object_info.json.gz"), resolve(process.cwd(), "data/object_info.json.gz")];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`object_info.json.gz not found (looked at ${candidates.join(", ")})`);
  return found;
}

let defs: Record<string, NodeDef> | null = null;

/** ComfyUI's /api/object_info as stored in data/object_info.json.gz (478 node types). */
export function loadObjectInfo(): Record<string, NodeDef> {
  defs ??= JSON.parse(gunzipSync(readFileSync(objectInfoPath())).toString("utf8")) as Record<string, NodeDef>;
  return defs;
}

let registered = false;

/** LiteGraph with every object_info type registered (once per test file). */
export function realLiteGraph(): LiteGraphGlobal {
  if (!registered) {
    registerNodeDefs(LiteGraph, loadObjectInfo());
    registered = true;
  }
  return LiteGraph as unknown as LiteGraphGlobal;
}

/**
 * A change tracker that behaves like ComfyUI's (1.58): snapshots of graph.serialize();
 * captureCanvasState() (or the last afterChange()) records a new undo step when the graph
 * changed; undo() restores. `calls` lists every method call, for asserting that edits were (or
 * were not) recorded; the deprecated checkState() is listed too, so a test can see it unused.
 */
export class TestTracker implements ChangeTracker {
  calls: string[] = [];
  undoQueue: string[] = [];
  activeState: string;
  private depth = 0;

  constructor(private readonly graph: LGraph) {
    this.activeState = this.snapshot();
  }

  private snapshot(): string {
    return JSON.stringify(this.graph.serialize());
  }

  private record(): void {
    const state = this.snapshot();
    if (state === this.activeState) return;
    this.undoQueue.push(this.activeState);
    this.activeState = state;
  }

  beforeChange(): void {
    this.calls.push("beforeChange");
    this.depth++;
  }

  afterChange(): void {
    this.calls.push("afterChange");
    if (this.depth > 0 && --this.depth === 0) this.record();
  }

  captureCanvasState(): void {
    this.calls.push("captureCanvasState");
    if (this.depth === 0) this.record();
  }

  checkState(): void {
    this.calls.push("checkState");
    if (this.depth === 0) this.record();
  }

  undo(): void {
    const previous = this.undoQueue.pop();
    if (previous === undefined) return;
    this.graph.configure(JSON.parse(previous) as ISerialisedGraph);
    this.activeState = previous;
  }

  /** Forget calls and history: the current graph becomes the starting state. */
  reset(): void {
    this.calls = [];
    this.undoQueue = [];
    this.activeState = this.snapshot();
  }
}

/** ComfyUI 1.27's tracker: checkState() only, no captureCanvasState(). */
export class LegacyTestTracker extends TestTracker {
  declare captureCanvasState: never;
}
Object.defineProperty(LegacyTestTracker.prototype, "captureCanvasState", { value: undefined });

type Listener = (event: CustomEvent) => void;

/** app.api: fetchApi answers with `handler`; `emit` dispatches ComfyUI's api events. */
export class TestApi implements ComfyApi {
  clientId = "test-client";
  requests: { route: string; init?: RequestInit; body?: unknown }[] = [];
  handler: (route: string, init?: RequestInit) => Response | Promise<Response> = () => jsonResponse(500, {});
  private listeners = new Map<string, Set<Listener>>();

  apiURL(route: string): string {
    return `/comfy/api${route}`; // (a base path, as ComfyUI served under a prefix has)
  }

  async fetchApi(route: string, init?: RequestInit): Promise<Response> {
    const body = typeof init?.body === "string" ? parsedOrText(init.body) : undefined;
    this.requests.push({ route, init, body });
    return this.handler(route, init);
  }

  addEventListener(type: string, listener: Listener): void {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(listener);
  }

  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener);
  }

  emit(type: string, detail: unknown): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) listener(new CustomEvent(type, { detail }));
  }

  listenerCount(): number {
    return [...this.listeners.values()].reduce((n, set) => n + set.size, 0);
  }
}

/** A request body as JSON, or as its text (Manager's git-URL route takes the URL as plain text). */
function parsedOrText(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/** extensionManager.dialog: confirm() answers from `answers` (false when none are left). */
export class TestDialog {
  answers: (boolean | null)[] = [];
  asked: { title: string; message: string }[] = [];

  async confirm(options: { title: string; message: string }): Promise<boolean | null> {
    this.asked.push({ title: options.title, message: options.message });
    return this.answers.length ? this.answers.shift()! : false;
  }
}

/** A simple graphToPrompt: widget values by name (not the seed control) and links. */
function graphToPrompt(graph: LGraph): ComfyPrompt {
  const output: ComfyPrompt["output"] = {};
  for (const node of graph.nodes) {
    const inputs: Record<string, unknown> = {};
    for (const widget of node.widgets ?? []) {
      if (widget.name !== "control_after_generate" && widget.serialize !== false) inputs[widget.name] = widget.value;
    }
    for (const input of node.inputs ?? []) {
      const link = input.link != null ? graph.getLink(input.link) : undefined;
      if (link) inputs[input.name] = [String(link.origin_id), link.origin_slot];
    }
    output[String(node.id)] = { class_type: node.type, inputs };
  }
  return { output, workflow: graph.serialize() };
}

export interface TestSetup {
  app: ComfyApp;
  graph: LGraph;
  lg: LiteGraphGlobal;
  tracker: TestTracker;
  api: TestApi;
  dialog: TestDialog;
  canvas: { visible_area: Float32Array; graph_mouse: [number, number]; dirty: number; graph: LGraph; setDirty(): void };
  toasts: { kind: string; summary: string; detail?: string }[];
  /** Deprecated frontend API the tools used (on the modern app: app.graph, toast.add, checkState). */
  deprecated: string[];
  tools: PanelTools;
  /** Whether workflows load with string node ids, as frontends from about 1.49 keep them. */
  stringIds: boolean;
}

/** A fresh app around an empty real LGraph (subgraphs load as in ComfyUI; the canvas views the root). */
/**
 * `tabs`: the frontend's workflow tabs (the playground's emulation of ComfyUI's store), where
 * app.loadGraphData opens a new tab as ComfyUI's does; without it, one graph that loading replaces.
 */
export function createTestApp(options: { legacy?: boolean; stringIds?: boolean; tabs?: boolean } = {}): TestSetup {
  const lg = realLiteGraph();
  const graph = new LGraph();
  registerSubgraphTypes(LiteGraph, SubgraphNode, graph);
  const tracker = options.legacy ? new LegacyTestTracker(graph) : new TestTracker(graph);
  const api = new TestApi();
  const toasts: TestSetup["toasts"] = [];
  const deprecated: string[] = [];
  const dialog = new TestDialog();
  const canvas = {
    visible_area: new Float32Array([0, 0, 1600, 900]),
    graph_mouse: [0, 0] as [number, number],
    dirty: 0,
    graph,
    setDirty() {
      canvas.dirty++;
    },
  };
  // 1.58 has rootGraph and a toast method per kind; 1.27 only graph and toast.add().
  const toast = options.legacy
    ? { add: (m: { severity: string; summary: string; detail?: string }) => toasts.push({ kind: m.severity, summary: m.summary, detail: m.detail }) }
    : {
        add(m: { severity: string; summary: string; detail?: string }) {
          deprecated.push("toast.add");
          toasts.push({ kind: m.severity, summary: m.summary, detail: m.detail });
        },
        ...Object.fromEntries(
          ["success", "error", "info", "warning"].map((kind) => [
            kind,
            (summary: string, options?: { description?: string }) => toasts.push({ kind, summary, detail: options?.description }),
          ]),
        ),
      };
  const app = {
    ...(options.legacy ? { graph } : { rootGraph: graph }),
    canvas,
    api,
    extensionManager: {
      toast,
      dialog,
      setting: { get: () => undefined, set() {} },
      command: { execute() {} },
      workflow: { activeWorkflow: { changeTracker: tracker } },
    },
    registerExtension() {},
    graphToPrompt: async () => graphToPrompt(graph),
    loadGraphData: async (data: unknown) => {
      graph.configure(data as ISerialisedGraph);
    },
  } as unknown as ComfyApp;
  if (!options.legacy) {
    Object.defineProperty(app, "graph", {
      get() {
        deprecated.push("app.graph");
        return graph;
      },
    });
    const checkState = tracker.checkState.bind(tracker);
    tracker.checkState = () => {
      deprecated.push("checkState");
      checkState();
    };
  }
  if (options.tabs) {
    const workflows = new PlaygroundWorkflows({
      serialize: () => graph.serialize(),
      load: (state) => {
        graph.clear();
        if (state) graph.configure(state as ISerialisedGraph);
      },
    });
    Object.assign(app.extensionManager, { workflow: workflows });
    // As ComfyUI's: a new tab, or the open tab given (a tab switch, a restored state), with our
    // extension's beforeConfigureGraph first and its tabs followed (each tab's thread key).
    app.loadGraphData = (data: unknown, _clean?: boolean, _view?: boolean, workflow?: unknown) => {
      const copy = data === undefined || data === null ? data : structuredClone(data);
      keyGraphToLoad(app, copy);
      const tab = workflows.openWorkflows.find((w) => w === workflow);
      return tab ? workflows.loadInto(tab, copy) : workflows.openNew(copy, typeof workflow === "string" && workflow ? workflow : undefined);
    };
    watchWorkflows(app, () => {});
  }
  return { app, graph, lg, tracker, api, dialog, canvas, toasts, deprecated, tools: graphTools(app, lg), stringIds: options.stringIds === true };
}

/** Adds a node directly (not through the tools), to arrange a test's starting graph. */
export function place(t: TestSetup, type: string, pos: [number, number], widgets: Record<string, unknown> = {}): LGraphNode {
  const node = t.lg.createNode(type);
  if (!node) throw new Error(`cannot create ${type}`);
  node.pos = pos;
  t.graph.add(node);
  for (const [name, value] of Object.entries(widgets)) {
    const widget = node.widgets?.find((w) => w.name === name);
    if (!widget) throw new Error(`${type} has no widget ${name}`);
    widget.value = value as typeof widget.value;
  }
  return node;
}

export function link(from: LGraphNode, output: number, to: LGraphNode, input: number): void {
  if (!from.connect(output, to, input)) throw new Error("link refused");
}

/** ComfyUI's default text-to-image graph, built directly; the tracker starts clean after it. */
export function buildTxt2Img(t: TestSetup) {
  const ckpt = place(t, "CheckpointLoaderSimple", [26, 474]);
  const positive = place(t, "CLIPTextEncode", [415, 186], { text: "a photo of a cat" });
  const negative = place(t, "CLIPTextEncode", [413, 389], { text: "blurry" });
  const latent = place(t, "EmptyLatentImage", [473, 609]);
  const sampler = place(t, "KSampler", [863, 186], { seed: 42, control_after_generate: "fixed" });
  const decode = place(t, "VAEDecode", [1209, 188]);
  const save = place(t, "SaveImage", [1451, 189]);
  link(ckpt, 0, sampler, 0);
  link(ckpt, 1, positive, 0);
  link(ckpt, 1, negative, 0);
  link(positive, 0, sampler, 1);
  link(negative, 0, sampler, 2);
  link(latent, 0, sampler, 3);
  link(sampler, 0, decode, 0);
  link(ckpt, 2, decode, 1);
  link(decode, 0, save, 0);
  t.tracker.reset();
  return { ckpt, positive, negative, latent, sampler, decode, save };
}

/** A workflow of ui/test/fixtures (real ComfyUI templates with subgraphs), as its JSON. */
export function fixtureJson(name: string): ISerialisedGraph {
  const candidates = [resolve(process.cwd(), "test/fixtures", name), resolve(process.cwd(), "ui/test/fixtures", name)];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`fixture ${name} not found (looked at ${candidates.join(", ")})`);
  return JSON.parse(readFileSync(found, "utf8")) as ISerialisedGraph;
}

/** A workflow of ui/test/fixtures, loaded into the graph. */
export function loadFixture(t: TestSetup, name: string): void {
  t.graph.configure(fixtureJson(name));
  if (t.stringIds) useStringIds(t.graph);
  t.tracker.reset();
}

/**
 * Node ids as frontends from about 1.49 keep them (LiteGraph 0.17.2 keeps numbers): strings in
 * every node and in both ends of every link, at every level — "5", and "-10"/"-20" for a
 * subgraph's boundary. Nodes added later by LiteGraph 0.17.2 get numbers again: both kinds at once.
 */
export function useStringIds(root: LGraph): void {
  for (const graph of [root, ...root.subgraphs.values()]) {
    for (const node of graph.nodes) node.id = String(node.id) as unknown as number;
    for (const link of graph.links.values()) {
      link.origin_id = String(link.origin_id) as unknown as number;
      link.target_id = String(link.target_id) as unknown as number;
    }
  }
}

/** Opens the subgraph of subgraph node `path` ("56", "48:35") on the canvas, as a double click does. */
export function openSubgraph(t: TestSetup, path: string): LGraph {
  let graph: LGraph = t.graph;
  for (const id of path.split(":")) {
    const node = graph.getNodeById(Number(id)) as unknown as { subgraph?: LGraph } | null;
    if (!node?.subgraph) throw new Error(`${id} is not a subgraph node`);
    graph = node.subgraph;
  }
  t.canvas.graph = graph;
  return graph;
}

/** What the assistant's server adds to "all black" for a file made after a latent decode. */
export const DECODE_CAUSE = " (the usual sign of a failed VAE decode: NaN values)";

/** A test app with a txt2img graph over a ComfyUI whose queue runs prompt p1: its history is
 * `comfy.history` (empty: still running), and the server's look at its one output says `line`,
 * as routes/outputs.py does: with the decode's cause only when the panel says a decode made it. */
export function comfyUIRunningP1(line: string): { t: TestSetup; history: Record<string, unknown> } {
  const t = createTestApp();
  buildTxt2Img(t);
  const comfy = { t, history: {} as Record<string, unknown> };
  const name = "ComfyUI_00001_.png [output]";
  t.api.handler = (route, init) => {
    if (route === "/prompt") return jsonResponse(200, { prompt_id: "p1", number: 1, node_errors: {} });
    if (route === "/history/p1") return jsonResponse(200, comfy.history);
    if (route === "/assistant/outputs/look") {
      const decoded = (JSON.parse(String(init?.body)) as { decoded?: string[] }).decoded ?? [];
      const bare = line.replace(DECODE_CAUSE, "");
      return jsonResponse(200, { outputs: [{ name, line: bare.endsWith("all black") && decoded.includes(name) ? bare + DECODE_CAUSE : bare }] });
    }
    return jsonResponse(404, {});
  };
  return comfy;
}
