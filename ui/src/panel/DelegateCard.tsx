// A delegated task (the `delegate` tool) as a collapsible card: the helper's steps and tools as
// they stream (interim outputs of the call), then its answer; its full trace on demand, fetched
// from the server. Stopping the answer stops the helper too (the server cancels it).
import { useAuiState, type ToolCallMessagePartProps } from "@assistant-ui/react";
import { useState, type FC } from "react";
import { getLocale, t, useI18n } from "../i18n";
import { errorMessage, requestJson } from "../server/api";
import { threadPath } from "../runtime/threadAdapter";
import { useCurrentThread } from "./context";
import type { DelegateProgress, DelegateResult, DelegateUsage, DelegationTrace, UIPart } from "./delegate.generated";
import { TOOL_CARD_STATES, type ToolCardSpec, type ToolCardState } from "./toolCard";

type Part = Pick<ToolCallMessagePartProps, "args" | "result" | "isError" | "status" | "toolCallId">;

export interface DelegateView {
  state: ToolCardState;
  task: string;
  progress: DelegateProgress | null;
  result: DelegateResult | null;
  /** The error text of a failed call (its `error`, or the tool's error text). */
  error: string | null;
}

function isProgress(value: unknown): value is DelegateProgress {
  return !!value && typeof value === "object" && (value as { status?: unknown }).status === "running";
}

function isResult(value: unknown): value is DelegateResult {
  return !!value && typeof value === "object" && typeof (value as { ok?: unknown }).ok === "boolean";
}

/** What the card shows for the call's part as it is now; `answering`: its message is still
 *  streaming (an interim output alone does not say whether the task still runs). */
export function delegateView(part: Part, answering: boolean): DelegateView {
  const args = (part.args ?? {}) as { task?: unknown };
  const task = typeof args.task === "string" ? args.task : "";
  const progress = isProgress(part.result) ? part.result : null;
  const result = isResult(part.result) ? part.result : null;
  if (part.isError) {
    const text = typeof part.result === "string" ? part.result : (part.result as { error?: unknown } | undefined)?.error;
    return { state: "failed", task, progress, result, error: typeof text === "string" ? text : t("delegate.failed") };
  }
  if (result) {
    const error = result.ok ? null : (result.error ?? t("delegate.failed"));
    return { state: result.ok ? "done" : "failed", task, progress, result, error };
  }
  const running = answering || part.status.type === "running";
  return { state: running ? "running" : "cancelled", task, progress, result: null, error: null };
}

export function usageText(usage: DelegateUsage | undefined): string {
  if (!usage) return "";
  const seconds = new Intl.NumberFormat(getLocale(), { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(usage.seconds);
  return [t("delegate.steps", { count: usage.steps }), t("delegate.tokens", { count: usage.tokens }), t("delegate.seconds", { seconds })].join(" · ");
}

const Tools: FC<{ view: DelegateView }> = ({ view }) => {
  const { t } = useI18n();
  const running = view.progress?.tools ?? [];
  const done = view.result?.sources ?? [];
  if (running.length === 0 && done.length === 0) return null;
  return (
    <ul className="cua-delegate-tools" aria-label={t("delegate.tools")}>
      {view.result
        ? done.map((line, i) => <li key={i}>{line}</li>)
        : running.map((tool, i) => (
            <li key={i} data-state={tool.state}>
              {TOOL_CARD_STATES[tool.state === "failed" ? "failed" : tool.state].mark} {tool.name}
              {tool.args ? `: ${tool.args}` : ""}
            </li>
          ))}
    </ul>
  );
};

function partLine(part: UIPart): string | null {
  if (part.type === "text" && part.text) return part.text;
  if (part.type?.startsWith("tool-")) {
    const name = part.type.slice(5);
    const result = part.state === "output-error" ? t("delegate.traceError", { error: part.errorText ?? "" }) : JSON.stringify(part.output ?? null);
    return `${name}(${JSON.stringify(part.input ?? {})})\n→ ${result}`;
  }
  return null;
}

export const TraceView: FC<{ trace: DelegationTrace }> = ({ trace }) => {
  const { t } = useI18n();
  return (
    <div className="cua-delegate-trace" aria-label={t("delegate.trace")}>
      <div className="cua-tool-label">{t("delegate.systemPrompt")}</div>
      <pre>{trace.system}</pre>
      {trace.messages.map((message, i) => (
        <div key={i}>
          <div className="cua-tool-label">{t(message.role === "user" ? "delegate.task" : "delegate.helper")}</div>
          {message.parts.map((part, j) => {
            const line = partLine(part);
            return line === null ? null : <pre key={j}>{line}</pre>;
          })}
        </div>
      ))}
    </div>
  );
};

export const DelegateBody: FC<{
  view: DelegateView;
  loadTrace: (() => Promise<DelegationTrace>) | null;
}> = ({ view, loadTrace }) => {
  const { t } = useI18n();
  const [trace, setTrace] = useState<DelegationTrace | null>(null);
  const [traceError, setTraceError] = useState<string | null>(null);
  const usage = view.result?.usage ?? view.progress?.usage;
  const show = () => {
    if (!loadTrace) return;
    setTraceError(null);
    loadTrace().then(setTrace, (error: unknown) => setTraceError(errorMessage(error)));
  };
  return (
    <div className="cua-tool-body">
      <Tools view={view} />
      {view.result?.answer ? (
        <>
          <div className="cua-tool-label">{t("delegate.answer")}</div>
          <div className="cua-delegate-answer">{view.result.answer}</div>
        </>
      ) : null}
      {view.result && view.result.facts.length > 0 ? (
        <ul className="cua-delegate-facts" aria-label={t("delegate.facts")}>
          {view.result.facts.map((fact, i) => (
            <li key={i}>{fact}</li>
          ))}
        </ul>
      ) : null}
      {view.error ? <pre className="cua-tool-error">{view.error}</pre> : null}
      {usage ? <div className="cua-muted">{usageText(usage)}</div> : null}
      {loadTrace && view.state !== "running" && !trace ? (
        <button type="button" className="cua-link" onClick={show}>
          {t("delegate.showTrace")}
        </button>
      ) : null}
      {traceError ? <div className="cua-tool-error">{traceError}</div> : null}
      {trace ? <TraceView trace={trace} /> : null}
    </div>
  );
};

export const DelegateCard: FC<ToolCallMessagePartProps> = (part) => {
  useI18n(); // (the view's texts are made here: made again in a new language)
  const { remoteId } = useCurrentThread();
  const answering = useAuiState((s) => s.message.status?.type === "running");
  const view = delegateView(part, answering);
  const loadTrace = remoteId
    ? () =>
        requestJson<{ trace: DelegationTrace }>(
          threadPath(remoteId, `/delegations/${encodeURIComponent(part.toolCallId)}`),
        ).then((body) => body.trace)
    : null;
  return <DelegateDetails view={view} loadTrace={loadTrace} />;
};

export const DelegateDetails: FC<{ view: DelegateView; loadTrace: (() => Promise<DelegationTrace>) | null }> = ({
  view,
  loadTrace,
}) => {
  const { t } = useI18n();
  const state = t(TOOL_CARD_STATES[view.state].label);
  const steps = view.progress && view.state === "running" ? t("delegate.step", { step: view.progress.steps + 1 }) : state;
  return (
    <details className="cua-tool cua-delegate" data-state={view.state}>
      <summary aria-label={t("delegate.summary", { state })}>
        <span className="cua-tool-mark" aria-hidden="true">
          {TOOL_CARD_STATES[view.state].mark}
        </span>
        <span className="cua-tool-name">delegate</span>
        <span className="cua-tool-args">{view.task}</span>
        <span className="cua-tool-where">{steps}</span>
      </summary>
      <DelegateBody view={view} loadTrace={loadTrace} />
    </details>
  );
};

/** The `delegate` tool's calls: this card, not the generic one. */
export const delegateCard: ToolCardSpec = { tool: "delegate", Card: DelegateCard };
