// The panel's own answers (slash commands), shown at the end of the thread. They are not part of
// the conversation: never stored with it, never sent to the model.
import { MarkdownTextPrimitive } from "@assistant-ui/react-markdown";
import { TextMessagePartProvider } from "@assistant-ui/react";
import remarkGfm from "remark-gfm";
import type { FC } from "react";
import type { Notice } from "../runtime/chatStore";
import { useCurrentThread, useStore, useStoreVersion } from "./context";
import { ContextDetails } from "./Gauge";

const remarkPlugins = [remarkGfm];

const NoticeText: FC<{ text: string; markdown: boolean }> = ({ text, markdown }) =>
  markdown ? (
    <TextMessagePartProvider text={text}>
      <MarkdownTextPrimitive className="cua-md" remarkPlugins={remarkPlugins} smooth={false} />
    </TextMessagePartProvider>
  ) : (
    <div className="cua-notice-text">{text}</div>
  );

const NoticeCard: FC<{ notice: Notice; onDismiss: () => void }> = ({ notice, onDismiss }) => (
  <div className="cua-notice" data-kind={notice.kind} role={notice.kind === "error" ? "alert" : "status"}>
    <div className="cua-notice-head">
      <span className="cua-notice-title">{notice.title}</span>
      <button type="button" className="cua-link" onClick={onDismiss} aria-label={`Dismiss: ${notice.title}`}>
        ✕
      </button>
    </div>
    {notice.report ? <ContextDetails report={notice.report} /> : null}
    {notice.text ? <NoticeText text={notice.text} markdown={notice.kind === "help" || notice.kind === "compact"} /> : null}
  </div>
);

export const Notices: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { key } = useCurrentThread();
  const notices = store.noticesOf(key);
  if (notices.length === 0) return null;
  return (
    <div className="cua-notices">
      {notices.map((n) => (
        <NoticeCard key={n.id} notice={n} onDismiss={() => store.dismissNotice(key, n.id)} />
      ))}
    </div>
  );
};
