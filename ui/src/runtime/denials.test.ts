// A denied call stays denied (issue 35, item 1): the user's Deny, with their words if they wrote
// any, ends the call "output-denied" (the server's tool-output-denied on the resubmit), and a
// later message sends it as it was, never as "cancelled"; a call still waiting when the user
// sends a message ends cancelled, and its card goes.
import { isToolUIPart, type UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChatStore } from "./chatStore";
import { askingChat } from "../../test/approvalTesting";
import { CANCELLED } from "./pendingCalls";

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

function toolPart(messages: UIMessage[] | undefined, id = "call_1") {
  return (messages ?? []).flatMap((m) => m.parts).find((p) => isToolUIPart(p) && p.toolCallId === id);
}

const removalChat = (maxSteps = 25) => askingChat("removeNodes", (n) => ({ nodeIds: [String(n.decode.id)] }), maxSteps);

async function asked(store: ChatStore, entry: ReturnType<typeof removalChat>["entry"]) {
  await store.sendMessage(entry, { text: "remove the decoder" });
  await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
}

describe("a denied call", () => {
  it("ends denied with the user's words, and a later message sends it as it was", async () => {
    const { t, nodes, server, store, entry } = removalChat();
    await asked(store, entry);
    await store.respondToApproval("call_1", false, false, "  I still need it  ");
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    const approval = { id: "approval_call_1", requestReason: "Remove a node from the workflow, with the links that touch it.", approved: false, reason: "I still need it" };
    expect(toolPart(server.chatRequests[1]!.messages)).toMatchObject({ state: "approval-responded", approval });
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    expect(toolPart(entry.chat.messages)).toMatchObject({ state: "output-denied", approval });

    await store.sendMessage(entry, { text: "hi" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(3));
    const [, second, third] = server.chatRequests;
    const sent = toolPart(third!.messages) as Record<string, unknown>;
    expect(sent).toEqual({ ...(toolPart(second!.messages) as object), state: "output-denied", approval });
    expect(JSON.stringify(third)).not.toContain("cancelled");
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy();
  });

  it("that did not resubmit (the step limit) still goes as denied with the next message", async () => {
    const { server, store, entry } = removalChat(1);
    await asked(store, entry);
    await store.respondToApproval("call_1", false);
    await vi.waitFor(() => expect(toolPart(entry.chat.messages)).toMatchObject({ state: "approval-responded" }));
    expect(server.chatRequests).toHaveLength(1); // (one step allowed: no resubmit)
    await store.sendMessage(entry, { text: "hi" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(toolPart(server.chatRequests[1]!.messages)).toMatchObject({ state: "output-denied", approval: { id: "approval_call_1", approved: false } });
  });
});

describe("a message sent while a card waits", () => {
  it("cancels the call, takes the card away and ends the tool", async () => {
    const { t, nodes, server, store, entry } = removalChat();
    await asked(store, entry);
    expect(entry.pendingTools).toBe(1);
    await store.sendMessage(entry, { text: "never mind, tell me a joke" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    const part = toolPart(server.chatRequests[1]!.messages);
    expect(part).toMatchObject({ state: "output-error", errorText: CANCELLED });
    expect(part).not.toHaveProperty("approval");
    expect(store.approvalOf("call_1")).toBeUndefined();
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy();
    expect(localStorage.getItem("comfyui-assistant.waiting-approvals")).toBeNull();
  });
});
