import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { setLocale } from "../i18n";
import { DelegateDetails, delegateView, usageText } from "./DelegateCard";
import type { DelegateProgress, DelegateResult, DelegationTrace } from "./delegate.generated";

afterEach(cleanup);
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

const args = { task: "Which upscale nodes are installed?" };
const usage = { steps: 2, tokens: 1834, seconds: 3.25 };
const progress: DelegateProgress = {
  status: "running",
  task: args.task,
  steps: 1,
  tools: [
    { name: "searchInstalledNodes", args: "upscale", state: "done" },
    { name: "getNodeDefinition", args: "ImageUpscaleWithModel", state: "running" },
  ],
  usage,
};
const result: DelegateResult = {
  ok: true,
  answer: "Use ImageUpscaleWithModel.",
  facts: ["ImageUpscaleWithModel: image, upscale_model"],
  sources: ["searchInstalledNodes: upscale", "getNodeDefinition: ImageUpscaleWithModel"],
  usage,
  format: "json",
};

function part(value: unknown, status: "running" | "complete" | "incomplete" = "complete", isError = false) {
  const type = status === "incomplete" ? { type: status, reason: "cancelled" as const } : { type: status };
  return { args, result: value, isError, status: type, toolCallId: "d1" } as Parameters<typeof delegateView>[0];
}

describe("delegateView", () => {
  it("follows the call from its progress to its result", () => {
    expect(delegateView(part(undefined, "running"), true).state).toBe("running");
    expect(delegateView(part(progress), true)).toMatchObject({ state: "running", progress, task: args.task });
    expect(delegateView(part(result), false)).toMatchObject({ state: "done", result, error: null });
  });

  it("says when the task failed or was stopped", () => {
    const failed = { ...result, ok: false, error: "The delegated task did not finish: it ran out of time." };
    expect(delegateView(part(failed), false)).toMatchObject({ state: "failed", error: failed.error });
    expect(delegateView(part({ error: "boom" }, "complete", true), false)).toMatchObject({
      state: "failed",
      error: "boom",
    });
    // an interim output left when the answer stopped: the helper was stopped with it
    expect(delegateView(part(progress, "incomplete"), false).state).toBe("cancelled");
  });

  it("writes the usage in a few words", () => {
    expect(usageText(usage)).toBe("2 steps · 1,834 tokens · 3.3 s");
    expect(usageText({ steps: 1, tokens: 5, seconds: 0 })).toBe("1 step · 5 tokens · 0.0 s");
    setLocale("zh");
    try {
      expect(usageText(usage)).toBe("2 步 · 1,834 个 token · 3.3 秒");
    } finally {
      setLocale("en");
    }
  });
});

describe("DelegateDetails", () => {
  it("streams the helper's step and tools while it runs, without a trace button", () => {
    render(<DelegateDetails view={delegateView(part(progress), true)} loadTrace={async () => trace} />);
    expect(screen.getByLabelText("Delegated task: running").textContent).toContain("step 2");
    const tools = screen.getByRole("list", { name: "Tools the helper used" });
    expect([...tools.querySelectorAll("li")].map((li) => [li.textContent, li.dataset.state])).toEqual([
      ["✓ searchInstalledNodes: upscale", "done"],
      ["… getNodeDefinition: ImageUpscaleWithModel", "running"],
    ]);
    expect(screen.queryByRole("button", { name: "Show the full trace" })).toBeNull();
  });

  it("shows the result, and the full trace on demand", async () => {
    let asked = 0;
    const load = async () => {
      asked += 1;
      return trace;
    };
    render(<DelegateDetails view={delegateView(part(result), false)} loadTrace={load} />);
    expect(screen.getByLabelText("Delegated task: done")).toBeTruthy();
    expect(screen.getByText("Use ImageUpscaleWithModel.")).toBeTruthy();
    expect(screen.getByRole("list", { name: "Facts" }).textContent).toBe(result.facts[0]);
    expect(screen.getByText("2 steps · 1,834 tokens · 3.3 s")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Show the full trace" }));
    const shown = await screen.findByLabelText("Full trace");
    expect(asked).toBe(1);
    expect(shown.textContent).toContain("You are a research helper");
    expect(shown.textContent).toContain('searchInstalledNodes({"query":"upscale"})');
    expect(shown.textContent).toContain("Task: Which upscale nodes");
  });

  it("says why the trace could not be fetched", async () => {
    const load = () => Promise.reject(new Error("delegated task d1 in thread t does not exist"));
    render(<DelegateDetails view={delegateView(part(result), false)} loadTrace={load} />);
    fireEvent.click(screen.getByRole("button", { name: "Show the full trace" }));
    expect(await screen.findByText(/does not exist/)).toBeTruthy();
  });
});

const trace: DelegationTrace = {
  id: "msg_1",
  threadId: "t",
  messageId: "m",
  toolCallId: "d1",
  task: args.task,
  context: "",
  status: "done",
  system: "You are a research helper of ComfyUI Assistant.",
  messages: [
    { id: "task_1", role: "user", parts: [{ type: "text", text: `Task: ${args.task}` }] },
    {
      id: "msg_1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        {
          type: "tool-searchInstalledNodes",
          toolCallId: "c1",
          state: "output-available",
          input: { query: "upscale" },
          output: { results: [] },
        },
        { type: "text", text: '{"answer": "Use ImageUpscaleWithModel."}' },
      ],
    },
  ],
  result,
  budget: { steps: 6, tokens: 40000, seconds: 180 },
  createdAt: 0,
};
