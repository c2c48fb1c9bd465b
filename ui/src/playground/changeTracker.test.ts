import { describe, expect, it } from "vitest";
import { PlaygroundChangeTracker } from "./changeTracker";

function fakeGraph(initial: unknown) {
  const graph = {
    state: structuredClone(initial) as { nodes: { id: number; order?: number }[]; extra?: unknown },
    serialize: () => structuredClone(graph.state),
    load: (state: unknown) => {
      graph.state = structuredClone(state) as typeof graph.state;
    },
  };
  return graph;
}

describe("the playground's change tracker (ComfyUI's undo model)", () => {
  it("records a change on checkState and undoes/redoes it", async () => {
    const graph = fakeGraph({ nodes: [{ id: 1 }] });
    const tracker = new PlaygroundChangeTracker(graph);
    graph.state.nodes.push({ id: 2 });
    tracker.checkState();
    expect(tracker.undoQueue).toHaveLength(1);
    await tracker.undo();
    expect(graph.state.nodes.map((n) => n.id)).toEqual([1]);
    await tracker.redo();
    expect(graph.state.nodes.map((n) => n.id)).toEqual([1, 2]);
  });

  it("records one step for every change between beforeChange and afterChange", async () => {
    const graph = fakeGraph({ nodes: [] });
    const tracker = new PlaygroundChangeTracker(graph);
    tracker.beforeChange();
    graph.state.nodes.push({ id: 1 });
    tracker.checkState(); // inside the transaction: nothing yet
    graph.state.nodes.push({ id: 2 });
    tracker.afterChange();
    expect(tracker.undoQueue).toHaveLength(1);
    await tracker.undo();
    expect(graph.state.nodes).toEqual([]);
  });

  it("ignores the view, node order and execution order", () => {
    const graph = fakeGraph({ nodes: [{ id: 1, order: 0 }, { id: 2, order: 1 }], extra: { ds: { scale: 1 } } });
    const tracker = new PlaygroundChangeTracker(graph);
    graph.state = { nodes: [{ id: 2, order: 0 }, { id: 1, order: 1 }], extra: { ds: { scale: 2 } } };
    tracker.checkState();
    expect(tracker.undoQueue).toHaveLength(0);
  });
});
