import { describe, expect, it } from "vitest";
import { isFailedOutput, runPanelTool } from "./toolRunner";

const kinds = new Map<string, "panel" | "server">([
  ["addNode", "panel"],
  ["searchInstalledNodes", "server"],
]);

describe("runPanelTool", () => {
  it("runs a panel tool with its input", async () => {
    const tools = { addNode: async (input: unknown) => ({ ok: true, got: input }) };
    expect(await runPanelTool("addNode", { type: "KSampler" }, tools, kinds)).toEqual({ output: { ok: true, got: { type: "KSampler" } } });
  });

  it("passes a tool's own failure through as its output", async () => {
    const tools = { addNode: async () => ({ ok: false, error: "no such node type" }) };
    const outcome = await runPanelTool("addNode", {}, tools, kinds);
    expect(outcome).toEqual({ output: { ok: false, error: "no such node type" } });
    expect(isFailedOutput((outcome as { output: unknown }).output)).toBe(true);
  });

  it("turns a throw into an error", async () => {
    const tools = {
      addNode: async () => {
        throw new Error("boom");
      },
    };
    expect(await runPanelTool("addNode", {}, tools, kinds)).toEqual({ errorText: "addNode failed: boom" });
  });

  it("refuses server tools, unknown tools and missing implementations", async () => {
    expect(await runPanelTool("searchInstalledNodes", {}, {}, kinds)).toHaveProperty("errorText");
    expect(await runPanelTool("nope", {}, { nope: async () => 1 }, kinds)).toEqual({
      errorText: "There is no tool called nope. Use one of the tools offered.",
    });
    expect(await runPanelTool("addNode", {}, {}, kinds)).toHaveProperty("errorText");
    expect(await runPanelTool("toString", {}, {}, null)).toHaveProperty("errorText");
  });

  it("still runs a tool when the registry could not be read", async () => {
    expect(await runPanelTool("addNode", {}, { addNode: async () => undefined }, null)).toEqual({ output: { ok: true } });
  });
});
