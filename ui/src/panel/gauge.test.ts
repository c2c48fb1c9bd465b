import { describe, expect, it } from "vitest";
import type { ContextReport as ServerReport } from "../runtime/contextReport.generated";
import { computeGauge, formatTokens, isContextReport, latestReport, shorteningText } from "./gauge";

// A whole report as the server sends it (its type is generated from core/base/wire_types.py).
const report: ServerReport = {
  model: "qwen3:8b",
  window: { tokens: 10000, source: "settings", detail: null },
  budget: 7000,
  tokens: { system: 1000, userContext: 200, summary: 300, history: 2500, toolResults: 1000, tools: 800, reminders: 0, recalled: 0, documents: 0, reserve: 2000 },
  counts: { kept: 10, digested: 0, summarized: 0, dropped: 0, cut: 0 },
  summary: null,
  estimated: 5800,
  exact: 5800,
  counter: "tiktoken:cl100k_base",
  correction: 1,
  factors: { system: 1, tools: 1, messages: 1 },
  calibration: null,
  reported: null,
  cachedTokens: null,
  repairs: 0,
  limits: [],
  documents: null,
  recalled: null,
};

describe("computeGauge", () => {
  it("counts the tool calls read as meant, and says nothing when there were none", () => {
    expect(computeGauge({ ...report, repairs: 3 }, "en").lines).toContain("Tool calls read as meant: 3");
    expect(computeGauge(report, "en").lines.some((l) => l.startsWith("Tool calls read as meant"))).toBe(false);
  });

  it("draws what was recalled from earlier in the chat and says how much", () => {
    const passage = { messageId: "m1", role: "user", at: 1_700_000_000, tokens: 40 };
    const recalled = { tokens: 90, passages: [passage, { ...passage, messageId: "m2" }] };
    const g = computeGauge({ ...report, tokens: { ...report.tokens, recalled: 90 }, recalled });
    expect(g.segments.find((s) => s.key === "recalled")?.label).toBe("Recalled from earlier");
    expect(g.lines).toContain("Recalled for this message: 2 passages from earlier in the chat (90 tokens)");
  });

  it("draws the project's documents as their own section and names what was sent", () => {
    const documents = { project: "Harbour", mode: "retrieved" as const, documents: 4, passages: 3, tokens: 600, sent: [] };
    const g = computeGauge({ ...report, tokens: { ...report.tokens, documents: 600 }, documents });
    expect(g.segments.find((s) => s.key === "documents")?.label).toBe("Project documents");
    expect(g.lines).toContain("Project Harbour: 3 passages retrieved from 4 documents");
  });

  it("splits the window by section, in order, leaving out empty sections", () => {
    const g = computeGauge(report);
    expect(g.segments.map((s) => s.key)).toEqual(["system", "userContext", "summary", "history", "toolResults", "tools", "reserve"]);
    expect(g.segments.find((s) => s.key === "history")?.fraction).toBeCloseTo(0.25);
    expect(g.used).toBe(5800);
    expect(g.prompt).toBe(5800);
    expect(computeGauge({ ...report, estimated: 5900 }).prompt).toBe(5900);
    expect(g.lines[1]).toBe("Prompt: 5,800 tokens — 58% of the window");
    expect(computeGauge({ ...report, counter: "estimate" }).lines[1]).toContain("tokens (estimated)");
    expect(g.lines.some((l) => l.startsWith("Correction"))).toBe(false);
    expect(g.total).toBe(7800);
    expect(g.free).toBe(2200);
    expect(g.usedRatio).toBeCloseTo(0.58);
    const sum = g.segments.reduce((a, s) => a + s.fraction, 0);
    expect(sum).toBeCloseTo(0.78);
    expect(g.marker).toBeNull();
  });

  it("says when the server's own tokenizer calibrated the counts, and the learned factors", () => {
    const calibrated = { ...report, calibration: "llama.cpp /tokenize", factors: { system: 1.104, tools: 0, messages: 1.2 } };
    const g = computeGauge(calibrated);
    expect(g.lines[1]).toBe("Prompt: 5,800 tokens (calibrated by llama.cpp /tokenize) — 58% of the window");
    expect(g.lines).toContain("Correction: system ×1.1, tools ×0, messages ×1.2");
    // a report stored before the factors existed
    const { factors: _, ...older } = report;
    expect(computeGauge(older as ServerReport).lines.some((l) => l.startsWith("Correction"))).toBe(false);
  });

  it("scales to the total when a request overflows the window", () => {
    const g = computeGauge({ ...report, window: { tokens: 4000 } });
    const sum = g.segments.reduce((a, s) => a + s.fraction, 0);
    expect(sum).toBeCloseTo(1);
    expect(g.free).toBe(0);
    expect(g.usedRatio).toBeGreaterThan(1);
  });

  it("survives missing and bogus numbers", () => {
    const g = computeGauge({ window: { tokens: 0 }, tokens: { system: Number.NaN, history: -5, tools: 100 } });
    expect(g.segments.map((s) => s.key)).toEqual(["tools"]);
    expect(g.segments[0]?.fraction).toBe(1);
    expect(g.usedRatio).toBe(0);
  });

  it("puts the numbers in the hover lines", () => {
    const g = computeGauge({ ...report, reported: 5912, cachedTokens: 4096, limits: ["tool definitions reduced to 6 of 16"] });
    const text = g.lines.join("\n");
    expect(text).toContain("Context window: 10,000 tokens (settings) · qwen3:8b");
    expect(text).toContain("Prompt: 5,800 tokens — 58% of the window");
    expect(text).toContain("Reported by the provider: 5,912, 4,096 cached");
    expect(text).toContain("History: 2,500");
    expect(text).toContain("Limit: tool definitions reduced to 6 of 16");
  });

  it("marks a summarized or digested history", () => {
    const g = computeGauge({
      ...report,
      counts: { kept: 4, digested: 2, summarized: 12, dropped: 0, cut: 1 },
      summary: { covers: 12, fallback: false },
    });
    expect(g.marker?.text).toBe("12 messages summarized, 2 tool rounds digested, 1 block cut");
    expect(g.lines.join("\n")).toContain("Shortened: 12 messages summarized");
  });

  it("says when the summary is only a digest", () => {
    expect(shorteningText({ ...report, counts: { summarized: 1 }, summary: { covers: 1, fallback: true } })).toBe(
      "1 message summarized (as a digest: summarizing failed)",
    );
  });
});

describe("the gauge in the panel's language", () => {
  it("names the sections, counts and shortening in Chinese and Arabic, numbers formatted for the locale", () => {
    const counts = { kept: 4, digested: 2, summarized: 12, dropped: 0, cut: 1 };
    const zh = computeGauge({ ...report, counts, summary: { covers: 12, fallback: false } }, "zh");
    expect(zh.segments.find((s) => s.key === "history")?.label).toBe("历史消息");
    expect(zh.lines[1]).toBe("提示词：5,800 个 token，占窗口的 58%");
    expect(zh.marker?.text).toBe("已摘要 12 条消息，已精简 2 轮工具调用，已截断 1 个内容块");
    const ar = computeGauge({ ...report, counts, summary: { covers: 12, fallback: false } }, "ar");
    expect(ar.marker?.text).toBe("لُخّصت 12 رسالة، اختُصرت جولتا أدوات، اقتُطعت كتلة واحدة"); // many, two, one
    expect(formatTokens(12500, "ar")).toBe(`${new Intl.NumberFormat("ar").format(12.5)} ألف`);
    expect(formatTokens(12500, "de")).toBe("12,5 Tsd.");
    expect(formatTokens(12500, "nl")).toBe("12,5k"); // no table: English words, Dutch digits
  });
});

describe("formatTokens", () => {
  it("shortens big numbers", () => {
    expect(formatTokens(950)).toBe("950");
    expect(formatTokens(8192)).toBe("8192");
    expect(formatTokens(32000)).toBe("32k");
    expect(formatTokens(12500)).toBe("12.5k");
    expect(formatTokens(131072)).toBe("131k");
  });
});

describe("latestReport", () => {
  it("takes the newest data-context part of the assistant's messages", () => {
    const older = { ...report, estimated: 1 };
    const messages = [
      { role: "assistant", parts: [{ type: "data-context", data: older }] },
      { role: "user", parts: [{ type: "text" }] },
      { role: "assistant", parts: [{ type: "data-context", data: report }, { type: "text" }] },
    ];
    expect(latestReport(messages)).toBe(report);
    expect(latestReport(messages.slice(0, 2))).toBe(older);
    expect(latestReport([{ role: "assistant", parts: [{ type: "data-context", data: { nope: 1 } }] }])).toBeNull();
  });

  it("checks the shape", () => {
    expect(isContextReport(report)).toBe(true);
    expect(isContextReport({ window: {}, tokens: {} })).toBe(false);
    expect(isContextReport(null)).toBe(false);
  });
});
