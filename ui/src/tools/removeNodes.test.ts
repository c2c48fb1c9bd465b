import { describe, expect, it } from "vitest";
import { buildTxt2Img, createTestApp } from "../../test/testing";

describe("removeNodes", () => {
  it("removes nodes with their links, as one undo step", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    // KSampler has 4 links in and 1 out; VAE Decode shares that one and adds 2 more.
    expect(await t.tools.removeNodes({ nodeIds: [5, 6, 5] })).toEqual({ ok: true, graph: "root", removed: [5, 6], linksRemoved: 7 });
    expect(t.graph.nodes.map((n) => n.id)).toEqual([1, 2, 3, 4, 7]);
    expect(t.graph.links.size).toBe(2);
    expect(t.tracker.calls).toEqual(["beforeChange", "afterChange"]);
    t.tracker.undo();
    expect(t.graph.nodes).toHaveLength(7);
    expect(t.graph.links.size).toBe(9);
  });

  it("removes an unlinked node", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    await t.tools.addNode({ nodeType: "PreviewImage" });
    expect(await t.tools.removeNodes({ nodeIds: [8] })).toEqual({ ok: true, graph: "root", removed: [8], linksRemoved: 0 });
  });

  it("removes nothing when an id is unknown", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.removeNodes({ nodeIds: [5, 40, 41] })).toEqual({
      ok: false,
      error: "No nodes have ids 40, 41; nothing was removed. Node ids in the graph: 1, 2, 3, 4, 5, 6, 7.",
    });
    expect(t.graph.nodes).toHaveLength(7);
    expect(t.tracker.calls).toEqual([]);
  });

  it("removes nothing when a node is locked against deletion", async () => {
    const t = createTestApp();
    const { save } = buildTxt2Img(t);
    save.ignore_remove = true;
    expect(await t.tools.removeNodes({ nodeIds: [6, 7] })).toEqual({
      ok: false,
      error: "SaveImage#7 cannot be removed (locked against deletion); nothing was removed.",
    });
    expect(t.graph.nodes).toHaveLength(7);
    expect(t.tracker.calls).toEqual([]);
  });

  it("says which nodes ComfyUI kept", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const remove = t.graph.remove.bind(t.graph);
    t.graph.remove = (node) => {
      if (node.id !== 7) remove(node);
    };
    expect(await t.tools.removeNodes({ nodeIds: [6, 7] })).toEqual({
      ok: false,
      error: "ComfyUI did not remove SaveImage#7; removed: 6.",
      removed: [6],
    });
    expect(await t.tools.removeNodes({ nodeIds: [7] })).toEqual({
      ok: false,
      error: "ComfyUI did not remove SaveImage#7; nothing was removed.",
      removed: [],
    });
  });

  it("fails on invalid arguments", async () => {
    const t = createTestApp();
    expect(await t.tools.removeNodes({ nodeIds: [] })).toEqual({
      ok: false,
      error: "Invalid arguments for removeNodes: 'nodeIds' must have at least 1 item(s).",
    });
    expect(await t.tools.removeNodes({ nodeIds: ["five"] })).toEqual({
      ok: false,
      error: `"five" is not a node id: ids are numbers like 5 (a node of the graph the user is viewing), or paths like "12:5" (node 5 inside subgraph node 12) and "root:5" (node 5 of the root graph). Nothing was removed.`,
    });
  });
});
