import { describe, expect, it } from "vitest";
import { progressText } from "./ToolCard";

describe("a running tool's progress on its card", () => {
  it("says the node, the step, what was cached and run", () => {
    expect(progressText({ node: "12:5", step: 7, steps: 20, cached: 3, ran: 4 })).toBe(
      "Running: node 12:5 · step 7/20 · 3 cached · 4 run",
    );
    expect(progressText({ node: 9, cached: 0, ran: 1 })).toBe("Running: node 9 · 1 run");
  });

  it("says nothing before the run has said anything", () => {
    expect(progressText(undefined)).toBeNull();
    expect(progressText({ cached: 0, ran: 0 })).toBeNull();
  });
});
