// Node ids of both kinds: numbers (frontends up to about 1.48, LiteGraph 0.17.2) and strings
// (later frontends: "5", a subgraph's boundary "-10"/"-20").
import { describe, expect, it } from "vitest";
import type { LGraph } from "../host/comfy";
import { nodeLabel } from "./context";
import { fromSubgraphInput, LinkIndex, nodeById, reaches, sameId, toSubgraphOutput, type LinkLike } from "./links";
import { createTestApp, place, useStringIds } from "../../test/testing";

describe("ids of both kinds", () => {
  it("compares a number with its string, and nothing with null or undefined", () => {
    expect(sameId(5, "5")).toBe(true);
    expect(sameId("5", 5)).toBe(true);
    expect(sameId("5", "5")).toBe(true);
    expect(sameId(-10, "-10")).toBe(true);
    expect(sameId(5, 6)).toBe(false);
    expect(sameId("5", "05")).toBe(false);
    expect(sameId(null, "null")).toBe(false);
    expect(sameId(undefined, undefined)).toBe(false);
  });

  it("knows a subgraph's boundary in either kind", () => {
    expect([-10, "-10"].map(fromSubgraphInput)).toEqual([true, true]);
    expect([-20, "-20"].map(toSubgraphOutput)).toEqual([true, true]);
    expect([10, "-20", null, undefined].map(fromSubgraphInput)).toEqual([false, false, false, false]);
    expect([20, "-10", null].map(toSubgraphOutput)).toEqual([false, false, false]);
  });

  it("finds nodes and follows links whatever kind the graph keeps", () => {
    for (const stringIds of [false, true]) {
      const t = createTestApp();
      const a = place(t, "EmptyImage", [0, 0]);
      const b = place(t, "ImageInvert", [300, 0]);
      const c = place(t, "PreviewImage", [600, 0]);
      a.connect(0, b, 0);
      b.connect(0, c, 0);
      if (stringIds) useStringIds(t.graph);
      expect(typeof a.id).toBe(stringIds ? "string" : "number");
      for (const id of [a.id, String(a.id), Number(a.id)]) expect(nodeById(t.graph, id)).toBe(a);
      expect(nodeById(t.graph, "-1")).toBeUndefined();
      const index = new LinkIndex(t.graph as LGraph);
      for (const id of [b.id, String(b.id), Number(b.id)]) {
        expect((index.into(id, 0) as LinkLike).origin_id).toEqual(stringIds ? String(a.id) : a.id);
        expect(index.from(id).map((l) => sameId(l.target_id, c.id))).toEqual([true]);
      }
      expect(index.touching(b)).toHaveLength(2);
      expect([reaches(a, c), reaches(c, a)]).toEqual([true, false]);
    }
  });

  it("names a node not added yet by its type, whichever kind its -1 is", () => {
    const t = createTestApp();
    const node = t.lg.createNode("KSampler")!;
    expect(nodeLabel(node)).toBe("KSampler");
    node.id = "-1" as unknown as number;
    expect(nodeLabel(node)).toBe("KSampler");
    node.id = "7" as unknown as number;
    expect(nodeLabel(node)).toBe("KSampler#7");
  });
});
