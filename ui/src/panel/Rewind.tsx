// "Rewind to here" under an answer whose turn changed the graph (it has a checkpoint): a small
// menu — the graph, the conversation, or both — and what the last rewind came to.
import { useAuiState, type AssistantRuntime } from "@assistant-ui/react";
import { useLayoutEffect, useRef, useState, type FC } from "react";
import { useI18n, type MessageKey } from "../i18n";
import type { ChatEntry, ChatStore } from "../runtime/chatStore";
import type { RewindScope } from "../runtime/rewind";
import { useChatStatus, useCurrentThread, useRuntime, useStore, useStoreVersion } from "./context";

const CHOICES: { scope: RewindScope; label: MessageKey; detail: MessageKey }[] = [
  { scope: "graph", label: "rewind.graph", detail: "rewind.graphDetail" },
  { scope: "conversation", label: "rewind.conversation", detail: "rewind.conversationDetail" },
  { scope: "both", label: "rewind.both", detail: "rewind.bothDetail" },
];

/** The question a rewound turn began with, back in the composer (unless something is typed). */
export function putBack(runtime: AssistantRuntime, draft: string | null): void {
  const composer = runtime.thread.composer;
  if (draft && !composer.getState().text) composer.setText(draft);
}

/** Scrolls the thread (its own viewport, never ComfyUI's page) so that all of `menu` is in
 * sight: opened under an answer at the bottom edge it would hang out of the panel. */
export function keepInView(menu: HTMLElement): void {
  const viewport = menu.closest<HTMLElement>(".cua-viewport");
  if (!viewport) return;
  const box = menu.getBoundingClientRect();
  const view = viewport.getBoundingClientRect();
  const bottom = Math.min(view.bottom, window.innerHeight);
  const top = Math.max(view.top, 0);
  const margin = 4;
  if (box.bottom > bottom) viewport.scrollTop += Math.min(box.bottom - bottom + margin, box.top - top); // (its top stays in sight)
  else if (box.top < top) viewport.scrollTop -= top - box.top + margin;
}

/** `/rewind [graph|conversation]`: to before the thread's last answer that changed the graph. */
export async function rewindLast(store: ChatStore, entry: ChatEntry, runtime: AssistantRuntime, scope: RewindScope): Promise<void> {
  putBack(runtime, await store.rewinds.last(entry, scope));
}

export const RewindControl: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { t } = useI18n();
  const runtime = useRuntime();
  const { entry, remoteId } = useCurrentThread();
  const chatStatus = useChatStatus(entry.chat);
  const messageId = useAuiState((s) => s.message.id);
  const [open, setOpen] = useState(false);
  const menu = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (open && menu.current) keepInView(menu.current);
  }, [open]);
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
        title={running ? t("rewind.wait") : t("rewind.toHereTitle")}
        onClick={() => setOpen(!open)}
      >
        {t("rewind.toHere")}
      </button>
      {open ? (
        <div ref={menu} className="cua-rewind-menu" role="menu" aria-label={t("rewind.toHere")}>
          {CHOICES.map((choice) => (
            <button key={choice.scope} type="button" role="menuitem" onClick={() => choose(choice.scope)}>
              <span className="cua-rewind-label">{t(choice.label)}</span>
              <span className="cua-muted">{t(choice.detail)}</span>
            </button>
          ))}
        </div>
      ) : null}
      {status ? (
        <div className="cua-rewind-status" role="status" data-kind={status.kind}>
          {status.text}
          {status.kind === "closed" ? (
            <button type="button" className="cua-link" onClick={() => void store.rewinds.openInNewTab(remoteId, messageId)}>
              {t("rewind.openInNewTab")}
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
};
