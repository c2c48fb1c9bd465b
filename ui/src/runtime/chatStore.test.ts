import { isToolUIPart, type UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore, NEW_THREAD } from "./chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer, type ChatRequestBody } from "./fakeServer";

afterEach(() => {
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };

function lastToolPart(body: ChatRequestBody | undefined) {
  const last = body?.messages.at(-1);
  return last?.parts.find(isToolUIPart) as (UIMessage["parts"][number] & { state: string; output?: unknown; errorText?: string }) | undefined;
}

function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
}

describe("the chat store", () => {
  it("runs a panel tool, adds its output and resubmits by itself", async () => {
    const server = fakeServer((body) =>
      sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("addNode", { type: "KSampler" }) : textAnswer("Added a KSampler.")),
    );
    vi.stubGlobal("fetch", server.fetch);
    const addNode = vi.fn(async () => ({ ok: true, node: { id: 5 } }));
    const store = new ChatStore({ settings, tools: () => ({ addNode }) });
    const entry = store.entryFor("__LOCALID_1", undefined);

    await entry.chat.sendMessage({ text: "add a sampler" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));

    expect(addNode).toHaveBeenCalledWith({ type: "KSampler" }, { progress: expect.any(Function), detach: expect.any(AbortSignal) });
    const [first, second] = server.chatRequests;
    expect(first?.id).toBe(entry.serverId);
    expect(second?.id).toBe(entry.serverId);
    expect(second?.messageId).toBe(second?.messages.at(-1)?.id); // a continuation of the same answer
    expect(lastToolPart(second)).toMatchObject({ state: "output-available", output: { ok: true, node: { id: 5 } } });
    expect(entry.chat.messages).toHaveLength(2);
    expect(textOf(entry.chat.messages.at(-1))).toBe("Added a KSampler.");
    expect(entry.pendingTools).toBe(0);
  });

  it("leaves server tools to the server", async () => {
    const server = fakeServer(() =>
      sseResponse([
        { type: "start" },
        { type: "start-step" },
        { type: "tool-input-available", toolCallId: "s1", toolName: "searchInstalledNodes", input: { query: "upscale" }, providerExecuted: true },
        { type: "tool-output-available", toolCallId: "s1", output: { nodes: [] }, providerExecuted: true },
        { type: "finish-step" },
        ...textAnswer("Nothing found.").slice(1),
      ]),
    );
    vi.stubGlobal("fetch", server.fetch);
    const searchInstalledNodes = vi.fn(async () => ({ ok: true }));
    const store = new ChatStore({ settings, tools: () => ({ searchInstalledNodes }) });
    const entry = store.entryFor("__LOCALID_2", undefined);
    await entry.chat.sendMessage({ text: "find an upscaler" });
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    await new Promise((r) => setTimeout(r, 20));
    expect(searchInstalledNodes).not.toHaveBeenCalled();
    expect(server.chatRequests).toHaveLength(1);
  });

  it("answers an unknown tool with an error so the model can go on", async () => {
    const server = fakeServer((body) =>
      sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("frobnicate", {}) : textAnswer("Sorry.")),
    );
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings, tools: () => ({}) });
    const entry = store.entryFor("__LOCALID_3", undefined);
    await entry.chat.sendMessage({ text: "do it" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(lastToolPart(server.chatRequests[1])).toMatchObject({ state: "output-error", errorText: expect.stringContaining("frobnicate") });
  });

  it("never resubmits a stopped turn, even when a tool finishes afterwards", async () => {
    const server = fakeServer(() => sseResponse(toolCallAnswer("addNode", { type: "KSampler" })));
    vi.stubGlobal("fetch", server.fetch);
    let finish!: (value: unknown) => void;
    const addNode = vi.fn(() => new Promise((resolve) => (finish = resolve)));
    const store = new ChatStore({ settings, tools: () => ({ addNode }) });
    const entry = store.entryFor("__LOCALID_4", undefined);
    await entry.chat.sendMessage({ text: "add" });
    await vi.waitFor(() => expect(addNode).toHaveBeenCalled());
    expect(entry.pendingTools).toBe(1);
    await store.halt(entry);
    finish({ ok: true });
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(server.chatRequests).toHaveLength(1);
    // the output is still recorded, so the thread stays consistent
    expect(entry.chat.messages.at(-1)?.parts.find(isToolUIPart)).toMatchObject({ state: "output-available" });
  });

  it("lets 'answer again' after a Stop run its tools to the end", async () => {
    let calls = 0;
    const server = fakeServer((body) => {
      calls++;
      if (calls === 1) return sseResponse(toolCallAnswer("addNode", {}, "call_a"));
      return sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("addNode", {}, "call_b") : textAnswer("done"));
    });
    vi.stubGlobal("fetch", server.fetch);
    let release: (() => void) | null = null;
    const addNode = vi.fn(() => new Promise((resolve) => {
      if (release === null) release = () => resolve({ ok: true });
      else resolve({ ok: true });
    }));
    const store = new ChatStore({ settings, tools: () => ({ addNode }) });
    const entry = store.entryFor("__LOCALID_r", undefined);
    await entry.chat.sendMessage({ text: "add" });
    await vi.waitFor(() => expect(addNode).toHaveBeenCalledOnce());
    await store.halt(entry);
    release!();
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(server.chatRequests).toHaveLength(1);
    expect(entry.haltedAfter).not.toBeNull();
    await entry.chat.regenerate();
    await vi.waitFor(() => expect(textOf(entry.chat.messages.at(-1))).toBe("done"));
    expect(server.chatRequests.map((r) => r.trigger)).toEqual(["submit-message", "regenerate-message", "submit-message"]);
  });

  it("stops resubmitting at the step limit", async () => {
    let n = 0;
    const server = fakeServer(() => sseResponse(toolCallAnswer("addNode", {}, `call_${++n}`)));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 3, debugContext: false }, tools: () => ({ addNode: async () => ({ ok: true }) }) });
    const entry = store.entryFor("__LOCALID_5", undefined);
    await entry.chat.sendMessage({ text: "loop" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(3));
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    await new Promise((r) => setTimeout(r, 30));
    expect(server.chatRequests).toHaveLength(3);
  });

  it("shows the server's error text", async () => {
    const server = fakeServer(() =>
      sseResponse([{ type: "start" }, { type: "error", errorText: "Ollama is not reachable at http://127.0.0.1:11434/v1" }]),
    );
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings });
    const entry = store.entryFor("__LOCALID_6", undefined);
    await entry.chat.sendMessage({ text: "hi" });
    await vi.waitFor(() => expect(entry.chat.status).toBe("error"));
    expect(entry.chat.error?.message).toBe("Ollama is not reachable at http://127.0.0.1:11434/v1");
  });

  it("asks for the exact request with the debug switch", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("ok")));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 25, debugContext: true } });
    const entry = store.entryFor("__LOCALID_7", undefined);
    await entry.chat.sendMessage({ text: "hi" });
    expect(server.calls).toContain("POST /api/assistant/chat?debug=context");
  });

  it("keys chats by list id and remote id, and hands a new thread its server id", () => {
    const store = new ChatStore({ settings });
    const fresh = store.entryFor("__LOCALID_8", undefined);
    expect(fresh.known).toBe(false);
    store.addNotice(NEW_THREAD, { kind: "help", title: "Commands" });
    const id = store.serverIdFor("__LOCALID_8");
    expect(id).toBe(fresh.serverId);
    expect(fresh.known).toBe(true);
    expect(store.entryFor("__LOCALID_8", id)).toBe(fresh);
    expect(store.entryFor(id, id)).toBe(fresh);
    // the note written before the first message moved with the thread
    expect(store.noticesOf(id).map((n) => n.title)).toEqual(["Commands"]);
    expect(store.noticesOf(NEW_THREAD)).toEqual([]);
    const listed = store.entryFor("th_server", "th_server");
    expect(listed.serverId).toBe("th_server");
    expect(listed.known).toBe(true);
    store.forget("th_server");
    expect(store.chatOf("th_server")).toBeUndefined();
  });

  it("drops an unused new chat when another new thread starts", () => {
    const store = new ChatStore({ settings });
    const a = store.entryFor("__LOCALID_a", undefined);
    store.entryFor("__LOCALID_b", undefined);
    expect(store.entryFor("__LOCALID_a", undefined)).not.toBe(a);
  });
});
