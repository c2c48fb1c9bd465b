// Two tabs on one thread (threadSync.ts): a turn the server refuses over the other tab's (409
// `chat.thread_moved_on`, or the `chat.thread_busy` error chunk) leaves the chat with its words in
// the composer, the tab loads the other tab's messages, and its next turn follows them.
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore, type ChatEntry } from "./chatStore";
import { serverPresence } from "./serverPresence";
import { fakeServer, sseResponse, textAnswer, type ChatRequestBody, type FakeServer } from "../../test/fakeServer";

afterEach(() => {
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };
const said = (messages: readonly UIMessage[]) => messages.map((m) => `${m.role}: ${m.parts.map((p) => (p.type === "text" ? p.text : "")).join("")}`);

/** A tab: its own store (as a page has), showing thread t1 as the server has it. */
async function tab(server: FakeServer): Promise<{ store: ChatStore; entry: ChatEntry }> {
  const store = new ChatStore({ settings, rememberThread: false });
  const entry = store.entryFor("__LOCALID_t1", "t1");
  const loaded = await store.historyAdapter(entry).withFormat!<UIMessage, Record<string, unknown>>({} as never).load();
  entry.chat.messages = loaded.messages.map((item) => item.message); // (as assistant-ui sets them)
  return { store, entry };
}

async function idle(entry: ChatEntry) {
  await vi.waitFor(() => expect(["ready", "error"]).toContain(entry.chat.status));
}

function serverWith(answer: (body: ChatRequestBody) => Response) {
  const server = fakeServer(answer);
  vi.stubGlobal("fetch", server.fetch);
  const stored: UIMessage[] = [
    { id: "u0", role: "user", parts: [{ type: "text", text: "hello" }] },
    { id: "a0", role: "assistant", parts: [{ type: "text", text: "hi" }] },
  ];
  server.threads.set("t1", { id: "t1", title: "", archived: false, messages: stored, updatedAt: 1 });
  return server;
}

describe("the same thread in two tabs", () => {
  it("a tab behind the other's turn gets its message back, loads that turn, and then follows it", async () => {
    let n = 0;
    const server = serverWith(() => sseResponse(textAnswer(`answer ${++n}`, `a${n}`)));
    const a = await tab(server);
    const b = await tab(server);
    await a.store.sendMessage(a.entry, { text: "from A" });
    await idle(a.entry);
    await b.store.sendMessage(b.entry, { text: "from B" }); // B still shows [hello, hi]
    await idle(b.entry);
    await vi.waitFor(() => expect(said(b.entry.chat.messages)).toEqual(["user: hello", "assistant: hi", "user: from A", "assistant: answer 1"]));
    expect(b.entry.putBack).toBe("from B");
    expect(b.entry.chat.error?.message).toContain("chat.thread_moved_on");
    expect(server.chatRequests).toHaveLength(1); // refused, not sent again over A's turn
    await b.store.sendMessage(b.entry, { text: "from B" });
    await idle(b.entry);
    expect(said(server.chatRequests[1]!.messages)).toEqual(["user: hello", "assistant: hi", "user: from A", "assistant: answer 1", "user: from B"]);
    expect(server.sentBodies.at(-1)).toMatchObject({ parentId: "a1", parentIndex: 3 });
  });

  it("an answer continued after the other tab's turn, its tool results kept by the server, is not sent again whole", async () => {
    const kept = { error: "This thread has new messages from another tab…", code: "chat.thread_moved_on_kept", params: {} };
    const server = serverWith(() => new Response(JSON.stringify(kept), { status: 409, headers: { "Content-Type": "application/json" } }));
    const b = await tab(server);
    await b.store.sendMessage(b.entry, { text: "go on" });
    await idle(b.entry);
    expect(server.sentBodies).toHaveLength(1); // (a whole-thread resend would have cut the other tab's turn)
    expect(server.sentBodies[0]).toMatchObject({ parentId: "a0", parentIndex: 1 });
    expect(b.entry.chat.error?.message).toContain("chat.thread_moved_on_kept");
  });

  it("a turn refused as busy leaves the chat as the server has it, its words for the composer", async () => {
    const busy = { error: "Another answer is being written in this thread…", code: "chat.thread_busy", params: {} };
    let refuse = true;
    const server = serverWith((body) => {
      if (!refuse) return sseResponse(textAnswer("later", "a2"));
      server.threads.get(body.id)!.messages.splice(2); // (the real server stores none of a refused turn)
      return sseResponse([{ type: "start", messageId: "r1" }, { type: "error", errorText: JSON.stringify(busy) }]);
    });
    const b = await tab(server);
    await b.store.sendMessage(b.entry, { text: "while A answers" });
    await idle(b.entry);
    expect(said(b.entry.chat.messages)).toEqual(["user: hello", "assistant: hi"]);
    expect(b.entry.putBack).toBe("while A answers");
    refuse = false;
    await b.store.sendMessage(b.entry, { text: "while A answers" });
    await idle(b.entry);
    const last = server.sentBodies.at(-1)!;
    expect({ ids: last.messages.map((m) => m.role), parentId: last.parentId }).toEqual({ ids: ["user"], parentId: "a0" });
  });

  it("a look at the server loads another tab's turn into an idle chat, and nothing when none", async () => {
    const server = serverWith(() => sseResponse(textAnswer("x", "ax")));
    const b = await tab(server);
    expect(await b.store.catchUp(b.entry)).toBe(false);
    const thread = server.threads.get("t1")!;
    thread.messages = [...thread.messages, { id: "u9", role: "user", parts: [{ type: "text", text: "elsewhere" }] }, { id: "a9", role: "assistant", parts: [{ type: "text", text: "there" }] }];
    expect(await b.store.catchUp(b.entry)).toBe(true);
    expect(said(b.entry.chat.messages)).toEqual(["user: hello", "assistant: hi", "user: elsewhere", "assistant: there"]);
    // one loaded while the other tab's answer was being written is loaded again once it is done
    const writing = { id: "a10", role: "assistant" as const, parts: [{ type: "text" as const, text: "so" }], metadata: { status: "streaming" } };
    thread.messages = [...thread.messages, { id: "u10", role: "user", parts: [{ type: "text", text: "more" }] }, writing];
    expect(await b.store.catchUp(b.entry)).toBe(true);
    expect(await b.store.catchUp(b.entry)).toBe(false);
    thread.messages = [...thread.messages.slice(0, -1), { id: "a10", role: "assistant", parts: [{ type: "text", text: "so it ends" }] }];
    expect(await b.store.catchUp(b.entry)).toBe(true);
    expect(said(b.entry.chat.messages).at(-1)).toBe("assistant: so it ends");
    expect(server.calls.filter((c) => c.endsWith("?last=1"))).toHaveLength(5);
  });

  it("does not look while ComfyUI's socket says the server is away, and looks once it is back", async () => {
    const server = serverWith(() => sseResponse(textAnswer("x", "a9")));
    const b = await tab(server);
    b.store.currentThreadId = "__LOCALID_t1";
    const socket = new EventTarget();
    const looks = () => server.calls.filter((call) => call.includes("last=1")).length;
    const stop = b.store.followOtherTabs(20, serverPresence(socket));
    await vi.waitFor(() => expect(looks()).toBeGreaterThan(0));
    socket.dispatchEvent(new Event("reconnecting"));
    await new Promise((resolve) => setTimeout(resolve, 30)); // (a look under way ends)
    const before = looks();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(looks()).toBe(before); // (a restart: no request to a server that is down)
    socket.dispatchEvent(new Event("reconnected"));
    await vi.waitFor(() => expect(looks()).toBeGreaterThan(before));
    stop();
  });
});
