// The panel's own answers (slash commands), shown in the thread where they were asked: after the
// message that was last then, so the next question and answer come below them (a tall /context
// card at the end would stay under the new answer and hide it). They are not part of the
// conversation: never stored with it, never sent to the model.
import { MarkdownTextPrimitive } from "@assistant-ui/react-markdown";
import { TextMessagePartProvider } from "@assistant-ui/react";
import remarkGfm from "remark-gfm";
import { useChat } from "@ai-sdk/react";
import type { FC } from "react";
import { useI18n } from "../i18n";
import type { ChatEntry, Notice } from "../runtime/chatStore";
import { useCurrentThread, useStore, useStoreVersion } from "./context";
import { ContextDetails } from "./Gauge";
import { MarkdownImage } from "./MarkdownImage";

const remarkPlugins = [remarkGfm];
const components = { img: MarkdownImage };

const NoticeText: FC<{ text: string; markdown: boolean }> = ({ text, markdown }) =>
  markdown ? (
    <TextMessagePartProvider text={text}>
      <MarkdownTextPrimitive className="cua-md" remarkPlugins={remarkPlugins} components={components} smooth={false} />
    </TextMessagePartProvider>
  ) : (
    <div className="cua-notice-text">{text}</div>
  );

const NoticeCard: FC<{ notice: Notice; onDismiss: () => void }> = ({ notice, onDismiss }) => {
  const { t } = useI18n();
  return (
  <div className="cua-notice" data-kind={notice.kind} role={notice.kind === "error" ? "alert" : "status"}>
    <div className="cua-notice-head">
      <span className="cua-notice-title">{notice.title}</span>
      <button type="button" className="cua-link" onClick={onDismiss} aria-label={t("notices.dismiss", { title: notice.title })}>
        ✕
      </button>
    </div>
    {notice.report ? <ContextDetails report={notice.report} /> : null}
    {notice.text ? <NoticeText text={notice.text} markdown={notice.kind === "help" || notice.kind === "compact"} /> : null}
  </div>
  );
};

/** Where a note shows: after its message, before the first message (noted on an empty thread),
 * or at the end when its message is gone (an answer given again). */
export function noticePlace(notice: Notice, messageIds: ReadonlySet<string>): string | null | "end" {
  if (notice.after === null || notice.after === undefined) return null;
  return messageIds.has(notice.after) ? notice.after : "end";
}

const NoticeCards: FC<{ notices: readonly Notice[] }> = ({ notices }) => {
  const store = useStore();
  const { key } = useCurrentThread();
  if (notices.length === 0) return null;
  return (
    <div className="cua-notices">
      {notices.map((n) => (
        <NoticeCard key={n.id} notice={n} onDismiss={() => store.dismissNotice(key, n.id)} />
      ))}
    </div>
  );
};

/** The notes that follow message `after` (null: those noted before any message). */
export const Notices: FC<{ after: string | null }> = ({ after }) => {
  const store = useStore();
  useStoreVersion(store);
  const { key } = useCurrentThread();
  const notices = store.noticesOf(key).filter((n) => (n.after ?? null) === after);
  return <NoticeCards notices={notices} />;
};

/** At the thread's end: the notes whose message is no longer in it. */
export const LeftoverNotices: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { key, entry } = useCurrentThread();
  const notices = store.noticesOf(key);
  // (only a thread with notes follows its messages: not a render per streamed chunk for nothing)
  return notices.length === 0 ? null : <Leftover notices={notices} chat={entry.chat} />;
};

const Leftover: FC<{ notices: readonly Notice[]; chat: ChatEntry["chat"] }> = ({ notices, chat }) => {
  const { messages } = useChat({ chat });
  const ids = new Set(messages.map((m) => m.id));
  return <NoticeCards notices={notices.filter((n) => noticePlace(n, ids) === "end")} />;
};
