// A page reload while an approval card waits (issue 35, item 6): the stored thread holds the call
// as the server knows it ("input-available"); the card comes back from what the browser kept,
// and Allow or Deny works as on the first card.
import { isToolUIPart, type UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore, type ChatEntry } from "./chatStore";
import { askingChat } from "../../test/approvalTesting";
import type { buildTxt2Img } from "../../test/testing";

type Args = (nodes: ReturnType<typeof buildTxt2Img>) => Record<string, unknown>;
const removeDecode: Args = (n) => ({ nodeIds: [String(n.decode.id)] });

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

const REQUEST = (id: number | string) => ({
  kind: "graph-edit",
  action: "Remove a node from the workflow, with the links that touch it.",
  nodes: [`VAEDecode#${id}`],
});

/** The thread as the server stored it: the call as it streamed, without the panel's question. */
function asStored(messages: UIMessage[]): UIMessage[] {
  return messages.map((m) => ({
    ...m,
    parts: m.parts.map((p) => {
      if (!isToolUIPart(p)) return p;
      const { approval: _approval, ...rest } = p as typeof p & { approval?: unknown };
      return { ...rest, state: "input-available" } as typeof p;
    }),
  }));
}

/** A card waits; the page reloads: a new store loads the stored thread, as the panel does. */
async function reloadedWhileAsking(name = "removeNodes", args = removeDecode, before?: (chat: ReturnType<typeof askingChat>) => void) {
  const chat = askingChat(name, args);
  before?.(chat);
  const { server, store, entry, t } = chat;
  await store.sendMessage(entry, { text: "remove the decoder" });
  await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
  server.threads.set(entry.serverId, { id: entry.serverId, title: "", archived: false, messages: asStored(entry.chat.messages), updatedAt: 1 });
  const reloaded = new ChatStore({ settings: { maxSteps: 25, debugContext: false, askBeforeEdits: true }, tools: () => t.tools, rememberThread: false });
  const again: ChatEntry = reloaded.entryFor("__LOCALID_reloaded", entry.serverId);
  const loaded = await reloaded.historyAdapter(again).withFormat!<UIMessage, Record<string, unknown>>({} as never).load();
  again.chat.messages = loaded.messages.map((item) => item.message); // (as assistant-ui sets them)
  return { ...chat, reloaded, again };
}

describe("a reload while a card waits", () => {
  it("shows the card again, and Allow runs the call and sends its result", async () => {
    const { t, nodes, server, reloaded, again } = await reloadedWhileAsking();
    expect(reloaded.approvalOf("call_1")).toEqual(REQUEST(nodes.decode.id));
    expect(again.chat.messages.at(-1)!.parts.find(isToolUIPart)).toMatchObject({ state: "approval-requested", approval: { id: "approval_call_1" } });
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy();

    await reloaded.respondToApproval("call_1", true);
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeFalsy();
    expect(server.chatRequests[1]!.messages.at(-1)!.parts.find(isToolUIPart)).toMatchObject({
      state: "output-available",
      output: { ok: true },
      approval: { id: "approval_call_1", approved: true },
    });
    expect(reloaded.approvalOf("call_1")).toBeUndefined();
    expect(localStorage.getItem("comfyui-assistant.waiting-approvals")).toBeNull();
  });

  it("shows the card again, and Deny leaves the graph alone and tells the model", async () => {
    const { t, nodes, server, reloaded, again } = await reloadedWhileAsking();
    await reloaded.respondToApproval("call_1", false, false, "not now");
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(server.chatRequests[1]!.messages.at(-1)!.parts.find(isToolUIPart)).toMatchObject({
      state: "approval-responded",
      approval: { id: "approval_call_1", approved: false, reason: "not now" },
    });
    await vi.waitFor(() => expect(again.chat.messages.at(-1)!.parts.find(isToolUIPart)).toMatchObject({ state: "output-denied" }));
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy();
  });

  it("asks again when the call, run afresh, would do something else than the card said", async () => {
    const batch = (chat: ReturnType<typeof askingChat>, size: number) => {
      chat.nodes.latent.widgets!.find((w) => w.name === "batch_size")!.value = size;
    };
    const chat = await reloadedWhileAsking("queueWorkflow", () => ({ waitForResult: false }), (c) => batch(c, 16));
    const { reloaded, again, server, t } = chat;
    expect(reloaded.approvalOf("call_1")).toMatchObject({ kind: "large-batch", action: "Run a batch of 16 images." });
    batch(chat, 32); // (changed while the page was away)
    await reloaded.respondToApproval("call_1", true);
    await vi.waitFor(() => expect(reloaded.approvalOf("call_1")).toMatchObject({ action: "Run a batch of 32 images." }));
    expect(again.chat.messages.at(-1)!.parts.find(isToolUIPart)).toMatchObject({ state: "approval-requested", approval: { id: "approval_call_1_again" } });
    expect(t.api.requests.filter((r) => r.route === "/prompt")).toHaveLength(0); // nothing queued yet
    expect(server.chatRequests).toHaveLength(1);
  });

  it("is forgotten when the call ended meanwhile (answered in another tab)", async () => {
    const { server, store, entry } = askingChat("removeNodes", removeDecode);
    await store.sendMessage(entry, { text: "remove the decoder" });
    await vi.waitFor(() => expect(store.approvalOf("call_1")).toBeDefined());
    const ended = asStored(entry.chat.messages).map((m) => ({
      ...m,
      parts: m.parts.map((p) => (isToolUIPart(p) ? ({ ...p, state: "output-denied", approval: { id: "approval_call_1", approved: false } } as typeof p) : p)),
    }));
    server.threads.set(entry.serverId, { id: entry.serverId, title: "", archived: false, messages: ended, updatedAt: 1 });
    const reloaded = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, tools: () => ({}), rememberThread: false });
    const again = reloaded.entryFor("__LOCALID_other", entry.serverId);
    const loaded = await reloaded.historyAdapter(again).withFormat!<UIMessage, Record<string, unknown>>({} as never).load();
    expect(loaded.messages.at(-1)!.message).toEqual(ended.at(-1));
    expect(reloaded.approvalOf("call_1")).toBeUndefined();
    expect(localStorage.getItem("comfyui-assistant.waiting-approvals")).toBeNull();
  });
});
