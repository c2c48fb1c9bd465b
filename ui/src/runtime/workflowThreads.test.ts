import { afterEach, describe, expect, it, vi } from "vitest";
import { activeWorkflowKey, graphIdOf, watchWorkflows, workflowKey, type ComfyApp, type ComfyWorkflowStore, type WorkflowChange } from "../host/comfy";
import { PlaygroundWorkflows } from "../playground/workflows";
import { THREAD_KEY } from "../host/threadKeys";
import type { ServerThread } from "../server/api";
import { staleKeys, threadsOf, workflowName, WorkflowThreads, type WorkflowThreadsDeps } from "./workflowThreads";

afterEach(() => vi.useRealTimers());

/** The first tab's thread key (threadKeys.ts), as the workflow JSON of its graph keeps it. */
const FIRST = "first-tab-key";

/** A graph as ComfyUI's app holds it: `extra` (where a tab's thread key goes) and serialize(). */
function fakeGraph(first: Record<string, unknown>) {
  const graph = {
    extra: { ...(first.extra as object) } as Record<string, unknown>,
    rest: { ...first },
    serialize: () => ({ ...graph.rest, extra: { ...graph.extra } }),
    load: (state: unknown) => {
      graph.rest = { ...(state as object) };
      graph.extra = { ...((state as { extra?: object } | null)?.extra ?? {}) };
    },
  };
  return graph;
}

/** ComfyUI's workflow store as the playground emulates it (Pinia's $onAction included); the
 * first tab's graph has the id "graph-1" (and the thread key FIRST unless `first` says
 * otherwise), every new one a random UUID, as ComfyUI gives them. */
function tabs(first: Record<string, unknown> = { id: "graph-1", extra: { [THREAD_KEY]: FIRST } }) {
  const graph = fakeGraph(first);
  const workflows = new PlaygroundWorkflows(graph);
  const app = { graph, extensionManager: { workflow: workflows } } as unknown as ComfyApp;
  return { workflows, app, graph };
}

function listedThread(id: string, workflow: string | null, updatedAt: number, archived = false): ServerThread {
  return { id, title: id, archived, createdAt: updatedAt, updatedAt, messageCount: 1, workflow };
}

function threads(overrides: Partial<WorkflowThreadsDeps> = {}) {
  const requests: { path: string; init: unknown }[] = [];
  const deps: WorkflowThreadsDeps = {
    request: async <T,>(path: string, init?: unknown) => {
      requests.push({ path, init });
      return undefined as T;
    },
    changed: vi.fn(),
    current: () => undefined,
    busy: () => false,
    ...overrides,
  };
  return { w: new WorkflowThreads(deps), requests, deps };
}

describe("watchWorkflows (comfy.ts)", () => {
  it("reports a tab switch, a save under a name (once, not also as a switch) and an unsaved tab closed", async () => {
    const { workflows, app } = tabs();
    const seen: WorkflowChange[] = [];
    const stop = watchWorkflows(app, (change) => seen.push(change));
    expect(activeWorkflowKey(app)).toBe(`unsaved:${FIRST}`);

    await workflows.newBlank();
    const second = activeWorkflowKey(app)!;
    expect(second).toMatch(/^unsaved:[0-9a-f-]{36}$/);
    expect(seen).toEqual([{ type: "active", key: second }]);

    await workflows.renameWorkflow(workflows.activeWorkflow!, "workflows/portraits/flux.json");
    expect(seen.slice(1)).toEqual([{ type: "renamed", from: second, to: "portraits/flux.json" }]);
    expect(activeWorkflowKey(app)).toBe("portraits/flux.json");

    // Closing the saved tab is no "closed" (its threads keep it); the first tab shows again.
    await workflows.closeTab(workflows.activeWorkflow!);
    expect(seen.slice(2)).toEqual([{ type: "active", key: `unsaved:${FIRST}` }]);
    // Closing the unsaved one (the last tab: a new one opens first): its graph is gone.
    await workflows.closeTab(workflows.activeWorkflow!);
    const third = activeWorkflowKey(app)!;
    expect(seen.slice(3)).toEqual([
      { type: "active", key: third },
      { type: "closed", key: `unsaved:${FIRST}` },
    ]);

    stop();
    await workflows.newBlank();
    expect(seen).toHaveLength(5);
  });

  it("a tab saved in place is one rename, also when an action inside the save sees the new key first (1.58)", async () => {
    // ComfyUI's save of an unsaved tab: renameWorkflow (still temporary), then saveWorkflow, in
    // which 1.58 calls the store's isActive(workflow), whose hook runs before saveWorkflow's.
    type Hook = Parameters<NonNullable<ComfyWorkflowStore["$onAction"]>>[0];
    const hooks: Hook[] = [];
    const tab = { key: "Unsaved Workflow (2).json", isTemporary: true, activeState: { id: "g1", extra: { [THREAD_KEY]: "tab-key-1" } } };
    const store: ComfyWorkflowStore = { activeWorkflow: tab, openWorkflows: [tab], $onAction: (hook) => (hooks.push(hook), () => {}) };
    const act = async (name: string, args: unknown[], run: () => unknown) => {
      const afters: ((result: unknown) => void)[] = [];
      for (const hook of hooks) hook({ name, args, after: (callback) => afters.push(callback) });
      const result = await run();
      for (const callback of afters) callback(result);
    };
    const seen: WorkflowChange[] = [];
    watchWorkflows({ extensionManager: { workflow: store } } as unknown as ComfyApp, (change) => seen.push(change));
    await act("renameWorkflow", [tab, "workflows/xx.json"], () => void (tab.key = "xx.json"));
    expect(seen).toEqual([]); // still unsaved: the same key
    await act("saveWorkflow", [tab], async () => {
      tab.isTemporary = false;
      await act("isActive", [{ key: "Unsaved Workflow.json", isTemporary: true, activeState: { id: "g0" } }], () => false);
      await act("isActive", [tab], () => true);
    });
    expect(seen).toEqual([{ type: "renamed", from: "unsaved:tab-key-1", to: "xx.json" }]);
  });

  it("keys an unsaved tab by its thread key, not by its name, which ComfyUI gives again", async () => {
    const { workflows, app } = tabs();
    watchWorkflows(app, () => {}); // gives each tab seen its key
    await workflows.newBlank(); // "Unsaved Workflow (2)"
    const before = activeWorkflowKey(app);
    await workflows.closeTab(workflows.activeWorkflow!);
    await workflows.newBlank(); // "Unsaved Workflow (2)" again: another graph
    expect(workflows.activeWorkflow!.key).toBe("Unsaved Workflow (2).json");
    expect(activeWorkflowKey(app)).not.toBe(before);
    expect(activeWorkflowKey(app)).toMatch(/^unsaved:/);
  });

  it("reads a workflow's key as ComfyUI's workflows hold it: an unsaved one's thread key, not its graph id", () => {
    const id = "0b5c6a0e-8a3e-4f00-9d1b-5a4d2c7e9f10";
    const extra = { [THREAD_KEY]: "9d1b5a4d-key" };
    expect(workflowKey({ key: "portraits/flux.json", isTemporary: false, activeState: { id, extra } })).toBe("portraits/flux.json");
    expect(workflowKey({ key: "Unsaved Workflow.json", isTemporary: true, activeState: { id, extra } })).toBe("unsaved:9d1b5a4d-key");
    expect(workflowKey({ key: "Unsaved Workflow.json", isTemporary: true, activeState: null, initialState: { id, extra } })).toBe("unsaved:9d1b5a4d-key");
    // A tab not loaded yet: the JSON it holds as text.
    const unloaded = { key: "Unsaved Workflow.json", isTemporary: true, content: JSON.stringify({ id, extra, nodes: [] }) };
    expect(workflowKey(unloaded)).toBe("unsaved:9d1b5a4d-key");
    expect(workflowKey(unloaded)).toBe("unsaved:9d1b5a4d-key"); // read once, then known
    unloaded.content = JSON.stringify({ id, extra: { [THREAD_KEY]: "another-key" }, nodes: [] });
    expect(workflowKey(unloaded)).toBe("unsaved:another-key"); // its text changed: read again
    expect(graphIdOf(unloaded)).toBe(id);
    // No thread key yet (a tab not seen), or not one of ours: no key rather than the graph id or the name.
    expect(workflowKey({ key: "Unsaved Workflow.json", isTemporary: true, activeState: { id } })).toBeUndefined();
    expect(workflowKey({ key: "Unsaved Workflow.json", isTemporary: true, activeState: { id, extra: { [THREAD_KEY]: "a b" } } })).toBeUndefined();
    expect(workflowKey({ key: "Unsaved Workflow.json", isTemporary: true, content: "not json" })).toBeUndefined();
    expect(graphIdOf({ key: "Unsaved Workflow.json", isTemporary: true, activeState: { id: "00000000-0000-0000-0000-000000000000" } })).toBeUndefined();
    expect(workflowKey({ path: "workflows/a.json" })).toBe("workflows/a.json");
    expect(workflowKey(null)).toBeUndefined();
  });

  it("without a workflow store nothing is reported; without Pinia's hook the active tab is checked every second", async () => {
    expect(watchWorkflows({ extensionManager: {} } as unknown as ComfyApp, () => {})()).toBeUndefined();
    expect(activeWorkflowKey({ extensionManager: {} } as unknown as ComfyApp)).toBeUndefined();

    vi.useFakeTimers();
    const store: { activeWorkflow: { key: string } | null } = { activeWorkflow: { key: "a.json" } };
    const seen: WorkflowChange[] = [];
    const stop = watchWorkflows({ extensionManager: { workflow: store } } as unknown as ComfyApp, (c) => seen.push(c));
    store.activeWorkflow = { key: "b.json" };
    expect(seen).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual([{ type: "active", key: "b.json" }]);
    stop();
    store.activeWorkflow = null;
    await vi.advanceTimersByTimeAsync(3000);
    expect(seen).toHaveLength(1);
  });
});

describe("which thread a workflow continues", () => {
  const list = [
    listedThread("a-old", "a.json", 10),
    listedThread("a-new", "a.json", 20),
    listedThread("a-archived", "a.json", 30, true),
    listedThread("b-1", "b.json", 15),
    listedThread("free", null, 40),
  ];

  it("its latest (archived ones aside), or a new thread when it has none", () => {
    const { w } = threads();
    w.listed(list);
    expect(threadsOf(w.bindings, "a.json")).toEqual(["a-new", "a-old"]);
    w.active = "a.json";
    expect(w.choose("b-1")).toEqual({ kind: "thread", remoteId: "a-new" });
    expect(w.choose("a-old")).toEqual({ kind: "stay" }); // already one of its threads
    w.settle();
    w.active = "c.json";
    expect(w.choose("a-old")).toEqual({ kind: "new" });
    expect(w.choose(undefined)).toEqual({ kind: "stay" }); // a new thread already
  });

  it("the thread shown there last comes before its latest", () => {
    const { w } = threads();
    w.listed(list);
    w.active = "a.json";
    w.settle();
    w.shown("a-old");
    w.active = "b.json";
    w.settle();
    w.shown("b-1");
    w.active = "a.json";
    expect(w.choose("b-1")).toEqual({ kind: "thread", remoteId: "a-old" });
    w.forget("a-old"); // deleted: the latest again
    expect(w.choose("b-1")).toEqual({ kind: "thread", remoteId: "a-new" });
  });

  it("after a reload an unbound thread shown before stays; later it does not", () => {
    const { w } = threads();
    w.listed(list);
    w.active = "a.json";
    expect(w.choose("free")).toEqual({ kind: "stay" });
    w.settle();
    w.active = "b.json";
    expect(w.choose("free")).toEqual({ kind: "thread", remoteId: "b-1" });
  });

  it("a thread created on a workflow belongs to it, and a message makes it the latest", () => {
    const { w } = threads();
    w.listed(list);
    w.active = "b.json";
    w.created("b-2");
    expect(w.workflowOf("b-2")).toBe("b.json");
    expect(threadsOf(w.bindings, "b.json")).toEqual(["b-2", "b-1"]);
    w.bindings.get("b-2")!.updatedAt = 1;
    w.touched("b-1");
    expect(threadsOf(w.bindings, "b.json")).toEqual(["b-1", "b-2"]);
  });

  it("a tab opened while the thread answers (the assistant loaded a workflow) keeps that thread", async () => {
    let busy = true;
    const { w } = threads({ current: () => "a-new", busy: () => busy });
    w.listed(list);
    w.active = "a.json";
    w.settle();
    await w.onChange({ type: "active", key: "Unsaved Workflow (2).json" });
    expect(w.shownFor).toBe("Unsaved Workflow (2).json"); // nothing to follow
    busy = false;
    await w.onChange({ type: "active", key: "b.json" });
    expect(w.shownFor).toBe("Unsaved Workflow (2).json");
    expect(w.choose("a-new")).toEqual({ kind: "thread", remoteId: "b-1" });
  });
});

describe("moving threads", () => {
  it("a renamed workflow takes its threads along, here and on the server", async () => {
    const { w, requests } = threads();
    w.listed([listedThread("t1", "Unsaved Workflow.json", 1), listedThread("t2", "other.json", 2)]);
    w.active = "Unsaved Workflow.json";
    w.settle();
    w.shown("t1");
    await w.onChange({ type: "renamed", from: "Unsaved Workflow.json", to: "saved.json" });
    expect([w.active, w.shownFor, w.workflowOf("t1"), w.workflowOf("t2")]).toEqual(["saved.json", "saved.json", "saved.json", "other.json"]);
    expect(requests).toEqual([
      { path: "/api/assistant/threads/rebind", init: { method: "POST", body: { from: "Unsaved Workflow.json", to: "saved.json" } } },
    ]);
    expect(w.choose("t2")).toEqual({ kind: "thread", remoteId: "t1" });
  });

  it("an unsaved tab closed leaves its threads unbound", async () => {
    const { w, requests } = threads();
    w.listed([listedThread("t1", "Unsaved Workflow.json", 1)]);
    await w.onChange({ type: "closed", key: "Unsaved Workflow.json" });
    expect(w.workflowOf("t1")).toBeNull();
    expect(requests[0]?.init).toEqual({ method: "POST", body: { from: "Unsaved Workflow.json", to: null } });
  });

  it("move() sends the PATCH and keeps what the server answered", async () => {
    const { w, requests } = threads({
      request: async <T,>(path: string, init?: unknown) => {
        requests.push({ path, init });
        return listedThread("t 1", "b.json", 5) as T;
      },
    });
    w.listed([listedThread("t 1", "a.json", 5)]);
    await w.move("t 1", "b.json");
    expect(requests).toEqual([{ path: "/api/assistant/threads/t%201", init: { method: "PATCH", body: { workflow: "b.json" } } }]);
    expect(w.workflowOf("t 1")).toBe("b.json");
  });

  it("names a workflow as a person reads it: its tab's name while one is open", async () => {
    expect(workflowName("portraits/flux.json")).toBe("flux");
    expect(workflowName("Unsaved Workflow (2).json")).toBe("Unsaved Workflow (2)");
    expect(workflowName("odd")).toBe("odd");
    expect(workflowName("unsaved:0b5c")).toBe("an unsaved workflow");
    const { workflows, app } = tabs();
    const { w } = threads();
    w.follow(app);
    await workflows.newBlank();
    expect(w.nameOf(`unsaved:${FIRST}`)).toBe("Unsaved Workflow");
    expect(w.nameOf(activeWorkflowKey(app)!)).toBe("Unsaved Workflow (2)");
    await workflows.closeTab(workflows.openWorkflows[0]!);
    expect(w.nameOf(`unsaved:${FIRST}`)).toBe("Unsaved Workflow"); // as it was last seen
    expect(w.nameOf("unsaved:never-seen")).toBe("an unsaved workflow");
  });
});

describe("threads an earlier version bound to a tab's name", () => {
  it("stay with a saved workflow of that path; a temporary tab's name is unbound", () => {
    const saved = new Set(["portrait.json", "studio/flux.json"]);
    const bound = ["Unsaved Workflow.json", "portrait.json", null, "unsaved:0b5c", "Unsaved Workflow (2).json", "Unsaved Workflow.json", "gone.json"];
    expect(staleKeys(bound, saved)).toEqual(["Unsaved Workflow.json", "Unsaved Workflow (2).json", "gone.json"]);
  });

  it("are unbound on the server once, after the first list, when the saved workflows can be read", async () => {
    const asked: string[] = [];
    // ComfyUI's GET /v2/userdata: the user's folder walked (dirs first), paths from its root
    const entries = [
      { name: "workflows", path: "workflows", type: "directory" },
      { name: "comfy.settings.json", path: "comfy.settings.json", type: "file", size: 2, modified: 1.5 },
      { name: "portrait.json", path: "workflows/portrait.json", type: "file", size: 9, modified: 1.5 },
    ];
    let answer: Response | Error = new Response(JSON.stringify(entries), { status: 200 });
    const { workflows } = tabs();
    const app = {
      extensionManager: { workflow: workflows },
      api: {
        fetchApi: async (route: string) => {
          asked.push(route);
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
    } as unknown as ComfyApp;
    const { w, requests } = threads();
    w.follow(app);
    w.listed([
      listedThread("old-tab", "Unsaved Workflow.json", 1),
      listedThread("old-file", "portrait.json", 2),
      listedThread("new-tab", `unsaved:${FIRST}`, 3),
    ]);
    await vi.waitFor(() => expect(w.workflowOf("old-tab")).toBeNull());
    expect(asked).toEqual(["/v2/userdata"]); // (never /userdata?dir=workflows, which 404s for a new user)
    expect(requests).toEqual([{ path: "/api/assistant/threads/rebind", init: { method: "POST", body: { from: "Unsaved Workflow.json", to: null } } }]);
    expect([w.workflowOf("old-file"), w.workflowOf("new-tab")]).toEqual(["portrait.json", `unsaved:${FIRST}`]);
    w.listed([listedThread("old-tab", "Unsaved Workflow.json", 1)]); // checked once per page
    await Promise.resolve();
    expect(asked).toHaveLength(1);

    // The saved workflows unknown (ComfyUI answered 500, or failed): nothing is unbound.
    for (answer of [new Response("no", { status: 500 }), new Error("offline")]) {
      const other = threads();
      other.w.follow(app);
      other.w.listed([listedThread("old-tab", "Unsaved Workflow.json", 1)]);
      await new Promise((done) => setTimeout(done, 10));
      expect([other.w.workflowOf("old-tab"), other.requests]).toEqual(["Unsaved Workflow.json", []]);
    }
    // A new user's folder (no workflows folder): no saved workflow, so a name binds nothing.
    answer = new Response("[]", { status: 200 });
    const none = threads();
    none.w.follow(app);
    none.w.listed([listedThread("old-file", "portrait.json", 1)]);
    await vi.waitFor(() => expect(none.w.workflowOf("old-file")).toBeNull());
  });
});
