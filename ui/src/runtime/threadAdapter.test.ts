import type { ThreadMessage } from "@assistant-ui/react";
import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import {
  createThreadListAdapter,
  firstUserText,
  threadPath,
  titleFromText,
  titleStream,
  toRemoteMetadata,
  toRepository,
} from "./threadAdapter";

const serverThread = {
  id: "th_abc",
  title: "Make a cat",
  archived: false,
  createdAt: 1_700_000_000,
  updatedAt: 1_700_000_100.5,
  messageCount: 4,
};

function deps() {
  const request = vi.fn(async (path: string, init?: { method?: string; body?: unknown }) => {
    if (path === "/api/assistant/threads" && !init) return { threads: [serverThread, { ...serverThread, id: "old", title: "", archived: true }] };
    if (path === threadPath("th_abc", "?last=1") && !init) return { ...serverThread, firstIndex: 3, messages: [{ id: "m4" }] };
    return {};
  });
  const forget = vi.fn();
  const serverIdFor = vi.fn((local: string) => `server-${local}`);
  return { request: request as unknown as <T>(p: string, i?: { method?: string; body?: unknown }) => Promise<T>, raw: request, forget, serverIdFor };
}

describe("toRemoteMetadata", () => {
  it("maps a server thread", () => {
    expect(toRemoteMetadata(serverThread)).toEqual({
      status: "regular",
      remoteId: "th_abc",
      title: "Make a cat",
      lastMessageAt: new Date(1_700_000_100_500),
      custom: { messageCount: 4 },
    });
  });

  it("maps archived and untitled threads", () => {
    const m = toRemoteMetadata({ ...serverThread, archived: true, title: "" });
    expect(m.status).toBe("archived");
    expect(m.title).toBeUndefined();
  });
});

describe("the adapter", () => {
  it("lists the server's threads", async () => {
    const d = deps();
    const adapter = createThreadListAdapter(d);
    const { threads } = await adapter.list();
    expect(threads.map((t) => [t.remoteId, t.status])).toEqual([
      ["th_abc", "regular"],
      ["old", "archived"],
    ]);
  });

  it("initializes a new thread under the id its chat already uses", async () => {
    const d = deps();
    const adapter = createThreadListAdapter(d);
    expect(await adapter.initialize("__LOCALID_x")).toEqual({ remoteId: "server-__LOCALID_x", externalId: undefined });
    expect(d.raw).toHaveBeenCalledWith("/api/assistant/threads", { method: "POST", body: { id: "server-__LOCALID_x" } });
  });

  it("renames, archives, unarchives and deletes through the thread endpoints", async () => {
    const d = deps();
    const adapter = createThreadListAdapter(d);
    await adapter.rename("th_abc", "  New name ");
    await adapter.archive("th_abc");
    await adapter.unarchive("th_abc");
    await adapter.delete("th/odd");
    expect(d.raw.mock.calls).toEqual([
      ["/api/assistant/threads/th_abc", { method: "PATCH", body: { title: "New name" } }],
      ["/api/assistant/threads/th_abc", { method: "PATCH", body: { archived: true } }],
      ["/api/assistant/threads/th_abc", { method: "PATCH", body: { archived: false } }],
      ["/api/assistant/threads/th%2Fodd", { method: "DELETE" }],
    ]);
    expect(d.forget).toHaveBeenCalledWith("th/odd");
  });

  it("fetches one thread's metadata with its last message, not the whole thread", async () => {
    const d = deps();
    const adapter = createThreadListAdapter(d);
    expect((await adapter.fetch("th_abc")).title).toBe("Make a cat");
    expect(d.raw.mock.calls).toEqual([["/api/assistant/threads/th_abc?last=1"]]);
  });

  it("titles a thread from its first user message, as the server does", async () => {
    const adapter = createThreadListAdapter(deps());
    const messages = [
      { role: "user", content: [{ type: "text", text: "Build an SDXL workflow\nwith a refiner" }] },
    ] as unknown as ThreadMessage[];
    const stream = await adapter.generateTitle("th_abc", messages);
    const chunks: unknown[] = [];
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    expect(chunks).toContainEqual({ type: "text-delta", textDelta: "Build an SDXL workflow", path: [0] });
  });
});

describe("titles", () => {
  it("follows core/store/threads.py title_from", () => {
    expect(titleFromText("  short one  \nsecond")).toBe("short one");
    const long = "Please build me a workflow that upscales the image twice and then sharpens it";
    const title = titleFromText(long);
    expect(title.endsWith("…")).toBe(true);
    expect(title.length).toBeLessThanOrEqual(60);
    expect(title).toBe("Please build me a workflow that upscales the image twice…");
    expect(titleFromText("x".repeat(80))).toBe("x".repeat(59) + "…");
  });

  it("finds the first user text", () => {
    const messages = [
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
      { role: "user", content: [{ type: "text", text: "  " }, { type: "text", text: "mine" }] },
    ] as unknown as ThreadMessage[];
    expect(firstUserText(messages)).toBe("mine");
  });

  it("an empty title is an empty stream", async () => {
    const { done } = await titleStream("").getReader().read();
    expect(done).toBe(true);
  });
});

describe("toRepository", () => {
  it("chains stored messages", () => {
    const messages = [
      { id: "a", role: "user", parts: [] },
      { id: "b", role: "assistant", parts: [] },
      { id: "c", role: "user", parts: [] },
    ] as UIMessage[];
    const repo = toRepository(messages);
    expect(repo.headId).toBe("c");
    expect(repo.messages.map((m) => [m.parentId, m.message.id])).toEqual([
      [null, "a"],
      ["a", "b"],
      ["b", "c"],
    ]);
    expect(toRepository([])).toEqual({ headId: null, messages: [] });
  });
});
