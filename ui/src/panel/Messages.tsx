// How the thread's messages look: markdown with code blocks, reasoning collapsed, every tool call
// (panel or server) as a card: its tool's own (toolCards.ts), else the generic one (ToolCard.tsx).
import {
  ActionBarPrimitive,
  MessagePrimitive,
  useAuiState,
  type ReasoningMessagePartProps,
  type TextMessagePartProps,
  type ToolCallMessagePartProps,
} from "@assistant-ui/react";
import type { CodeHeaderProps } from "@assistant-ui/react-markdown";
import type { Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { memo, useEffect, useMemo, useState, type FC, type ReactNode } from "react";
import { t as currentT, useI18n } from "../i18n";
import { isEditNote } from "../tools/handEdits";
import { isRunNote } from "../tools/runHistory";
import { isRewindNote } from "../runtime/rewindNotes";
import { MessageAttachments } from "./Attachments";
import { Cite, remarkCitations } from "./Citations";
import { MarkdownImage } from "./MarkdownImage";
import { MarkdownBlock, withCodeBlocks } from "./markdownBlock";
import { markdownBlocks } from "./markdownBlocks";
import { later } from "./markdownLater";
import { Notices } from "./Notices";
import { RewindControl } from "./Rewind";
import { ToolCard } from "./ToolCard";
import { OWN_CARDS } from "./toolCards";

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

/** The markdown's own elements: citations, pictures, code blocks with their header. */
const markdownComponents = withCodeBlocks({ cite: Cite, img: MarkdownImage } as Components, CodeHeader);
/** An answer's text runs in its own direction (an English answer in an Arabic panel keeps its full stop at the end). */
const ownDirection = { dir: "auto" };

/** One block of the answer (markdownBlocks.ts): parsed again only when its own text changes, and
 * not rendered again when another block changes (markdownBlock.tsx). */
const Block: FC<{ block: string }> = ({ block }) => <MarkdownBlock block={block} components={markdownComponents} remarkPlugins={remarkPlugins} />;

/** A block drawn first as its plain text, as markdown in a later task (markdownLater.ts). */
const LaterMarkdownBlock: FC<{ block: string }> = memo(({ block }) => {
  const [ready, setReady] = useState(false);
  useEffect(() => (ready ? undefined : later(block.length, () => setReady(true))), [ready, block]);
  return ready ? <Block block={block} /> : <p className="cua-md-later">{block.trimEnd()}</p>;
});

/** The blocks at the end of an answer drawn as markdown at once when it is shown; those before
 * them (out of the view: a thread opens at its end) follow a few at a time. */
const AT_ONCE = 6;

export const MarkdownText: FC<TextMessagePartProps> = ({ text }) => {
  const blocks = useMemo(() => markdownBlocks(text), [text]);
  // (fixed when the answer is first drawn: the blocks that stream in later are drawn at once)
  const [laterBefore] = useState(() => blocks.length - AT_ONCE);
  return (
    <div className="cua-md" {...ownDirection}>
      {blocks.map((block, i) => (i < laterBefore ? <LaterMarkdownBlock key={i} block={block} /> : <Block key={i} block={block} />))}
    </div>
  );
};

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
  tools: { by_name: OWN_CARDS, Fallback: ToolCard },
  data: { by_name: { status: StatusNote }, Fallback: Nothing },
};

/** The panel's notes noted right after this message. */
const NoticesAfterMessage: FC = () => {
  const id = useAuiState((s) => s.message.id);
  return <Notices after={id} />;
};

/** A message's box. Not assistant-ui's MessagePrimitive.Root: that one tracks the pointer over each
 * message in the thread's state, which made every mouse move over the thread re-render it; the
 * action bar of an older answer shows on hover through CSS instead (panel.css, `.cua-row`). */
const MessageBox: FC<{ role: "user" | "assistant"; children: ReactNode }> = ({ role, children }) => {
  const id = useAuiState((s) => s.message.id);
  return (
    <div className={`cua-msg cua-msg-${role}`} data-message-id={id}>
      {children}
    </div>
  );
};

export const AssistantMessage: FC = () => {
  const { t } = useI18n();
  return (
    <>
      <MessageBox role="assistant">
        <MessagePrimitive.Parts components={assistantComponents} />
        <ActionBarPrimitive.Root className="cua-actions" hideWhenRunning autohide="never">
          <ActionBarPrimitive.Copy className="cua-link" aria-label={t("message.copyAnswer")} title={t("message.copyAnswer")}>
            {t("message.copy")}
          </ActionBarPrimitive.Copy>
          <ActionBarPrimitive.Reload className="cua-link" aria-label={t("message.answerAgain")} title={t("message.answerAgain")}>
            {t("message.retry")}
          </ActionBarPrimitive.Reload>
        </ActionBarPrimitive.Root>
        <RewindControl />
      </MessageBox>
      <NoticesAfterMessage />
    </>
  );
};

const userComponents = { Text: PlainText };

export const UserMessage: FC = () => (
  <>
    <MessageBox role="user">
      <MessageAttachments />
      <MessagePrimitive.Parts components={userComponents} />
    </MessageBox>
    <NoticesAfterMessage />
  </>
);

export const messageComponents = { UserMessage, AssistantMessage };
