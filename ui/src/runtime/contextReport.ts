// The context report of an answer (core/context/context_stages.py `report`, a `data-context` part
// of every response): its type as the panel reads it, and the newest one of a thread. The gauge
// draws it (panel/gauge.ts); /context answers with it (commands/run.ts).
import type { ContextReport as ServerReport, ReportCounts, ReportTokens, ReportWindow } from "./contextReport.generated";

/**
 * A report as the panel reads it: the server's (`ServerReport`, generated from
 * core/base/wire_types.py), with only the window size and the sections required — a report stored
 * by an older version may lack the rest.
 */
export type ContextReport = Partial<Omit<ServerReport, "window" | "tokens" | "counts">> & {
  window: Partial<ReportWindow> & { tokens: number };
  tokens: Partial<ReportTokens>;
  counts?: Partial<ReportCounts>;
};

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
