// A turn sends what is new (sentMessages.ts): the body carries only what the server lacks and the
// message it follows; the fake server rebuilds the thread as ours does (core/chat/thread_delta.py),
// so `chatRequests` is what the model's turn is built from, `sentBodies` what went over the wire.
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore, type ChatEntry } from "./chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer, type ChatRequestBody } from "../../test/fakeServer";

afterEach(() => {
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };
const ids = (body: ChatRequestBody | undefined) => body?.messages.map((m) => m.id);
const wire = (body: ChatRequestBody | undefined) => ({ ids: ids(body), parentId: body?.parentId, parentIndex: body?.parentIndex });

function chatting(answer: (body: ChatRequestBody) => ReturnType<typeof textAnswer>) {
  const server = fakeServer((body) => sseResponse(answer(body)));
  vi.stubGlobal("fetch", server.fetch);
  const addNode = vi.fn(async () => ({ ok: true, node: { id: 5 } }));
  const store = new ChatStore({ settings, tools: () => ({ addNode }), rememberThread: false });
  return { server, store };
}

async function settled(entry: ChatEntry, server: ReturnType<typeof fakeServer>, requests: number) {
  await vi.waitFor(() => expect(server.chatRequests).toHaveLength(requests));
  await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
}

/** A stored thread of `length` messages, opened as the panel opens it (its last page). */
async function opened(length: number) {
  const { server, store } = chatting(() => textAnswer("ok", "a-new"));
  const stored: UIMessage[] = Array.from({ length }, (_, i) => ({
    id: `m${i}`,
    role: i % 2 ? "assistant" : "user",
    parts: [{ type: "text", text: `message ${i}` }],
  }));
  server.threads.set("t1", { id: "t1", title: "", archived: false, messages: stored, updatedAt: 1 });
  const entry = store.entryFor("__LOCALID_t1", "t1");
  const loaded = await store.historyAdapter(entry).withFormat!<UIMessage, Record<string, unknown>>({} as never).load();
  entry.chat.messages = loaded.messages.map((item) => item.message); // (as assistant-ui sets them)
  return { server, store, entry, stored };
}

describe("a turn sends what is new", () => {
  it("sends a tool's result once, and then only the next message; the server has the whole thread", async () => {
    let n = 0;
    const { server, store } = chatting((body) =>
      body.messages.at(-1)?.role === "user" && n++ === 0 ? toolCallAnswer("addNode", { type: "KSampler" }, "call_1", "a1") : textAnswer(`answer ${n}`, `a${n}`),
    );
    const entry = store.entryFor("__LOCALID_1", undefined);
    await store.sendMessage(entry, { text: "add a sampler" });
    await settled(entry, server, 2);
    await store.sendMessage(entry, { text: "thanks" });
    await settled(entry, server, 3);

    const [first, resubmit, next] = server.sentBodies;
    const u1 = entry.chat.messages[0]!.id;
    const u2 = entry.chat.messages[2]!.id;
    expect(wire(first)).toEqual({ ids: [u1], parentId: undefined, parentIndex: undefined });
    expect(wire(resubmit)).toEqual({ ids: ["a1"], parentId: u1, parentIndex: 0 });
    expect(wire(next)).toEqual({ ids: [u2], parentId: "a1", parentIndex: 1 });
    expect(JSON.stringify(resubmit)).toContain('"output":{"ok":true,"node":{"id":5}}');
    expect(JSON.stringify(next)).not.toContain('"node":{"id":5}');
    // what the server built the turn from: the whole thread, as the panel shows it
    expect(ids(server.chatRequests[2])).toEqual([u1, "a1", u2]);
    expect(server.chatRequests[2]!.messages.slice(0, 2)).toEqual(JSON.parse(JSON.stringify(entry.chat.messages.slice(0, 2))));
  });

  it("after a reload, sends the new message only; 'answer again' sends nothing but what it follows", async () => {
    const { server, store } = chatting(() => textAnswer("again", "a9"));
    const stored: UIMessage[] = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] },
      { id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "hi", state: "done" }] },
    ];
    server.threads.set("t1", { id: "t1", title: "", archived: false, messages: stored, updatedAt: 1 });
    const entry = store.entryFor("__LOCALID_t1", "t1");
    const loaded = await store.historyAdapter(entry).withFormat!<UIMessage, Record<string, unknown>>({} as never).load();
    entry.chat.messages = loaded.messages.map((item) => item.message); // (as assistant-ui sets them)

    await store.sendMessage(entry, { text: "one more" });
    await settled(entry, server, 1);
    const u2 = entry.chat.messages[2]!.id;
    expect(wire(server.sentBodies[0])).toEqual({ ids: [u2], parentId: "a1", parentIndex: 1 });
    expect(ids(server.chatRequests[0])).toEqual(["u1", "a1", u2]);

    await entry.chat.regenerate();
    await settled(entry, server, 2);
    expect(wire(server.sentBodies[1])).toEqual({ ids: [], parentId: u2, parentIndex: 2 });
    expect(server.sentBodies[1]).toMatchObject({ trigger: "regenerate-message" });
    expect(server.sentBodies[1]!.messageId).toBeUndefined(); // (the server drops what follows u2)
    expect(ids(server.chatRequests[1])).toEqual(["u1", "a1", u2]);
  });

  it("sends the whole thread again when the server says the thread it follows is stale", async () => {
    const { server, store } = chatting(() => textAnswer("ok", "a2"));
    const stored: UIMessage[] = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] },
      { id: "a1", role: "assistant", parts: [{ type: "text", text: "hi" }] },
    ];
    server.threads.set("t1", { id: "t1", title: "", archived: false, messages: stored, updatedAt: 1 });
    const entry = store.entryFor("__LOCALID_t1", "t1");
    const loaded = await store.historyAdapter(entry).withFormat!<UIMessage, Record<string, unknown>>({} as never).load();
    entry.chat.messages = loaded.messages.map((item) => item.message);
    server.threads.get("t1")!.messages = [stored[0]!]; // (changed elsewhere: a1 is gone there)

    await store.sendMessage(entry, { text: "still there?" });
    await settled(entry, server, 1);
    const u2 = entry.chat.messages[2]!.id;
    expect(server.sentBodies.map(wire)).toEqual([
      { ids: [u2], parentId: "a1", parentIndex: 1 },
      { ids: ["u1", "a1", u2], parentId: undefined, parentIndex: undefined },
    ]);
    expect(ids(server.chatRequests[0])).toEqual(["u1", "a1", u2]);
    expect(entry.chat.error).toBeUndefined();
  });

  it("opens a long thread with its last page, reads earlier pages on demand, and sends where the parent is in the whole thread", async () => {
    const { server, store, entry, stored } = await opened(250);
    expect(entry.chat.messages.map((m) => m.id)).toEqual(stored.slice(220).map((m) => m.id));
    expect(server.calls.filter((c) => /\/threads\/t1(\?|$)/.test(c))).toEqual(["GET /api/assistant/threads/t1?last=30"]);

    await store.sendMessage(entry, { text: "next" });
    await settled(entry, server, 1);
    expect(wire(server.sentBodies[0])).toMatchObject({ parentId: "m249", parentIndex: 249 });
    expect(server.chatRequests[0]!.messages).toHaveLength(251);

    await store.loadEarlier(entry);
    expect(entry.chat.messages.map((m) => m.id).slice(0, 2)).toEqual(["m120", "m121"]);
    expect(entry.chat.messages).toHaveLength(132);
    expect(entry.pages.hasEarlier(entry.chat.messages)).toBe(true);
    await store.loadEarlier(entry);
    expect(entry.chat.messages.map((m) => m.id).slice(0, 2)).toEqual(["m20", "m21"]);
    expect(entry.chat.messages).toHaveLength(232);
    expect(entry.pages.hasEarlier(entry.chat.messages)).toBe(true);
    await store.loadEarlier(entry);
    expect(entry.chat.messages).toHaveLength(252);
    expect(entry.pages.hasEarlier(entry.chat.messages)).toBe(false);
  });

  it("a stale request of a thread opened at its last page is sent again as the whole thread", async () => {
    const { server, store, entry, stored } = await opened(150);
    server.threads.get("t1")!.messages = stored.slice(0, 149); // (m149 gone there)

    await store.sendMessage(entry, { text: "next" });
    await settled(entry, server, 1);
    expect(server.sentBodies.map((b) => [b.messages.length, b.parentId, b.parentIndex])).toEqual([
      [1, "m149", 149],
      [151, undefined, undefined],
    ]);
    expect(ids(server.chatRequests[0])!.slice(0, 3)).toEqual(["m0", "m1", "m2"]);
    expect(server.chatRequests[0]!.messages).toHaveLength(151);
  });
});
