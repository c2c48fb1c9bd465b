// Approvals end to end through the chat store: a removal waits in the AI SDK's
// "approval-requested" state; Allow runs it, Deny leaves the graph alone and resubmits with the
// SDK's denied answer; "without asking" holds for the thread; a paid run asks whatever the choice.
import { generateId, isToolUIPart, type UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore } from "./chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer, type ChatRequestBody } from "../../test/fakeServer";
import { buildTxt2Img, createTestApp } from "../../test/testing";

afterEach(() => {
  vi.unstubAllGlobals();
});

type ToolPart = { state: string; output?: unknown; approval?: { id: string; approved?: boolean; reason?: string } };

function toolPart(body: ChatRequestBody | undefined, id: string): ToolPart | undefined {
  const parts = (body?.messages ?? []).flatMap((m: UIMessage) => m.parts);
  return parts.find((p) => isToolUIPart(p) && p.toolCallId === id) as ToolPart | undefined;
}

/** A txt2img graph; the model calls `name` with `args` after each user message, then says "ok". */
function setUp(name: string, args: (nodes: ReturnType<typeof buildTxt2Img>) => Record<string, unknown>, askBeforeEdits = true) {
  const t = createTestApp();
  const nodes = buildTxt2Img(t);
  let calls = 0;
  const server = fakeServer((body) =>
    sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer(name, args(nodes), `call_${++calls}`) : textAnswer("ok")),
  );
  vi.stubGlobal("fetch", server.fetch);
  const settings = { maxSteps: 25, debugContext: false, askBeforeEdits };
  const store = new ChatStore({ settings, tools: () => t.tools });
  const entry = store.entryFor(`__LOCALID_approve_${generateId()}`, undefined);
  return { t, nodes, server, store, entry };
}

const removeDecode = (n: ReturnType<typeof buildTxt2Img>) => ({ nodeIds: [String(n.decode.id)] });

describe("approvals", () => {
  it("a removal waits for Allow, in the SDK's approval state, then runs", async () => {
    const { t, nodes, server, store, entry } = setUp("removeNodes", removeDecode);
    await store.sendMessage(entry, { text: "remove the decoder" });
    await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
    expect(store.approvalOf("call_1")).toEqual({
      kind: "graph-edit",
      action: "Remove a node from the workflow, with the links that touch it.",
      nodes: [`VAEDecode#${nodes.decode.id}`],
    });
    const part = entry.chat.messages.at(-1)!.parts.find(isToolUIPart) as unknown as ToolPart;
    expect(part.state).toBe("approval-requested");
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy(); // nothing removed yet
    expect(server.chatRequests).toHaveLength(1);

    await store.respondToApproval("call_1", true);
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeFalsy();
    expect(toolPart(server.chatRequests[1], "call_1")).toMatchObject({
      state: "output-available",
      output: { ok: true },
      approval: { id: "approval_call_1", approved: true },
    });
  });

  it("Deny leaves the graph alone and the model hears it, at once", async () => {
    const { t, nodes, server, store, entry } = setUp("removeNodes", removeDecode);
    await store.sendMessage(entry, { text: "remove the decoder" });
    await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
    await store.respondToApproval("call_1", false);
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(toolPart(server.chatRequests[1], "call_1")).toMatchObject({
      state: "approval-responded",
      approval: { id: "approval_call_1", approved: false },
    });
    expect(toolPart(server.chatRequests[1], "call_1")?.approval).not.toHaveProperty("reason"); // (no words given)
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy();
    expect(toolPart({ messages: entry.chat.messages } as ChatRequestBody, "call_1")?.output).toBeUndefined();
  });

  it("'without asking' holds for the thread; the setting starts a thread without asking", async () => {
    const { t, nodes, server, store, entry } = setUp("removeNodes", (n) => ({ nodeIds: [String(n.save.id)] }));
    await store.sendMessage(entry, { text: "remove the save node" });
    await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
    await store.respondToApproval("call_1", true, true);
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    expect(t.app.graph.getNodeById(nodes.save.id)).toBeFalsy();
    await store.sendMessage(entry, { text: "and the decoder" }); // (call_2 removes the save node again: gone)
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(4));
    expect(store.approvalOf("call_2")).toBeUndefined();

    const quiet = setUp("removeNodes", removeDecode, false);
    await quiet.store.sendMessage(quiet.entry, { text: "remove the decoder" });
    await vi.waitFor(() => expect(quiet.server.chatRequests).toHaveLength(2));
    expect(quiet.t.app.graph.getNodeById(quiet.nodes.decode.id)).toBeFalsy();
  });

  it("a run of a large batch asks, with the node and its batch size", async () => {
    const { nodes, store, entry } = setUp("queueWorkflow", () => ({ waitForResult: false }), false);
    nodes.latent.widgets!.find((w) => w.name === "batch_size")!.value = 16;
    await store.sendMessage(entry, { text: "run 16" });
    await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
    expect(store.approvalOf("call_1")).toEqual({
      kind: "large-batch",
      action: "Run a batch of 16 images.",
      nodes: [`EmptyLatentImage#${nodes.latent.id} batch_size 16`],
    });
  });
});
