// Each workflow tab's thread key (threadKeys.ts, comfy.ts), with two real ComfyUI templates that
// share one workflow id (tests/fixtures/workflows, from comfyui-workflow-templates 0.1.95), opened
// in the playground's copy of ComfyUI's workflow store and change tracker.
import { describe, expect, it, vi } from "vitest";
import { activeWorkflowKey, graphIdOf, keyGraphToLoad, watchWorkflows, type ComfyApp } from "./comfy";
import { PlaygroundWorkflows } from "../playground/workflows";
import type { ServerThread } from "../server/api";
import { WorkflowThreads } from "../runtime/workflowThreads";
import { keyIn, THREAD_KEY, withKeyOf } from "./threadKeys";

const DALLE = "api_openai_dall_e_2_t2i";
const KLING = "api_kling_i2v";
const SHARED_ID = "3ba6fcae-c49e-40dc-8725-12d4cd833fcb";

const { existsSync, readFileSync } = process.getBuiltinModule("node:fs");
const { resolve } = process.getBuiltinModule("node:path");

/** A template of tests/fixtures/workflows, as its JSON (the tests run from ui/ or the root). */
function template(name: string): Record<string, unknown> {
  const found = [resolve(process.cwd(), "../tests/fixtures/workflows"), resolve(process.cwd(), "tests/fixtures/workflows")]
    .map((folder) => resolve(folder, `${name}.json`))
    .find((path) => existsSync(path));
  if (!found) throw new Error(`no fixture ${name}.json`);
  return JSON.parse(readFileSync(found, "utf8")) as Record<string, unknown>;
}

type State = Record<string, unknown> & { extra?: Record<string, unknown> };

/** The graph ComfyUI's app shows: its `extra` (where the key goes) and serialize(). */
function fakeGraph(first: State) {
  const graph = {
    state: structuredClone(first),
    get extra(): Record<string, unknown> {
      return (graph.state.extra ??= {});
    },
    serialize: () => structuredClone(graph.state),
    load: (state: unknown) => {
      graph.state = structuredClone(state) as State;
    },
  };
  return graph;
}

/** ComfyUI's tabs (the playground's copy of its store), followed as the panel follows them; a
 * first tab loaded before the extension (no key). `open` is app.loadGraphData into a new tab:
 * the extension's beforeConfigureGraph, then the tab. */
function comfy() {
  const graph = fakeGraph({ id: "graph-1", nodes: [] });
  const workflows = new PlaygroundWorkflows(graph);
  const app = { graph, extensionManager: { workflow: workflows } } as unknown as ComfyApp;
  const stop = watchWorkflows(app, () => {});
  const open = async (data: unknown, name?: string) => {
    const copy = structuredClone(data);
    keyGraphToLoad(app, copy);
    await workflows.openNew(copy, name);
  };
  return { graph, workflows, app, open, stop };
}

function thread(id: string, workflow: string | null, updatedAt = 1): ServerThread {
  return { id, title: id, archived: false, createdAt: updatedAt, updatedAt, messageCount: 2, workflow };
}

/** The panel's threads of the workflow tabs; `requests`: what it asked the server. */
function panelThreads() {
  const requests: unknown[] = [];
  const w = new WorkflowThreads({
    request: async <T,>(path: string, init?: unknown) => (requests.push({ path, init }), undefined as T),
    changed: () => {},
    current: () => undefined,
    busy: () => false,
  });
  return { w, requests };
}

describe("a tab's thread key", () => {
  it("two templates that share a workflow id are two workflows: each tab its own key, its own threads", async () => {
    const { app, workflows, open } = comfy();
    const { w, requests } = panelThreads();
    w.follow(app);
    w.listed([]);
    await open(template(DALLE), DALLE);
    const dalle = activeWorkflowKey(app)!;
    w.created("th_dalle"); // the user chats on the DALL·E tab
    await open(template(KLING), KLING);
    const kling = activeWorkflowKey(app)!;

    const [first, second] = workflows.openWorkflows.slice(1);
    expect([graphIdOf(first!), graphIdOf(second!)]).toEqual([SHARED_ID, SHARED_ID]);
    expect([first!.filename, second!.filename]).toEqual([DALLE, KLING]);
    expect(dalle).toMatch(/^unsaved:[0-9a-f-]{36}$/);
    expect(kling).toMatch(/^unsaved:[0-9a-f-]{36}$/);
    expect(new Set([dalle, kling, `unsaved:${SHARED_ID}`]).size).toBe(3);
    await w.onChange({ type: "active", key: kling });
    expect(w.choose("th_dalle")).toEqual({ kind: "new" }); // the Kling tab has no thread yet
    expect(w.workflowOf("th_dalle")).toBe(dalle);
    expect(requests).toEqual([]); // nothing moved
  });

  it("is written where ComfyUI's change tracker compares it: no undo step, the tab not modified", async () => {
    const { graph, workflows } = comfy();
    const tab = workflows.activeWorkflow!;
    const key = keyIn(graph.serialize());
    expect(key).toMatch(/^[0-9a-f-]{36}$/); // the first tab, seen when the panel followed the tabs
    expect(keyIn(tab.changeTracker.activeState)).toBe(key);
    tab.changeTracker.checkState();
    expect(tab.changeTracker.undoQueue).toEqual([]);
    // An edit, then undo: the state undo brings back holds the key too.
    graph.state.nodes = [{ id: 1, type: "EmptyImage" }];
    tab.changeTracker.checkState();
    await tab.changeTracker.undo();
    expect([graph.state.nodes, keyIn(graph.serialize())]).toEqual([[], key]);
  });

  it("a tab shown again keeps its key; a copy of an open tab (duplicated, opened twice) gets a fresh one", async () => {
    const { app, workflows, open } = comfy();
    await open(template(DALLE), DALLE);
    const original = activeWorkflowKey(app)!;
    const copy = structuredClone(workflows.activeWorkflow!.activeState);
    expect(keyIn(copy)).toBe(original.slice("unsaved:".length));
    await open(copy); // as ComfyUI's "Duplicate" loads the tab's state
    const duplicate = activeWorkflowKey(app)!;
    expect(duplicate).not.toBe(original);
    await workflows.cycle(-1);
    expect(activeWorkflowKey(app)).toBe(original);
    await workflows.cycle(1);
    expect(activeWorkflowKey(app)).toBe(duplicate);
  });

  it("a tab opened before the extension, shown again, gets its key in the graph loaded and in its tracker alike", async () => {
    const { app, workflows } = comfy();
    const restored = workflows.createTemporary("Restored.json", { id: "graph-2", nodes: [], extra: {} });
    workflows.openWorkflows.push(restored); // as a frontend restores a tab in the background
    expect(keyIn(restored.activeState)).toBeUndefined();
    const data = structuredClone(restored.activeState); // ComfyUI's tab switch: its state, loaded
    keyGraphToLoad(app, data);
    expect(keyIn(data)).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyIn(restored.activeState)).toBe(keyIn(data));
    await workflows.loadInto(restored, data);
    expect([activeWorkflowKey(app), restored.changeTracker.undoQueue]).toEqual([`unsaved:${keyIn(data)}`, []]);
  });

  it("a checkpoint's graph restored into a tab takes the tab's key", () => {
    const tab = { nodes: [], extra: { [THREAD_KEY]: "tab-key-12" } };
    expect(withKeyOf({ nodes: [1] } as Record<string, unknown>, tab)).toEqual({ nodes: [1], extra: { [THREAD_KEY]: "tab-key-12" } });
    expect(withKeyOf({ nodes: [1] }, { nodes: [] })).toEqual({ nodes: [1] });
  });
});

describe("threads an earlier version bound to an unsaved tab's graph id", () => {
  it("move to the first tab seen with that id, here and on the server, once", async () => {
    const { app, open } = comfy();
    const { w, requests } = panelThreads();
    w.follow(app);
    const first = activeWorkflowKey(app)!;
    w.listed([thread("th_first", "unsaved:graph-1"), thread("th_template", `unsaved:${SHARED_ID}`), thread("th_saved", "portrait.json")]);
    await vi.waitFor(() => expect(w.workflowOf("th_first")).toBe(first));
    await open(template(DALLE), DALLE);
    const dalle = activeWorkflowKey(app)!;
    await w.onChange({ type: "active", key: dalle });
    await open(template(KLING), KLING);
    await w.onChange({ type: "active", key: activeWorkflowKey(app) });
    expect([w.workflowOf("th_first"), w.workflowOf("th_template"), w.workflowOf("th_saved")]).toEqual([first, dalle, "portrait.json"]);
    expect(requests).toEqual([
      { path: "/api/assistant/threads/rebind", init: { method: "POST", body: { from: "unsaved:graph-1", to: first } } },
      { path: "/api/assistant/threads/rebind", init: { method: "POST", body: { from: `unsaved:${SHARED_ID}`, to: dalle } } },
    ]);
  });
});

describe("an earlier version's binding the server could not move", () => {
  it("stays where it was, here too, and is tried again after the next list", async () => {
    const { app } = comfy();
    let fail = true;
    const sent: unknown[] = [];
    const w = new WorkflowThreads({
      request: async <T,>(path: string, init?: unknown) => {
        sent.push(init);
        if (fail) throw new Error("offline");
        return undefined as T;
      },
      changed: () => {},
      current: () => undefined,
      busy: () => false,
    });
    w.follow(app);
    w.listed([thread("th_first", "unsaved:graph-1")]);
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    await vi.waitFor(() => expect(w.workflowOf("th_first")).toBe("unsaved:graph-1"));
    fail = false;
    w.listed([thread("th_first", "unsaved:graph-1")]);
    expect(w.workflowOf("th_first")).toBe(activeWorkflowKey(app));
    await vi.waitFor(() => expect(sent).toHaveLength(2));
  });
});

describe("the panel following the tabs", () => {
  it("knows the first tab's key at once, also when the tab had none before (loaded before the extension)", () => {
    const { app } = (() => {
      const graph = fakeGraph({ id: "graph-1", nodes: [] });
      const workflows = new PlaygroundWorkflows(graph);
      return { app: { graph, extensionManager: { workflow: workflows } } as unknown as ComfyApp };
    })();
    const { w } = panelThreads();
    w.follow(app);
    expect(w.active).toMatch(/^unsaved:[0-9a-f-]{36}$/);
    expect(w.active).toBe(activeWorkflowKey(app));
  });
});
