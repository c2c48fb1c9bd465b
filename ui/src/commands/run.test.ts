import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import type { Notice } from "../runtime/chatStore";
import { parseInput } from "./parse";
import { compactNotice, runCommand, type CommandContext } from "./run";

const report = {
  window: { tokens: 8192, source: "settings" },
  budget: 6000,
  tokens: { system: 1000, history: 2000, reserve: 1024 },
  counts: { kept: 4, digested: 0, summarized: 0, dropped: 0, cut: 0 },
};

function context(overrides: Partial<CommandContext> = {}) {
  const notes: Omit<Notice, "id">[] = [];
  const ctx: CommandContext = {
    serverId: "th_1",
    messages: [],
    note: vi.fn((n: Omit<Notice, "id">) => {
      notes.push(n);
      return String(notes.length);
    }),
    dismiss: vi.fn(),
    clearNotes: vi.fn(),
    newThread: vi.fn(async () => {}),
    send: vi.fn(),
    request: vi.fn(async () => ({})) as CommandContext["request"],
    ...overrides,
  };
  return { ctx, notes };
}

describe("runCommand", () => {
  it("answers /help locally", async () => {
    const { ctx, notes } = context();
    await runCommand(parseInput("/help"), ctx);
    expect(notes[0]?.kind).toBe("help");
    expect(ctx.request).not.toHaveBeenCalled();
  });

  it("answers an unknown command without calling anything", async () => {
    const { ctx, notes } = context();
    await runCommand(parseInput("/bogus"), ctx);
    expect(notes[0]).toMatchObject({ kind: "error", title: "Unknown command /bogus" });
    expect(ctx.request).not.toHaveBeenCalled();
    expect(ctx.send).not.toHaveBeenCalled();
  });

  it("/rewind rewinds both, /rewind graph or conversation one of them; anything else says how", async () => {
    const rewind = vi.fn(async () => {});
    const { ctx, notes } = context({ rewind });
    for (const typed of ["/rewind", "/rewind graph", "/rewind Conversation", "/rewind both"]) await runCommand(parseInput(typed), ctx);
    expect(rewind.mock.calls).toEqual([["both"], ["graph"], ["conversation"], ["both"]]);
    expect(notes).toEqual([]);
    await runCommand(parseInput("/rewind everything"), ctx);
    expect(rewind).toHaveBeenCalledTimes(4);
    expect(notes[0]).toMatchObject({ kind: "error", title: "/rewind takes graph or conversation" });
    const fresh = context({ serverId: undefined, rewind });
    await runCommand(parseInput("/rewind"), fresh.ctx);
    expect(fresh.notes[0]).toMatchObject({ kind: "info", title: "Nothing to rewind" });
    expect(rewind).toHaveBeenCalledTimes(4);
  });

  it("/new opens a new thread and sends the rest there", async () => {
    const { ctx } = context();
    await runCommand(parseInput("/new draw a cat"), ctx);
    expect(ctx.newThread).toHaveBeenCalledOnce();
    expect(ctx.send).toHaveBeenCalledWith("draw a cat");
    await runCommand(parseInput("/new"), ctx);
    expect(ctx.send).toHaveBeenCalledOnce();
  });

  it("/clear drops the notes and opens a new empty thread", async () => {
    const { ctx } = context();
    await runCommand(parseInput("/clear"), ctx);
    expect(ctx.clearNotes).toHaveBeenCalledOnce();
    expect(ctx.newThread).toHaveBeenCalledOnce();
    expect(ctx.send).not.toHaveBeenCalled();
  });

  it("/compact posts to the thread and shows the result", async () => {
    const request = vi.fn(async () => ({ summary: { text: "The user built a graph.", until: "m3", fallback: false }, compacted: 3 }));
    const { ctx, notes } = context({ request: request as CommandContext["request"] });
    await runCommand(parseInput("/compact"), ctx);
    expect(request).toHaveBeenCalledWith("/api/assistant/threads/th_1/compact", { method: "POST", body: {} });
    expect(notes.at(-1)).toMatchObject({ kind: "compact", title: "Summarized 3 messages", text: "The user built a graph." });
    setLocale("ar");
    try {
      const three = new Intl.NumberFormat("ar").format(3);
      expect(compactNotice({ summary: null, compacted: 3 }).title).toBe(`لُخّصت ${three} رسائل`);
      expect(compactNotice({ summary: null, compacted: 2 }).title).toBe("لُخّصت رسالتان");
    } finally {
      setLocale("en");
    }
    expect(ctx.dismiss).toHaveBeenCalledWith("1"); // the progress note
  });

  it("/compact on a thread without messages does not call the server", async () => {
    const { ctx, notes } = context({ serverId: undefined });
    await runCommand(parseInput("/compact"), ctx);
    expect(ctx.request).not.toHaveBeenCalled();
    expect(notes[0]?.title).toBe("Nothing to compact");
  });

  it("shows the server's error when /compact fails", async () => {
    const request = vi.fn(async () => {
      throw new Error('{"error": "Ollama is not reachable"}');
    });
    const { ctx, notes } = context({ request: request as CommandContext["request"] });
    await runCommand(parseInput("/compact"), ctx);
    expect(notes.at(-1)).toMatchObject({ kind: "error", text: "Ollama is not reachable" });
  });

  it("/context shows the newest data-context report of the chat", async () => {
    const messages = [
      { id: "u", role: "user", parts: [{ type: "text", text: "hi" }] },
      { id: "a", role: "assistant", parts: [{ type: "text", text: "yo" }, { type: "data-context", data: report }] },
    ] as UIMessage[];
    const { ctx, notes } = context({ messages });
    await runCommand(parseInput("/context"), ctx);
    expect(ctx.request).not.toHaveBeenCalled();
    expect(notes[0]).toMatchObject({ kind: "context", report });
  });

  it("/context falls back to the stored report", async () => {
    const request = vi.fn(async () => ({ report }));
    const { ctx, notes } = context({ request: request as CommandContext["request"] });
    await runCommand(parseInput("/context"), ctx);
    expect(request).toHaveBeenCalledWith("/api/assistant/threads/th_1/context");
    expect(notes[0]).toMatchObject({ kind: "context", report });
  });

  it("/context adds the exact request when the debug switch kept one", async () => {
    const { ctx, notes } = context({ serverId: undefined, debugRequest: { messages: [{ role: "system", content: "You are…" }], tools: [] } });
    await runCommand(parseInput("/context"), ctx);
    expect(notes[1]).toMatchObject({ title: "The exact request of the last step (debug)" });
    expect(notes[1]?.text).toContain('"role": "system"');
  });

  it("/context without any report says so", async () => {
    const { ctx, notes } = context({ serverId: undefined });
    await runCommand(parseInput("/context"), ctx);
    expect(notes[0]?.title).toBe("No context report yet");
  });
});

describe("compactNotice", () => {
  it("says when there was nothing to do", () => {
    expect(compactNotice({ summary: null, compacted: 0 }).title).toBe("Nothing to compact");
  });
  it("marks a fallback digest", () => {
    expect(compactNotice({ summary: { text: "x", until: "m", fallback: true }, compacted: 1 }).title).toContain("digest");
  });
});
