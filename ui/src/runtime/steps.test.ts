import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { lastUserId, shouldResubmit, stepLimitReached, stepsSinceLastUser } from "./steps";

const user = (id: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: "hi" }] });
const tool = (state: "input-available" | "output-available", providerExecuted = false) =>
  ({
    type: "tool-addNode",
    toolCallId: `c${Math.random()}`,
    state,
    input: { type: "KSampler" },
    ...(state === "output-available" ? { output: { ok: true } } : {}),
    ...(providerExecuted ? { providerExecuted: true } : {}),
  }) as UIMessage["parts"][number];
const step = { type: "step-start" } as UIMessage["parts"][number];
const assistant = (id: string, parts: UIMessage["parts"]): UIMessage => ({ id, role: "assistant", parts });

describe("steps", () => {
  it("counts the model steps since the last user message", () => {
    const messages = [user("u1"), assistant("a1", [step, step]), user("u2"), assistant("a2", [step, tool("output-available"), step])];
    expect(stepsSinceLastUser(messages)).toBe(2);
    expect(lastUserId(messages)).toBe("u2");
    expect(stepsSinceLastUser([user("u")])).toBe(0);
    expect(lastUserId([])).toBeNull();
  });

  it("resubmits once every panel tool has its output", () => {
    const waiting = [user("u"), assistant("a", [step, tool("input-available")])];
    const done = [user("u"), assistant("a", [step, tool("output-available")])];
    const state = { maxSteps: 25, haltedAfter: null };
    expect(shouldResubmit(waiting, state)).toBe(false);
    expect(shouldResubmit(done, state)).toBe(true);
  });

  it("does not resubmit for server tools only or plain text", () => {
    const state = { maxSteps: 25, haltedAfter: null };
    expect(shouldResubmit([user("u"), assistant("a", [step, tool("output-available", true)])], state)).toBe(false);
    expect(shouldResubmit([user("u"), assistant("a", [step, { type: "text", text: "done", state: "done" }])], state)).toBe(false);
  });

  it("stops at the step limit", () => {
    const parts = Array.from({ length: 3 }, () => [step, tool("output-available")]).flat();
    const messages = [user("u"), assistant("a", parts)];
    expect(shouldResubmit(messages, { maxSteps: 4, haltedAfter: null })).toBe(true);
    expect(shouldResubmit(messages, { maxSteps: 3, haltedAfter: null })).toBe(false);
    expect(stepLimitReached(messages, 3)).toBe(true);
    expect(stepLimitReached(messages, 4)).toBe(false);
  });

  it("never resubmits a stopped turn, but a new message starts afresh", () => {
    const messages = [user("u1"), assistant("a", [step, tool("output-available")])];
    expect(shouldResubmit(messages, { maxSteps: 25, haltedAfter: "u1" })).toBe(false);
    const next = [...messages, user("u2"), assistant("b", [step, tool("output-available")])];
    expect(shouldResubmit(next, { maxSteps: 25, haltedAfter: "u1" })).toBe(true);
  });
});

describe("a call the user answered", () => {
  const step = (part: Record<string, unknown>) =>
    [
      { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] },
      { id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "tool-removeNodes", toolCallId: "c1", input: {}, ...part }] },
    ] as unknown as Parameters<typeof shouldResubmit>[0];
  const state = { maxSteps: 25, haltedAfter: null };

  it("resubmits at once when denied, or when a server tool was allowed (the server runs it)", () => {
    expect(shouldResubmit(step({ state: "approval-responded", approval: { id: "a", approved: false } }), state)).toBe(true);
    const server = { state: "approval-responded", providerExecuted: true, approval: { id: "a", approved: true } };
    expect(shouldResubmit(step(server), state)).toBe(true);
  });

  it("waits for the panel's output when a panel tool was allowed, and for the user while asked", () => {
    expect(shouldResubmit(step({ state: "approval-responded", approval: { id: "a", approved: true } }), state)).toBe(false);
    expect(shouldResubmit(step({ state: "approval-requested", approval: { id: "a" } }), state)).toBe(false);
    expect(shouldResubmit(step({ state: "approval-requested", providerExecuted: true, approval: { id: "a" } }), state)).toBe(false);
  });
});
