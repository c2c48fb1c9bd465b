// The generic card of a tool call (panel or server): its state, arguments, result or error, its
// progress while it runs (with Stop waiting and Interrupt), the question it asks before it acts,
// and what the tool's own card module adds under it (toolCards.ts).
import type { ToolCallMessagePartProps } from "@assistant-ui/react";
import type { FC } from "react";
import { t as currentT, useI18n } from "../i18n";
import type { ApprovalRequest } from "../tools/approvals";
import { ApprovalCard } from "./ApprovalCard";
import { useStore, useStoreVersion } from "./context";
import { TOOL_CARD_STATES, toolCardState } from "./toolCard";
import { toolCardOf } from "./toolCards";

export function briefJson(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "";
  } catch {
    text = String(value);
  }
  if (text === "{}" || text === "null") return "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function prettyJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

/** The error text of a failed call: the errorText, or the tool's `{ok: false, error}`. */
export function toolErrorText(result: unknown): string | null {
  if (!result || typeof result !== "object") return null;
  const error = (result as { error?: unknown }).error;
  if (typeof error === "string") return error;
  if (error !== undefined) return prettyJson(error);
  return null;
}

/** A run's progress in a few words: "KSampler#5 · step 12/20 · 3 cached · 4 run"; null when
 * nothing was said yet. */
export function progressText(update: Record<string, unknown> | undefined, t = currentT): string | null {
  if (!update) return null;
  const bits: string[] = [];
  if (typeof update.status === "string") bits.push(update.status); // (a tool's own words, translated by it)
  if (update.node !== undefined) bits.push(t("tool.progress.node", { node: String(update.node) }));
  if (typeof update.step === "number" && typeof update.steps === "number") bits.push(t("tool.progress.step", { step: update.step, steps: update.steps }));
  if (typeof update.cached === "number" && update.cached > 0) bits.push(t("tool.progress.cached", { count: update.cached }));
  if (typeof update.ran === "number" && update.ran > 0) bits.push(t("tool.progress.ran", { count: update.ran }));
  return bits.length ? t("tool.progress", { parts: bits.join(" · ") }) : null;
}

/** Where a tool runs, in the panel's words (the registry's kinds). */
const WHERE_LABEL = { panel: "tool.where.panel", server: "tool.where.server" } as const;

export const ToolCard: FC<ToolCallMessagePartProps> = (part) => {
  const store = useStore();
  useStoreVersion(store);
  const { t } = useI18n();
  const state = toolCardState(part);
  const where = store.toolKinds?.get(part.toolName);
  const error = state === "failed" || state === "cancelled" ? toolErrorText(part.result) : null;
  const progress = state === "running" ? progressText(store.progressOf(part.toolCallId), t) : null;
  const asking = state === "running" ? (store.approvalOf(part.toolCallId) ?? serverAsks(part, t)) : undefined;
  const card = (
    <details className="cua-tool" data-state={state}>
      <summary aria-label={t("tool.summary", { name: part.toolName, state: t(TOOL_CARD_STATES[state].label) })}>
        <span className="cua-tool-mark" aria-hidden="true">
          {TOOL_CARD_STATES[state].mark}
        </span>
        <span className="cua-tool-name">{part.toolName}</span>
        <span className="cua-tool-args">{briefJson(part.args)}</span>
        {where && <span className="cua-tool-where">{t(WHERE_LABEL[where])}</span>}
        {progress && (
          <span className="cua-tool-progress" role="status">
            {progress}
          </span>
        )}
      </summary>
      <div className="cua-tool-body">
        <div className="cua-tool-label">{t("tool.arguments")}</div>
        <pre>{prettyJson(part.args)}</pre>
        {error !== null ? (
          <>
            <div className="cua-tool-label">{t("tool.error")}</div>
            <pre className="cua-tool-error">{error}</pre>
          </>
        ) : null}
        {part.result !== undefined && !part.isError ? (
          <>
            <div className="cua-tool-label">{t("tool.result")}</div>
            <pre>{prettyJson(part.result)}</pre>
          </>
        ) : null}
        {state === "running" ? <div className="cua-tool-label">{t("tool.running")}</div> : null}
      </div>
    </details>
  );
  const Below = toolCardOf(part.toolName)?.Below;
  return (
    <>
      {card}
      {Below ? <Below part={part} state={state} /> : null}
      {asking ? (
        <ApprovalCard
          request={asking}
          onAnswer={(approved, always, words) =>
            void (asking.kind === "server"
              ? part.respondToApproval(words ? { approved, reason: words } : { approved })
              : store.respondToApproval(part.toolCallId, approved, always, words))
          }
        />
      ) : null}
      {progress ? (
        <div className="cua-tool-actions">
          <button type="button" onClick={() => store.stopWaiting(part.toolCallId)}>
            {t("tool.stopWaiting")}
          </button>
          {store.canInterrupt(part.toolCallId) ? (
            <button type="button" onClick={() => void store.interrupt(part.toolCallId)} disabled={store.isInterrupting(part.toolCallId)}>
              {t(store.isInterrupting(part.toolCallId) ? "tool.interrupting" : "tool.interrupt")}
            </button>
          ) : null}
        </div>
      ) : null}
    </>
  );
};

/** A server tool waiting for the user (the server asks: saving a skill), as its card shows it. */
function serverAsks(part: ToolCallMessagePartProps, t = currentT): ApprovalRequest | undefined {
  const approval = part.approval;
  if (!approval || approval.approved !== undefined || approval.resolution) return undefined;
  return { kind: "server", action: approval.prompt ?? t("tool.serverAsks", { name: part.toolName }), nodes: [] };
}
