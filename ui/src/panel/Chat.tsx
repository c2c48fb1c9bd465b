// The conversation: messages, the panel's notes (each after the message it followed), errors and
// the step-limit notice, the composer.
import { ThreadPrimitive } from "@assistant-ui/react";
import { useAISDKError } from "@assistant-ui/react-ai-sdk";
import { useChat } from "@ai-sdk/react";
import { Fragment, useState, type FC, type ReactNode } from "react";
import { useI18n } from "../i18n";
import { serverErrorText } from "../server/api";
import { stepLimitReached } from "../runtime/steps";
import { ThreadDocuments } from "./Citations";
import { Composer } from "./Composer";
import { EarlierMessages } from "./EarlierMessages";
import { useCurrentThread, useStore, useStoreVersion } from "./context";
import { MessageList } from "./MessageList";
import { useAtEnd, useStickToBottom, type StickToBottom } from "./stickToBottom";
import { LeftoverNotices, Notices } from "./Notices";

/** A message whose `{name}` parameters are elements (a link, code), in the message's order. */
function withElements(text: string, elements: Record<string, ReactNode>): ReactNode[] {
  return text.split(/\{(\w+)\}/).map((part, i) => (i % 2 === 1 ? <Fragment key={i}>{elements[part] ?? `{${part}}`}</Fragment> : part));
}

const Welcome: FC = () => {
  const store = useStore();
  const { t } = useI18n();
  const help = withElements(t("chat.welcomeHelp"), {
    slash: <code>/</code>,
    skill: <code>/skill</code>,
    help: <code>/help</code>,
    settings: (
      <button type="button" className="cua-link" onClick={() => store.setView("settings")}>
        {t("chat.settingsLink")}
      </button>
    ),
  });
  return (
    <div className="cua-welcome">
      <p>{t("chat.welcome")}</p>
      <p className="cua-muted">{help}</p>
    </div>
  );
};

/** The chat's last error, with the server's own text. */
const ErrorBanner: FC = () => {
  const error = useAISDKError();
  const { t } = useI18n();
  if (!error) return null;
  return (
    <div className="cua-error cua-error-banner" role="alert">
      {serverErrorText(error.message, t("chat.answerFailed"))}
    </div>
  );
};

const StepLimit: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry } = useCurrentThread();
  const { t } = useI18n();
  const { messages, status } = useChat({ chat: entry.chat, experimental_throttle: 250 }); // (read once it is ready; a status change reads the messages then)
  if (status !== "ready" || entry.pendingTools > 0) return null;
  if (!stepLimitReached(messages, store.settings.maxSteps)) return null;
  return (
    <div className="cua-notice" data-kind="info" role="status">
      {t("chat.stepLimit", { count: store.settings.maxSteps })}
    </div>
  );
};

const RunningTools: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry } = useCurrentThread();
  const { t } = useI18n();
  if (entry.pendingTools === 0 && !entry.approvals.waiting()) return null; // (a card back after a reload waits with no tool running)
  return (
    <div className="cua-muted cua-running" role="status">
      {entry.approvals.waiting() ? t("chat.waitingForYou") : t("chat.runningTools")}
    </div>
  );
};

/** Shown while the view is above the thread's end: back to the latest message, which the view
 * then follows (disabled, and hidden by panel.css, at the end). */
const JumpToLatest: FC<{ stick: StickToBottom }> = ({ stick }) => {
  const { t } = useI18n();
  const atEnd = useAtEnd(stick);
  return (
    <button type="button" className="cua-jump" disabled={atEnd} onClick={stick.follow} aria-label={t("chat.jumpToLatest")} title={t("chat.jumpToLatest")}>
      ↓
    </button>
  );
};

export const Chat: FC = () => {
  // (state, not a ref: the list needs the element once it exists, and children mount before it is attached)
  const [viewport, setViewport] = useState<HTMLDivElement | null>(null);
  // (a plain element, not assistant-ui's Viewport: the view follows the end through stickToBottom.ts)
  const stick = useStickToBottom(viewport);
  return (
    <ThreadPrimitive.Root className="cua-chat">
      <div ref={setViewport} className="cua-viewport">
        <ThreadPrimitive.Empty>
          <Welcome />
        </ThreadPrimitive.Empty>
        <EarlierMessages />
        <Notices after={null} />
        <ThreadDocuments>
          <MessageList viewport={viewport} />
        </ThreadDocuments>
        <RunningTools />
        <StepLimit />
        <ErrorBanner />
        <LeftoverNotices />
        <JumpToLatest stick={stick} />
      </div>
      <Composer />
    </ThreadPrimitive.Root>
  );
};
