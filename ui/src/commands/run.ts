// Running the commands the panel answers itself (see parse.ts). The answers are notes shown in
// the thread; they are never stored with it and never reach the model.
import type { UIMessage } from "ai";
import { t } from "../i18n";
import { errorMessage, type CompactResult } from "../server/api";
import type { NewNotice } from "../runtime/chatStore";
import type { RewindScope } from "../runtime/rewind";
import { threadPath } from "../runtime/threadAdapter";
import { isContextReport, latestReport, type ContextReport } from "../runtime/contextReport";
import { helpText, unknownCommandText, type ParsedInput } from "./parse";

export interface CommandContext {
  /** The server id of the current thread, or undefined while it has no message yet. */
  serverId: string | undefined;
  messages: readonly UIMessage[];
  /** The exact request of the last step, when the debug switch is on (`?debug=context`). */
  debugRequest?: unknown;
  /** Show a note in the thread; returns its id. */
  note(notice: NewNotice): string;
  dismiss(id: string): void;
  clearNotes(): void;
  newThread(): Promise<void>;
  /** Send a user message in the current thread. */
  send(text: string): void;
  request<T>(path: string, init?: { method?: string; body?: unknown }): Promise<T>;
  /** Rewind to before the thread's last answer that changed the graph (absent: not here). */
  rewind?(scope: RewindScope): Promise<void>;
}

const SCOPES: Record<string, RewindScope> = { "": "both", both: "both", graph: "graph", conversation: "conversation" };

export async function contextReport(ctx: CommandContext): Promise<ContextReport | null> {
  const fromChat = latestReport(ctx.messages);
  if (fromChat || !ctx.serverId) return fromChat;
  const { report } = await ctx.request<{ report: unknown }>(threadPath(ctx.serverId, "/context"));
  return isContextReport(report) ? report : null;
}

export function compactNotice(result: CompactResult): NewNotice {
  if (result.compacted === 0) {
    return {
      kind: "info",
      title: t("command.nothingToCompact"),
      text: t("command.allSummarized"),
    };
  }
  const title = t(result.summary?.fallback ? "command.summarizedDigest" : "command.summarized", { count: result.compacted });
  const notice: NewNotice = { kind: "compact", title };
  if (result.summary?.text) notice.text = result.summary.text;
  return notice;
}

const DEBUG_CHARS = 60_000;

export function debugText(request: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(request, null, 2) ?? String(request);
  } catch {
    text = String(request);
  }
  return text.length > DEBUG_CHARS ? `${text.slice(0, DEBUG_CHARS)}\n${t("command.debugMore", { count: text.length - DEBUG_CHARS })}` : text;
}

/** Run a command the panel answers (callers check `isLocal` first). */
export async function runCommand(parsed: ParsedInput, ctx: CommandContext): Promise<void> {
  if (parsed.kind === "text") return;
  if (parsed.kind === "unknown") {
    ctx.note({ kind: "error", title: t("command.unknownTitle", { name: parsed.name }), text: unknownCommandText(parsed.name) });
    return;
  }
  try {
    switch (parsed.name) {
      case "help":
        ctx.note({ kind: "help", title: t("command.helpTitle"), text: helpText() });
        return;
      case "new":
        await ctx.newThread();
        if (parsed.args) ctx.send(parsed.args);
        return;
      case "clear":
        ctx.clearNotes();
        await ctx.newThread();
        return;
      case "compact": {
        if (!ctx.serverId) {
          ctx.note({ kind: "info", title: t("command.nothingToCompact"), text: t("command.noMessages") });
          return;
        }
        const progress = ctx.note({ kind: "info", title: t("command.compacting"), text: t("command.compactingText") });
        try {
          const result = await ctx.request<CompactResult>(threadPath(ctx.serverId, "/compact"), {
            method: "POST",
            body: {},
          });
          ctx.note(compactNotice(result));
        } finally {
          ctx.dismiss(progress);
        }
        return;
      }
      case "rewind": {
        const scope = SCOPES[parsed.args.toLowerCase()];
        if (!scope) {
          ctx.note({ kind: "error", title: t("command.rewindUsageTitle"), text: t("command.rewindUsage") });
        } else if (!ctx.serverId || !ctx.rewind) {
          ctx.note({ kind: "info", title: t("rewind.nothing"), text: t("rewind.nothingChanged") });
        } else await ctx.rewind(scope);
        return;
      }
      case "context": {
        const report = await contextReport(ctx);
        ctx.note(
          report
            ? { kind: "context", title: t("command.contextTitle"), report }
            : { kind: "info", title: t("command.noContext"), text: t("command.noContextText") },
        );
        if (ctx.debugRequest !== undefined) {
          ctx.note({ kind: "info", title: t("command.debugTitle"), text: debugText(ctx.debugRequest) });
        }
        return;
      }
      default:
        // a command marked `sent` (e.g. /skill) is not run here
        return;
    }
  } catch (error) {
    ctx.note({ kind: "error", title: t("command.failed", { name: parsed.name }), text: errorMessage(error) });
  }
}
