// The conversation: messages, the panel's notes (each after the message it followed), errors and
// the step-limit notice, the composer.
import { ThreadPrimitive } from "@assistant-ui/react";
import { useAISDKError } from "@assistant-ui/react-ai-sdk";
import { useChat } from "@ai-sdk/react";
import type { FC } from "react";
import { serverErrorText } from "../runtime/api";
import { stepLimitReached } from "../runtime/steps";
import { Composer } from "./Composer";
import { useCurrentThread, useStore, useStoreVersion } from "./context";
import { messageComponents } from "./Messages";
import { LeftoverNotices, Notices } from "./Notices";

const Welcome: FC = () => {
  const store = useStore();
  return (
    <div className="cua-welcome">
      <p>Ask about your workflow: build it, fix it, explain it, run it.</p>
      <p className="cua-muted">
        Type <code>/</code> for commands — <code>/skill</code> follows a skill, <code>/help</code> lists the rest. The
        model and server are set in{" "}
        <button type="button" className="cua-link" onClick={() => store.setView("settings")}>
          Settings
        </button>
        .
      </p>
    </div>
  );
};

/** The chat's last error, with the server's own text. */
const ErrorBanner: FC = () => {
  const error = useAISDKError();
  if (!error) return null;
  return (
    <div className="cua-error cua-error-banner" role="alert">
      {serverErrorText(error.message, "The answer failed.")}
    </div>
  );
};

const StepLimit: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry } = useCurrentThread();
  const { messages, status } = useChat({ chat: entry.chat });
  if (status !== "ready" || entry.pendingTools > 0) return null;
  if (!stepLimitReached(messages, store.settings.maxSteps)) return null;
  return (
    <div className="cua-notice" data-kind="info" role="status">
      Stopped after {store.settings.maxSteps} steps (the limit per message, in Settings). Send “continue” to go on.
    </div>
  );
};

const RunningTools: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry } = useCurrentThread();
  if (entry.pendingTools === 0) return null;
  return (
    <div className="cua-muted cua-running" role="status">
      {entry.approvals.waiting() ? "Waiting for your answer above…" : "Running tools in the panel…"}
    </div>
  );
};

export const Chat: FC = () => (
  <ThreadPrimitive.Root className="cua-chat">
    <ThreadPrimitive.Viewport className="cua-viewport">
      <ThreadPrimitive.Empty>
        <Welcome />
      </ThreadPrimitive.Empty>
      <Notices after={null} />
      <ThreadPrimitive.Messages components={messageComponents} />
      <RunningTools />
      <StepLimit />
      <ErrorBanner />
      <LeftoverNotices />
    </ThreadPrimitive.Viewport>
    <Composer />
  </ThreadPrimitive.Root>
);
