import { describe, expect, it } from "vitest";
import { workflowKey, type LGraphNode } from "../host/comfy";
import type { PlaygroundWorkflows } from "../playground/workflows";
import { openInNewTab, restoreWorkflow, serializeWorkflow } from "./checkpointGraph";
import { createTestApp, fixtureJson, type TestSetup } from "../../test/testing";

/** A test app with workflow tabs, on a tab of its own holding `graph`. */
async function withTabs(graph: unknown = { nodes: [], links: [], version: 0.4 }) {
  const t = createTestApp({ tabs: true });
  const tabs = t.app.extensionManager.workflow as unknown as PlaygroundWorkflows;
  await t.app.loadGraphData(graph);
  return { t, tabs, key: workflowKey(tabs.activeWorkflow)! };
}

const types = (t: TestSetup) => (t.graph.nodes as LGraphNode[]).map((n) => n.type).sort();
const undo = (tabs: PlaygroundWorkflows) => tabs.activeWorkflow!.changeTracker.undo();

describe("restoring a checkpoint's graph", () => {
  it("restores it in the tab as one undo step: Ctrl+Z brings the newer graph back", async () => {
    const { t, tabs, key } = await withTabs();
    await t.tools.addNode({ nodeType: "CheckpointLoaderSimple" });
    const checkpoint = serializeWorkflow(t.app);
    await t.tools.addNode({ nodeType: "KSampler" });
    await t.tools.addNode({ nodeType: "VAEDecode" });
    const tracker = tabs.activeWorkflow!.changeTracker;
    const steps = tracker.undoQueue.length;

    expect(await restoreWorkflow(t.app, key, checkpoint)).toEqual({ ok: true, tab: "Unsaved Workflow (2)", switched: false });
    expect(types(t)).toEqual(["CheckpointLoaderSimple"]);
    expect(tracker.undoQueue).toHaveLength(steps + 1);
    expect(tracker.redoQueue).toEqual([]);

    await undo(tabs);
    expect(types(t)).toEqual(["CheckpointLoaderSimple", "KSampler", "VAEDecode"]);
    await undo(tabs); // and the edits before it, one by one, as before
    expect(types(t)).toEqual(["CheckpointLoaderSimple", "KSampler"]);
  });

  it("switches to the tab the checkpoint belongs to and leaves the other tab alone", async () => {
    const { t, tabs, key } = await withTabs();
    await t.tools.addNode({ nodeType: "EmptyImage" });
    const checkpoint = serializeWorkflow(t.app);
    await t.tools.addNode({ nodeType: "ImageInvert" });
    const first = tabs.activeWorkflow!;
    await tabs.newBlank();
    await t.tools.addNode({ nodeType: "PreviewImage" });
    const second = tabs.activeWorkflow!;

    const outcome = await restoreWorkflow(t.app, key, checkpoint);
    expect(outcome).toMatchObject({ ok: true, switched: true });
    expect(tabs.activeWorkflow).toBe(first);
    expect(types(t)).toEqual(["EmptyImage"]);
    await undo(tabs);
    expect(types(t)).toEqual(["EmptyImage", "ImageInvert"]);
    await tabs.openWorkflow(second);
    expect(types(t)).toEqual(["PreviewImage"]);
  });

  it("says when the checkpoint's tab is closed, and opens it in a new tab when asked", async () => {
    const { t, tabs } = await withTabs();
    await t.tools.addNode({ nodeType: "EmptyImage" });
    const checkpoint = serializeWorkflow(t.app);
    await t.tools.addNode({ nodeType: "ImageInvert" });
    expect(await restoreWorkflow(t.app, "portraits/closed.json", checkpoint)).toEqual({ ok: false, closed: true });
    expect(types(t)).toEqual(["EmptyImage", "ImageInvert"]);

    const count = tabs.openWorkflows.length;
    expect(await openInNewTab(t.app, checkpoint)).toMatch(/^Unsaved Workflow/);
    expect(tabs.openWorkflows).toHaveLength(count + 1);
    expect(types(t)).toEqual(["EmptyImage"]);
  });

  it("restores inside subgraphs, and adds no step when the graph is as it was", async () => {
    const { t, tabs, key } = await withTabs(fixtureJson("subgraph-flux-dev.json"));
    const inner = (id: number) => (t.graph.getNodeById(56) as unknown as { subgraph: { getNodeById(id: number): LGraphNode | null } }).subgraph.getNodeById(id);
    const steps = () => inner(52)!.widgets!.find((w) => w.name === "steps")!.value;
    const checkpoint = serializeWorkflow(t.app);
    expect(await t.tools.setWidgetValues({ nodeId: "56:52", values: { steps: 33 } })).toMatchObject({ ok: true });
    await t.tools.removeNodes({ nodeIds: ["56:54"] });

    expect(await restoreWorkflow(t.app, key, checkpoint)).toMatchObject({ ok: true });
    expect(steps()).toBe(20);
    expect(inner(54)).not.toBeNull();
    const tracker = tabs.activeWorkflow!.changeTracker;
    const queued = tracker.undoQueue.length;
    expect(await restoreWorkflow(t.app, key, serializeWorkflow(t.app))).toMatchObject({ ok: true, unchanged: true });
    expect(tracker.undoQueue).toHaveLength(queued);
    await undo(tabs); // the newer graph: both edits
    expect(steps()).toBe(33);
    expect(inner(54) ?? null).toBeNull();
  });
});
