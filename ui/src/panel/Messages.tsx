// How the thread's messages look: markdown with code blocks, reasoning collapsed, every tool call
// (panel or server) as a compact expandable card (a run's files shown under it).
import {
  ActionBarPrimitive,
  MessagePrimitive,
  useAuiState,
  type ReasoningMessagePartProps,
  type TextMessagePartProps,
  type ToolCallMessagePartProps,
} from "@assistant-ui/react";
import { MarkdownTextPrimitive, type CodeHeaderProps } from "@assistant-ui/react-markdown";
import remarkGfm from "remark-gfm";
import { useState, type FC } from "react";
import { t as currentT, useI18n, type MessageKey } from "../i18n";
import { isFailedOutput } from "../runtime/toolRunner";
import { isEditNote } from "../tools/handEdits";
import { isRunNote } from "../tools/runHistory";
import { isRewindNote } from "../runtime/rewindNotes";
import type { ApprovalRequest } from "../tools/approvals";
import { ApprovalCard } from "./ApprovalCard";
import { MessageAttachments } from "./Attachments";
import { Cite, remarkCitations, ThreadDocuments } from "./Citations";
import { useStore, useStoreVersion } from "./context";
import { DelegateCard } from "./DelegateCard";
import { DownloadCards, FindMissingCards } from "./InstallCards";
import { MarkdownImage } from "./MarkdownImage";
import { Notices } from "./Notices";
import { RewindControl } from "./Rewind";
import { RunOutputs, runFiles } from "./RunOutputs";

const remarkPlugins = [remarkGfm, remarkCitations];

const CodeHeader: FC<CodeHeaderProps> = ({ language, code }) => {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard?.writeText(code).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1200);
    });
  };
  return (
    <div className="cua-code-header">
      <span>{language || t("message.codeText")}</span>
      <button type="button" className="cua-link" onClick={copy} aria-label={t("message.copyCode")}>
        {copied ? t("message.copied") : t("message.copy")}
      </button>
    </div>
  );
};

const markdownComponents = { CodeHeader, cite: Cite, img: MarkdownImage };
/** An answer's text runs in its own direction (an English answer in an Arabic panel keeps its full stop at the end). */
const ownDirection = { dir: "auto" };

export const MarkdownText: FC<TextMessagePartProps> = () => (
  <MarkdownTextPrimitive className="cua-md" containerProps={ownDirection} remarkPlugins={remarkPlugins} components={markdownComponents} smooth={false} />
);

/** What a note the panel adds to the user's message says (tools/runHistory.ts, tools/handEdits.ts,
 * runtime/rewindNotes.ts). */
function noteLabel(text: string, t = currentT): string | null {
  if (isRunNote(text)) return t("message.runNote");
  if (isEditNote(text)) return t("message.editNote");
  if (isRewindNote(text)) return t("message.rewindNote");
  return null;
}

/** A user message's text; a note the panel added to it is shown as the panel's, not as the
 * user's words. */
export const PlainText: FC<Pick<TextMessagePartProps, "text">> = ({ text }) => {
  const { t } = useI18n();
  const label = noteLabel(text, t);
  return label ? (
    <div className="cua-run-note" role="note" aria-label={label} dir="auto">
      {text}
    </div>
  ) : (
    <div className="cua-user-text" dir="auto">
      {text}
    </div>
  );
};

export const Reasoning: FC<ReasoningMessagePartProps> = ({ text, status }) => {
  const { t } = useI18n();
  const running = status.type === "running";
  return (
    <details className="cua-reasoning">
      <summary>{running ? t("message.thinking") : t("message.reasoning")}</summary>
      <div className="cua-reasoning-text">{text}</div>
    </details>
  );
};

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

export type ToolCardState = "running" | "done" | "failed" | "cancelled" | "denied";

/** A tool call's state for its card, from assistant-ui's tool-call part. */
export function toolCardState(part: Pick<ToolCallMessagePartProps, "result" | "isError" | "status" | "approval">): ToolCardState {
  if (part.approval?.approved === false) return "denied";
  if (part.isError) {
    const error = (part.result as { error?: unknown } | undefined)?.error;
    return typeof error === "string" && /cancelled/i.test(error) ? "cancelled" : "failed";
  }
  if (part.result === undefined) return part.status.type === "incomplete" ? "cancelled" : "running";
  return isFailedOutput(part.result) ? "failed" : "done";
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

const STATE_MARK: Record<ToolCardState, string> = { running: "…", done: "✓", failed: "✗", cancelled: "–", denied: "⊘" };
const STATE_LABEL: Record<ToolCardState, MessageKey> = {
  running: "tool.state.running",
  done: "tool.state.done",
  failed: "tool.state.failed",
  cancelled: "tool.state.cancelled",
  denied: "tool.state.denied",
};

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
      <summary aria-label={t("tool.summary", { name: part.toolName, state: t(STATE_LABEL[state]) })}>
        <span className="cua-tool-mark" aria-hidden="true">
          {STATE_MARK[state]}
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
  const files = state === "done" && part.toolName === RUN_TOOL ? runFiles(part.result) : [];
  return (
    <>
      {card}
      {part.toolName === "findMissing" && state === "done" ? <FindMissingCards result={part.result} /> : null}
      {part.toolName === "downloadModels" ? <DownloadCards progress={store.progressOf(part.toolCallId)} result={state === "running" ? undefined : part.result} /> : null}
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
      {files.length ? <RunOutputs files={files} url={(file) => store.fileUrl(file)} /> : null}
    </>
  );
};

/** A server tool waiting for the user (the server asks: saving a skill), as its card shows it. */
function serverAsks(part: ToolCallMessagePartProps, t = currentT): ApprovalRequest | undefined {
  const approval = part.approval;
  if (!approval || approval.approved !== undefined || approval.resolution) return undefined;
  return { kind: "server", action: approval.prompt ?? t("tool.serverAsks", { name: part.toolName }), nodes: [] };
}

/** The tool whose result can show what a run made (tools/queueWorkflow.ts). */
const RUN_TOOL = "queueWorkflow";

const Nothing: FC = () => null;

/** A `data-status` part: what the server is doing before the answer (a summary being made). */
export const StatusNote: FC<{ data: unknown }> = ({ data }) => {
  const status = (data ?? {}) as { text?: unknown; done?: unknown };
  if (typeof status.text !== "string") return null;
  return (
    <div className="cua-muted cua-status" role="status" data-done={status.done === true}>
      {status.text}
    </div>
  );
};

const assistantComponents = {
  Text: MarkdownText,
  Reasoning,
  tools: { by_name: { delegate: DelegateCard }, Fallback: ToolCard },
  data: { by_name: { status: StatusNote }, Fallback: Nothing },
};

/** The panel's notes noted right after this message. */
const NoticesAfterMessage: FC = () => {
  const id = useAuiState((s) => s.message.id);
  return <Notices after={id} />;
};

export const AssistantMessage: FC = () => {
  const { t } = useI18n();
  return (
    <>
      <MessagePrimitive.Root className="cua-msg cua-msg-assistant">
        <ThreadDocuments>
          <MessagePrimitive.Parts components={assistantComponents} />
        </ThreadDocuments>
        <ActionBarPrimitive.Root className="cua-actions" hideWhenRunning autohide="not-last">
          <ActionBarPrimitive.Copy className="cua-link" aria-label={t("message.copyAnswer")} title={t("message.copyAnswer")}>
            {t("message.copy")}
          </ActionBarPrimitive.Copy>
          <ActionBarPrimitive.Reload className="cua-link" aria-label={t("message.answerAgain")} title={t("message.answerAgain")}>
            {t("message.retry")}
          </ActionBarPrimitive.Reload>
        </ActionBarPrimitive.Root>
        <RewindControl />
      </MessagePrimitive.Root>
      <NoticesAfterMessage />
    </>
  );
};

const userComponents = { Text: PlainText };

export const UserMessage: FC = () => (
  <>
    <MessagePrimitive.Root className="cua-msg cua-msg-user">
      <MessageAttachments />
      <MessagePrimitive.Parts components={userComponents} />
    </MessagePrimitive.Root>
    <NoticesAfterMessage />
  </>
);

export const messageComponents = { UserMessage, AssistantMessage };
