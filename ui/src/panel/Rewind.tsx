// "Rewind to here" under an answer whose turn changed the graph (it has a checkpoint): a small
// menu — the graph, the conversation, or both — and what the last rewind came to.
import { useChat } from "@ai-sdk/react";
import { useAuiState, type AssistantRuntime } from "@assistant-ui/react";
import { useState, type FC } from "react";
import type { ChatEntry, ChatStore } from "../runtime/chatStore";
import type { RewindScope } from "../runtime/rewind";
import { useCurrentThread, useRuntime, useStore, useStoreVersion } from "./context";

const CHOICES: { scope: RewindScope; label: string; detail: string }[] = [
  { scope: "graph", label: "Graph", detail: "the workflow as it was before this answer; Ctrl+Z brings the newer one back" },
  { scope: "conversation", label: "Conversation", detail: "back to before this answer; what follows is kept as a branch" },
  { scope: "both", label: "Both", detail: "the graph and the conversation" },
];

/** The question a rewound turn began with, back in the composer (unless something is typed). */
export function putBack(runtime: AssistantRuntime, draft: string | null): void {
  const composer = runtime.thread.composer;
  if (draft && !composer.getState().text) composer.setText(draft);
}

/** `/rewind [graph|conversation]`: to before the thread's last answer that changed the graph. */
export async function rewindLast(store: ChatStore, entry: ChatEntry, runtime: AssistantRuntime, scope: RewindScope): Promise<void> {
  putBack(runtime, await store.rewinds.last(entry, scope));
}

export const RewindControl: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const runtime = useRuntime();
  const { entry, remoteId } = useCurrentThread();
  const { status: chatStatus } = useChat({ chat: entry.chat });
  const messageId = useAuiState((s) => s.message.id);
  const [open, setOpen] = useState(false);
  const checkpoint = store.checkpoints.of(remoteId).get(messageId);
  if (!checkpoint || !remoteId) return null;
  const status = store.rewinds.statusOf(remoteId, messageId);
  const running = chatStatus === "submitted" || chatStatus === "streaming" || entry.pendingTools > 0 || status?.kind === "busy";
  const choose = (scope: RewindScope) => {
    setOpen(false);
    if (scope === "graph") {
      void store.rewinds.graph(remoteId, messageId);
      return;
    }
    // The question the turn began with comes back to the composer, to ask again or otherwise.
    void store.rewinds.conversation(entry, messageId, scope === "both").then((draft) => putBack(runtime, draft));
  };
  return (
    <div className="cua-rewind">
      <button
        type="button"
        className="cua-link"
        aria-haspopup="menu"
        aria-expanded={open}
        disabled={running}
        title={running ? "Wait for the answer to finish" : "Go back to before this answer changed the graph"}
        onClick={() => setOpen(!open)}
      >
        Rewind to here
      </button>
      {open ? (
        <div className="cua-rewind-menu" role="menu" aria-label="Rewind to here">
          {CHOICES.map((choice) => (
            <button key={choice.scope} type="button" role="menuitem" onClick={() => choose(choice.scope)}>
              <span className="cua-rewind-label">{choice.label}</span>
              <span className="cua-muted">{choice.detail}</span>
            </button>
          ))}
        </div>
      ) : null}
      {status ? (
        <div className="cua-rewind-status" role="status" data-kind={status.kind}>
          {status.text}
          {status.kind === "closed" ? (
            <button type="button" className="cua-link" onClick={() => void store.rewinds.openInNewTab(remoteId, messageId)}>
              Open it in a new tab
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
};
