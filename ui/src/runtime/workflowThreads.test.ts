import { afterEach, describe, expect, it, vi } from "vitest";
import { activeWorkflowKey, watchWorkflows, type ComfyApp, type WorkflowChange } from "../comfy";
import { PlaygroundWorkflows } from "../playground/workflows";
import type { ServerThread } from "./api";
import { threadsOf, workflowName, WorkflowThreads, type WorkflowThreadsDeps } from "./workflowThreads";

afterEach(() => vi.useRealTimers());

/** ComfyUI's workflow store as the playground emulates it (Pinia's $onAction included). */
function tabs() {
  const workflows = new PlaygroundWorkflows({ serialize: () => ({}), load: () => {} });
  const app = { extensionManager: { workflow: workflows } } as unknown as ComfyApp;
  return { workflows, app };
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
  it("reports a tab switch, a rename (once, not also as a switch) and an unsaved tab closed", async () => {
    const { workflows, app } = tabs();
    const seen: WorkflowChange[] = [];
    const stop = watchWorkflows(app, (change) => seen.push(change));
    expect(activeWorkflowKey(app)).toBe("Unsaved Workflow.json");

    await workflows.newBlank();
    expect(seen).toEqual([{ type: "active", key: "Unsaved Workflow (2).json" }]);

    await workflows.renameWorkflow(workflows.activeWorkflow!, "workflows/portraits/flux.json");
    expect(seen.slice(1)).toEqual([{ type: "renamed", from: "Unsaved Workflow (2).json", to: "portraits/flux.json" }]);
    expect(activeWorkflowKey(app)).toBe("portraits/flux.json");

    // Closing the saved tab is no "closed" (its threads keep it); the first tab shows again.
    await workflows.closeTab(workflows.activeWorkflow!);
    expect(seen.slice(2)).toEqual([{ type: "active", key: "Unsaved Workflow.json" }]);
    // Closing the unsaved one (the last tab: a new one opens first): its name may come back.
    await workflows.closeTab(workflows.activeWorkflow!);
    expect(seen.slice(3)).toEqual([
      { type: "active", key: "Unsaved Workflow (2).json" },
      { type: "closed", key: "Unsaved Workflow.json" },
    ]);

    stop();
    await workflows.newBlank();
    expect(seen).toHaveLength(5);
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

  it("names a workflow as a person reads it", () => {
    expect(workflowName("portraits/flux.json")).toBe("flux");
    expect(workflowName("Unsaved Workflow (2).json")).toBe("Unsaved Workflow (2)");
    expect(workflowName("odd")).toBe("odd");
  });
});
