// The thread list, backed by our threads endpoints through assistant-ui's remote thread list
// adapter: list / initialize / rename / archive / unarchive / delete / fetch / generateTitle.
// A thread's messages are loaded by the history adapter (threadHistory.ts), not here.
import type { RemoteThreadListAdapter, ThreadMessage } from "@assistant-ui/react";
import type { UIMessage } from "ai";
import type { ServerThread } from "../server/api";

type RemoteThreadMetadata = Awaited<ReturnType<RemoteThreadListAdapter["fetch"]>>;
type TitleStream = Awaited<ReturnType<RemoteThreadListAdapter["generateTitle"]>>;

export const THREADS = "/api/assistant/threads";

export const threadPath = (id: string, tail = "") => `${THREADS}/${encodeURIComponent(id)}${tail}`;

/** One thread of GET /api/assistant/threads as assistant-ui's thread metadata. */
export function toRemoteMetadata(thread: ServerThread): RemoteThreadMetadata {
  const metadata: {
    status: "regular" | "archived";
    remoteId: string;
    title?: string;
    lastMessageAt?: Date;
    custom: Record<string, unknown>;
  } = {
    status: thread.archived ? "archived" : "regular",
    remoteId: thread.id,
    custom: { messageCount: thread.messageCount },
  };
  if (thread.title) metadata.title = thread.title;
  if (typeof thread.updatedAt === "number" && Number.isFinite(thread.updatedAt)) {
    metadata.lastMessageAt = new Date(thread.updatedAt * 1000);
  }
  return metadata;
}

export const TITLE_CHARS = 60;

/**
 * A thread's title from its first user text — the same rule as the server's `title_from`
 * (core/store/threads.py): the first line, cut at a word boundary with an ellipsis.
 */
export function titleFromText(text: string): string {
  const line = text.trim().split(/\r?\n/)[0]?.trim() ?? "";
  if (line.length <= TITLE_CHARS) return line;
  let head = line.slice(0, TITLE_CHARS - 1);
  if (line[TITLE_CHARS - 1] !== " ") {
    // the last word is cut: drop it (Python's `head.rsplit(" ", 1)[0] or head`)
    const space = head.lastIndexOf(" ");
    if (space > 0) head = head.slice(0, space);
  }
  return head.replace(/[ ,.;:]+$/, "") + "…";
}

/** The first user text of assistant-ui thread messages. */
export function firstUserText(messages: readonly ThreadMessage[]): string {
  for (const message of messages) {
    if (message.role !== "user") continue;
    for (const part of message.content) {
      if (part.type === "text" && part.text.trim()) return part.text;
    }
  }
  return "";
}

/** An assistant-stream that carries one text part: how generateTitle hands back a title. */
export function titleStream(title: string): TitleStream {
  return new ReadableStream({
    start(controller) {
      if (title) {
        controller.enqueue({ type: "part-start", part: { type: "text" }, path: [] });
        controller.enqueue({ type: "text-delta", textDelta: title, path: [0] });
        controller.enqueue({ type: "part-finish", path: [0] });
      }
      controller.close();
    },
  }) as TitleStream;
}

/** Stored UI messages as the AI SDK history format's repository: a single chain. */
export function toRepository(messages: readonly UIMessage[]): {
  headId: string | null;
  messages: { parentId: string | null; message: UIMessage }[];
} {
  const items = messages.map((message, i) => ({
    parentId: i > 0 ? (messages[i - 1]?.id ?? null) : null,
    message,
  }));
  return { headId: messages.at(-1)?.id ?? null, messages: items };
}

export interface ThreadAdapterDeps {
  request: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  /** The server id chosen for a new thread (the id its chat already posts with). */
  serverIdFor: (localId: string) => string;
  /** A thread's stored fields (its messages are the history adapter's); default: read with its
   * last message only, never the whole thread. */
  thread?: (remoteId: string) => Promise<ServerThread>;
  /** A thread was deleted: drop its chat. */
  forget: (remoteId: string) => void;
  /** The threads' workflows (runtime/workflowThreads.ts): the active one, and what is listed. */
  workflows?: {
    readonly active: string | undefined;
    listed(threads: readonly ServerThread[]): void;
    created(remoteId: string): void;
    archived(remoteId: string, archived: boolean): void;
  };
}

export function createThreadListAdapter(deps: ThreadAdapterDeps): RemoteThreadListAdapter {
  const { request } = deps;
  return {
    async list() {
      const workflow = deps.workflows?.active;
      const query = workflow === undefined ? "" : `?workflow=${encodeURIComponent(workflow)}`; // its threads first
      const { threads } = await request<{ threads: ServerThread[] }>(THREADS + query);
      deps.workflows?.listed(threads);
      return { threads: threads.map(toRemoteMetadata) };
    },
    async initialize(localId) {
      const remoteId = deps.serverIdFor(localId);
      const workflow = deps.workflows?.active;
      await request(THREADS, { method: "POST", body: workflow === undefined ? { id: remoteId } : { id: remoteId, workflow } });
      deps.workflows?.created(remoteId);
      return { remoteId, externalId: undefined };
    },
    async rename(remoteId, title) {
      await request(threadPath(remoteId), { method: "PATCH", body: { title: title.trim().slice(0, 200) } });
    },
    async archive(remoteId) {
      await request(threadPath(remoteId), { method: "PATCH", body: { archived: true } });
      deps.workflows?.archived(remoteId, true);
    },
    async unarchive(remoteId) {
      await request(threadPath(remoteId), { method: "PATCH", body: { archived: false } });
      deps.workflows?.archived(remoteId, false);
    },
    async delete(remoteId) {
      deps.forget(remoteId);
      await request(threadPath(remoteId), { method: "DELETE" });
    },
    async fetch(remoteId) {
      const thread = deps.thread ?? ((id: string) => request<ServerThread>(threadPath(id, "?last=1")));
      return toRemoteMetadata(await thread(remoteId));
    },
    async generateTitle(_remoteId, messages) {
      // The server titles a thread from its first user message; show the same title now.
      return titleStream(titleFromText(firstUserText(messages)));
    },
  };
}
