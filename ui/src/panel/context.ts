// What the panel's components share: the store (outside React) and the runtime (rebuilt per mount).
import type { AssistantRuntime } from "@assistant-ui/react";
import { useAuiState } from "@assistant-ui/react";
import { createContext, useContext, useSyncExternalStore } from "react";
import type { Chat } from "@ai-sdk/react";
import type { UIMessage } from "ai";
import { NEW_THREAD, type ChatEntry, type ChatStore } from "../runtime/chatStore";

export const StoreContext = createContext<ChatStore | null>(null);
export const RuntimeContext = createContext<AssistantRuntime | null>(null);

export function useStore(): ChatStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error("the panel's store is missing");
  return store;
}

export function useRuntime(): AssistantRuntime {
  const runtime = useContext(RuntimeContext);
  if (!runtime) throw new Error("the panel's runtime is missing");
  return runtime;
}

/** Re-render when the store changes (notes, settings, running tools, the view). */
export function useStoreVersion(store: ChatStore): number {
  return useSyncExternalStore(store.subscribe, store.getVersion, store.getVersion);
}

export interface CurrentThread {
  entry: ChatEntry;
  /** The server id once the thread has one (after its first message). */
  remoteId: string | undefined;
  /** The key of its drafts and notes: the server id, or NEW_THREAD. */
  key: string;
}

export function useCurrentThread(): CurrentThread {
  const store = useStore();
  const listId = useAuiState((s) => s.threadListItem.id);
  const remoteId = useAuiState((s) => s.threadListItem.remoteId);
  return { entry: store.entryFor(listId, remoteId), remoteId, key: remoteId ?? NEW_THREAD };
}

/** A chat's status alone: re-renders when the status changes, not on every streamed chunk (as
 * `useChat` does, for its messages). For what is shown per message (Rewind) or in the header. */
export function useChatStatus<M extends UIMessage>(chat: Chat<M>): Chat<M>["status"] {
  return useSyncExternalStore(chat["~registerStatusCallback"], () => chat.status);
}
