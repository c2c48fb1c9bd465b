// The context gauge's arithmetic: a context report (core/context/context_stages.py `report`, sent as a
// `data-context` part with every response) becomes the segments of one slim bar — the window
// split by section — plus the lines shown on hover and a marker when history was shortened.

import { getLocale, numberFormat, translate, type MessageKey, type Params } from "../i18n";
import type { ContextReport } from "../runtime/contextReport";
import type { ReportTokens } from "../runtime/contextReport.generated";

export { isContextReport, latestReport, type ContextReport } from "../runtime/contextReport";

export type SectionKey = keyof ReportTokens;

/** The bar's sections, in the order they are drawn (the order a request is assembled). */
export const SECTIONS: ReadonlyArray<SectionKey> = [
  "system",
  "userContext",
  "summary",
  "history",
  "toolResults",
  "tools",
  "reminders",
  "recalled",
  "documents",
  "reserve",
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

/** A token count in a few characters: 950, 8192, 12.5k, 131k (digits and "k" for the locale). */
export function formatTokens(n: number, tag = getLocale()): string {
  const thousands = (value: number, digits: number) =>
    translate(tag, "gauge.thousands", { value: numberFormat(tag, { maximumFractionDigits: digits }).format(value) });
  if (n >= 100_000) return thousands(Math.round(n / 1000), 0);
  if (n >= 10_000) return thousands(Math.round(n / 100) / 10, 1);
  return numberFormat(tag, { useGrouping: false, maximumFractionDigits: 0 }).format(n);
}

/** What history shortening happened, in words; null when nothing was shortened. */
export function shorteningText(report: ContextReport, tag = getLocale()): string | null {
  const c = report.counts ?? {};
  const parts: string[] = [];
  const say = (key: MessageKey, n: number) => parts.push(translate(tag, key, { count: n }));
  if (count(c.summarized)) say(report.summary?.fallback ? "gauge.summarizedAsDigest" : "gauge.summarized", count(c.summarized));
  if (count(c.digested)) say("gauge.digested", count(c.digested));
  if (count(c.dropped)) say("gauge.dropped", count(c.dropped));
  if (count(c.cut)) say("gauge.cut", count(c.cut));
  return parts.length ? parts.join(translate(tag, "gauge.separator")) : null;
}

/** How the prompt's size was counted, as a suffix: by the server's own tokenizer, or estimated. */
function countedHow(report: ContextReport, tag: string): string {
  if (report.calibration) return translate(tag, "gauge.calibrated", { how: report.calibration });
  return report.counter === "estimate" ? translate(tag, "gauge.estimated") : "";
}

/** The learned correction per component ("system ×1.05, tools ×0, messages ×1.12"); null while
 * every factor is 1 (or the report predates them). */
export function factorsText(report: ContextReport, tag = getLocale()): string | null {
  const f = report.factors;
  if (!f || [f.system, f.tools, f.messages].every((x) => x === 1)) return null;
  const x = (n: number) => numberFormat(tag, { maximumFractionDigits: 2 }).format(n);
  return translate(tag, "gauge.factors", { system: x(f.system), tools: x(f.tools), messages: x(f.messages) });
}

/** Where the window size came from, in words (a source the panel does not know: as sent). */
const WINDOW_SOURCES: Record<string, MessageKey> = {
  settings: "gauge.source.settings",
  environment: "gauge.source.environment",
  "thread setting": "gauge.source.thread",
  provider: "gauge.source.provider",
  "provider error": "gauge.source.providerError",
  "model table": "gauge.source.modelTable",
  default: "gauge.source.default",
};

/** The lines of the hover text. */
function hoverLines(report: ContextReport, raw: Array<{ label: string; tokens: number }>, window: number, prompt: number, tag: string): string[] {
  const say = (key: MessageKey, params?: Params) => translate(tag, key, params);
  const lines: string[] = [];
  const source = report.window?.source;
  const sourceKey = source ? WINDOW_SOURCES[source] : undefined;
  lines.push(
    say("gauge.line.window", {
      count: window,
      source: source ? say("gauge.line.source", { source: sourceKey ? say(sourceKey) : source }) : "",
      model: report.model ? ` · ${report.model}` : "",
    }),
  );
  const percent = numberFormat(tag, { style: "percent" }).format(window ? prompt / window : 0);
  lines.push(
    say("gauge.line.prompt", {
      count: prompt,
      how: countedHow(report, tag),
      share: window ? say("gauge.line.share", { percent }) : "",
    }),
  );
  if (count(report.reported)) {
    const reported = count(report.reported);
    const cached = count(report.cachedTokens);
    lines.push(cached ? say("gauge.line.reportedCached", { reported, cached }) : say("gauge.line.reported", { reported }));
  }
  const factors = factorsText(report, tag);
  if (factors) lines.push(say("gauge.line.correction", { factors }));
  for (const s of raw) if (s.tokens > 0) lines.push(`  ${say("gauge.sectionLine", { section: s.label, tokens: s.tokens })}`);
  const shortening = shorteningText(report, tag);
  if (shortening) lines.push(say("gauge.line.shortened", { what: shortening }));
  const docs = report.documents;
  if (docs) {
    const what =
      docs.mode === "whole"
        ? say("gauge.documentsWhole", { count: docs.documents })
        : say("gauge.documentsRetrieved", { count: docs.documents, passages: say("gauge.passages", { count: docs.passages }) });
    lines.push(say("gauge.line.project", { project: docs.project, what }));
  }
  const recalled = report.recalled;
  if (recalled && recalled.passages.length) {
    lines.push(say("gauge.line.recalled", { count: recalled.passages.length, tokens: say("gauge.tokens", { count: count(recalled.tokens) }) }));
  }
  for (const limit of report.limits ?? []) lines.push(say("gauge.line.limit", { limit }));
  // calls the model wrote nearly right or as text, read as meant (issue 40)
  if (report.repairs) lines.push(say("gauge.line.repairs", { count: report.repairs }));
  return lines;
}

/** The gauge of a report, its words in locale `tag` (the current one unless told). */
export function computeGauge(report: ContextReport, tag = getLocale()): Gauge {
  const window = count(report.window?.tokens);
  const tokens = report.tokens ?? {};
  const raw = SECTIONS.map((key) => ({ key, label: translate(tag, `gauge.section.${key}`), tokens: count(tokens[key]) }));
  const used = raw.filter((s) => s.key !== "reserve").reduce((sum, s) => sum + s.tokens, 0);
  const total = used + count(tokens.reserve);
  const scale = Math.max(window, total) || 1;
  const segments = raw.filter((s) => s.tokens > 0).map((s) => ({ ...s, fraction: s.tokens / scale }));
  const shortening = shorteningText(report, tag);
  const prompt = count(report.estimated) || used;

  return {
    window,
    used,
    prompt,
    total,
    free: Math.max(0, window - total),
    usedRatio: window ? used / window : 0,
    segments,
    marker: shortening ? { text: shortening } : null,
    lines: hoverLines(report, raw, window, prompt, tag),
  };
}
