// The thread a reloaded panel reopens is read once, at its start (readAhead.ts): its metadata and
// its first page come from one request, and the whole thread is never read for a title.
import { describe, expect, it, vi } from "vitest";
import { READ_AHEAD_MS, ReadAhead } from "./readAhead";

function server() {
  const calls: string[] = [];
  const request = vi.fn(async (path: string, init?: { method?: string }) => {
    calls.push(`${init?.method ?? "GET"} ${path}`);
    return { id: "t1", title: "A chat", path };
  }) as unknown as <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  return { calls, request };
}

describe("ReadAhead", () => {
  it("answers the thread's metadata and its first page with the one read begun at the start", async () => {
    const { calls, request } = server();
    const ahead = new ReadAhead(request);
    ahead.start("t1");
    expect(calls).toEqual(["GET /api/assistant/threads/t1?last=30"]);
    const meta = await ahead.thread("t1");
    const page = await ahead.take("/api/assistant/threads/t1?last=30");
    expect(page).toBe(meta);
    expect(calls).toEqual(["GET /api/assistant/threads/t1?last=30"]);
    // taken once: the next read is the server's
    await ahead.take("/api/assistant/threads/t1?last=30");
    expect(calls).toEqual(["GET /api/assistant/threads/t1?last=30", "GET /api/assistant/threads/t1?last=30"]);
  });

  it("reads another thread's metadata with its last message only, never the whole thread", async () => {
    const { calls, request } = server();
    const ahead = new ReadAhead(request);
    ahead.start("t1");
    expect(await ahead.thread("t/2")).toEqual({ id: "t1", title: "A chat", path: "/api/assistant/threads/t%2F2?last=1" });
    expect(calls).toEqual(["GET /api/assistant/threads/t1?last=30", "GET /api/assistant/threads/t%2F2?last=1"]);
  });

  it("ends at the first read of any page, and serves no other path, no write and no stale answer", async () => {
    const { calls, request } = server();
    let now = 0;
    const ahead = new ReadAhead(request, () => now);
    ahead.start("t1");
    await ahead.take("/api/assistant/threads/t1?last=30", { method: "PATCH", body: {} });
    await ahead.take("/api/assistant/threads/t2?last=30");
    await ahead.take("/api/assistant/threads/t1?last=30"); // (the read-ahead ended with t2's read)
    ahead.start("t1");
    now = READ_AHEAD_MS + 1;
    await ahead.thread("t1");
    await ahead.take("/api/assistant/threads/t1?last=30");
    expect(calls).toEqual([
      "GET /api/assistant/threads/t1?last=30",
      "PATCH /api/assistant/threads/t1?last=30",
      "GET /api/assistant/threads/t2?last=30",
      "GET /api/assistant/threads/t1?last=30",
      "GET /api/assistant/threads/t1?last=30",
      "GET /api/assistant/threads/t1?last=1",
      "GET /api/assistant/threads/t1?last=30",
    ]);
  });

  it("starts once for a thread already being read", () => {
    const { calls, request } = server();
    const ahead = new ReadAhead(request);
    ahead.start("t1");
    ahead.start("t1");
    expect(calls).toEqual(["GET /api/assistant/threads/t1?last=30"]);
  });
});
