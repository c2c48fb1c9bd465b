// The context gauge's arithmetic: a context report (core/context/context_stages.py `report`, sent as a
// `data-context` part with every response) becomes the segments of one slim bar — the window
// split by section — plus the lines shown on hover and a marker when history was shortened.

import type { ContextReport as ServerReport, ReportCounts, ReportTokens, ReportWindow } from "./contextReport.generated";

/**
 * A report as the gauge reads it: the server's (`ServerReport`, generated from
 * core/base/wire_types.py), with only the window size and the sections required — a report stored
 * by an older version may lack the rest.
 */
export type ContextReport = Partial<Omit<ServerReport, "window" | "tokens" | "counts">> & {
  window: Partial<ReportWindow> & { tokens: number };
  tokens: Partial<ReportTokens>;
  counts?: Partial<ReportCounts>;
};

export type SectionKey = keyof ReportTokens;

/** The bar's sections, in the order they are drawn (the order a request is assembled). */
export const SECTIONS: ReadonlyArray<{ key: SectionKey; label: string }> = [
  { key: "system", label: "System prompt" },
  { key: "userContext", label: "User context" },
  { key: "summary", label: "Summary" },
  { key: "history", label: "History" },
  { key: "toolResults", label: "Tool results" },
  { key: "tools", label: "Tool definitions" },
  { key: "reminders", label: "Reminders" },
  { key: "recalled", label: "Recalled from earlier" },
  { key: "documents", label: "Project documents" },
  { key: "reserve", label: "Output reserve" },
];

export interface Segment {
  key: SectionKey;
  label: string;
  tokens: number;
  /** Share of the bar, 0..1 (of the window, or of the total when the total exceeds it). */
  fraction: number;
}

export interface Gauge {
  window: number;
  /** Prompt tokens (every section but the reserve). */
  used: number;
  /** The prompt's size as the server counted it (`estimated`), else `used`. */
  prompt: number;
  /** Prompt tokens plus the output reserve. */
  total: number;
  free: number;
  /** used / window, 0..∞ (over 1 means the request did not fit). */
  usedRatio: number;
  segments: Segment[];
  /** Set when something was summarized, digested, dropped or cut. */
  marker: { text: string } | null;
  /** The lines of the hover text. */
  lines: string[];
}

const count = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0);

export function formatTokens(n: number): string {
  if (n >= 100_000) return `${Math.round(n / 1000)}k`;
  if (n >= 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return String(Math.round(n));
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What history shortening happened, in words; null when nothing was shortened. */
export function shorteningText(report: ContextReport): string | null {
  const c = report.counts ?? {};
  const parts: string[] = [];
  if (count(c.summarized)) {
    const how = report.summary?.fallback ? " (as a digest: summarizing failed)" : "";
    parts.push(`${plural(count(c.summarized), "message")} summarized${how}`);
  }
  if (count(c.digested)) parts.push(`${plural(count(c.digested), "tool round")} digested`);
  if (count(c.dropped)) parts.push(`${plural(count(c.dropped), "older block")} left out`);
  if (count(c.cut)) parts.push(`${plural(count(c.cut), "block")} cut`);
  return parts.length ? parts.join(", ") : null;
}

/** How the prompt's size was counted, as a suffix: by the server's own tokenizer, or estimated. */
function countedHow(report: ContextReport): string {
  if (report.calibration) return ` (calibrated by ${report.calibration})`;
  return report.counter === "estimate" ? " (estimated)" : "";
}

/** The learned correction per component ("system ×1.05, tools ×0, messages ×1.12"); null while
 * every factor is 1 (or the report predates them). */
export function factorsText(report: ContextReport): string | null {
  const f = report.factors;
  if (!f || [f.system, f.tools, f.messages].every((x) => x === 1)) return null;
  const x = (n: number) => `×${Number(n.toFixed(2))}`;
  return `system ${x(f.system)}, tools ${x(f.tools)}, messages ${x(f.messages)}`;
}

export function computeGauge(report: ContextReport): Gauge {
  const window = count(report.window?.tokens);
  const tokens = report.tokens ?? {};
  const raw = SECTIONS.map(({ key, label }) => ({ key, label, tokens: count(tokens[key]) }));
  const used = raw.filter((s) => s.key !== "reserve").reduce((sum, s) => sum + s.tokens, 0);
  const total = used + count(tokens.reserve);
  const scale = Math.max(window, total) || 1;
  const segments = raw.filter((s) => s.tokens > 0).map((s) => ({ ...s, fraction: s.tokens / scale }));
  const shortening = shorteningText(report);

  const lines: string[] = [];
  const model = report.model ? ` · ${report.model}` : "";
  const source = report.window?.source ? ` (${report.window.source})` : "";
  lines.push(`Context window: ${window.toLocaleString("en-US")} tokens${source}${model}`);
  const prompt = count(report.estimated) || used;
  lines.push(
    `Prompt: ${prompt.toLocaleString("en-US")} tokens${countedHow(report)}` +
      (window ? ` — ${Math.round((prompt / window) * 100)}% of the window` : ""),
  );
  if (count(report.reported)) {
    const cached = count(report.cachedTokens) ? `, ${count(report.cachedTokens).toLocaleString("en-US")} cached` : "";
    lines.push(`Reported by the provider: ${count(report.reported).toLocaleString("en-US")}${cached}`);
  }
  const factors = factorsText(report);
  if (factors) lines.push(`Correction: ${factors}`);
  for (const s of raw) if (s.tokens > 0) lines.push(`  ${s.label}: ${s.tokens.toLocaleString("en-US")}`);
  if (shortening) lines.push(`Shortened: ${shortening}`);
  const docs = report.documents;
  if (docs) {
    const what = docs.mode === "whole" ? `${docs.documents} documents whole` : `${docs.passages} passages retrieved from ${docs.documents} documents`;
    lines.push(`Project ${docs.project}: ${what}`);
  }
  const recalled = report.recalled;
  if (recalled && recalled.passages.length) {
    const n = recalled.passages.length;
    lines.push(`Recalled for this message: ${n} passage${n === 1 ? "" : "s"} from earlier in the chat (${count(recalled.tokens).toLocaleString("en-US")} tokens)`);
  }
  for (const limit of report.limits ?? []) lines.push(`Limit: ${limit}`);

  return {
    window,
    used,
    prompt,
    total,
    free: Math.max(0, window - total),
    usedRatio: window ? used / window : 0,
    segments,
    marker: shortening ? { text: shortening } : null,
    lines,
  };
}

/** A value that looks like a context report (it comes over the wire, so check before drawing). */
export function isContextReport(value: unknown): value is ContextReport {
  if (!value || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  const window = v.window as Record<string, unknown> | undefined;
  return !!window && typeof window.tokens === "number" && !!v.tokens && typeof v.tokens === "object";
}

/** The newest context report in a list of AI SDK UI messages (its `data-context` parts). */
export function latestReport(
  messages: ReadonlyArray<{ role: string; parts: ReadonlyArray<{ type: string; data?: unknown }> }>,
): ContextReport | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message || message.role !== "assistant") continue;
    for (let j = message.parts.length - 1; j >= 0; j--) {
      const part = message.parts[j];
      if (part?.type === "data-context" && isContextReport(part.data)) return part.data;
    }
  }
  return null;
}
