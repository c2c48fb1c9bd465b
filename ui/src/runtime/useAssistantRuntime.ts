// The assistant-ui runtime over the store's chats, rebuilt on every mount of the panel:
//  - the thread list is assistant-ui's remote thread list (`useRemoteThreadListRuntime`) with
//    our adapter (threadAdapter.ts), starting on the thread shown last;
//  - each thread is the AI SDK runtime (`useAISDKRuntime`) over that thread's `Chat`, which
//    lives in the store — so unmounting loses nothing and a running answer keeps running; the
//    user's messages are sent by the store (ChatStore.sendMessage).
// This is what `useChatRuntime` does inside, except that `useChatRuntime` creates its Chat in
// React state and stops it on unmount.
import { useChat } from "@ai-sdk/react";
import { useAuiState, useRemoteThreadListRuntime, type AssistantRuntime } from "@assistant-ui/react";
import { useAISDKRuntime } from "@assistant-ui/react-ai-sdk";
import { useCallback, useLayoutEffect, useMemo, useState } from "react";
import { requestJson } from "../server/api";
import type { ChatStore } from "./chatStore";
import { createThreadListAdapter } from "./threadAdapter";

/** The panel shows a streaming answer's growth at most this often (the AI SDK's `useChat`
 * throttle on message changes; a status change shows the messages at once). Chunks come every few
 * ms, and each update rebuilds assistant-ui's state of every loaded message and renders the
 * answer's last block: one update per chunk kept a long thread's page busy for the whole stream. */
const STREAM_UPDATE_MS = 50;

function useStoreThreadRuntime(store: ChatStore): AssistantRuntime {
  const listId = useAuiState((s) => s.threadListItem.id);
  const remoteId = useAuiState((s) => s.threadListItem.remoteId);
  const entry = store.entryFor(listId, remoteId);
  const chat = useChat({ chat: entry.chat, experimental_throttle: STREAM_UPDATE_MS });
  const history = useMemo(() => store.historyAdapter(entry), [store, entry]);
  // A chat can already be answering when the tab opens again. assistant-ui's thread list
  // publishes a thread's first state during render, and a thread that is running at that
  // moment notifies its subscribers mid-render (React then logs a recovered error). So the
  // first render reports the chat as idle; the layout effect shows the real state before paint.
  const [mounted, setMounted] = useState(false);
  useLayoutEffect(() => setMounted(true), []);
  // Messages go through the store, which adds how the runs it stopped waiting for ended.
  const sendMessage = useCallback<typeof chat.sendMessage>((message, options) => store.sendMessage(entry, message, options), [store, entry]);
  const status = mounted || chat.status === "ready" || chat.status === "error" ? chat.status : ("ready" as const);
  // The store ends the open calls of the last answer itself when a message is sent
  // (runtime/pendingCalls.ts): the runtime would rewrite a denied call as cancelled.
  return useAISDKRuntime(
    { ...chat, status, sendMessage },
    { adapters: { history, attachments: entry.attachments }, cancelPendingToolCallsOnSend: false },
  );
}

export function useAssistantRuntime(store: ChatStore): AssistantRuntime {
  const adapter = useMemo(
    () =>
      createThreadListAdapter({
        request: requestJson,
        serverIdFor: store.serverIdFor,
        forget: store.forget,
        workflows: store.workflows,
        thread: store.ahead.thread,
      }),
    [store],
  );
  // The thread shown when the tab closed (its last page read at once after a reload); later
  // switches are the runtime's own.
  const [threadId] = useState(() => store.startingThread());
  const runtimeHook = useCallback(
    function useThreadRuntime() {
      return useStoreThreadRuntime(store);
    },
    [store],
  );
  return useRemoteThreadListRuntime({
    runtimeHook,
    adapter,
    threadId,
    onThreadIdChange: store.setCurrentThread,
  });
}
