// A thread's stored messages (GET /api/assistant/threads/{id}) loaded into its chat when the
// thread list opens it, with its checkpoints and branches; a card that waited when the page was
// reloaded waits again (runtime/approvals.ts). The server stores every turn itself.
import type { ThreadHistoryAdapter } from "@assistant-ui/react";
import type { UIMessage } from "ai";
import type { ChatEntry } from "./chatTypes";
import type { Checkpoints } from "./checkpoints";
import type { Rewinds } from "./rewind";
import { recorded } from "./sentMessages";
import { toRepository } from "./threadAdapter";

export interface HistoryDeps {
  checkpoints: Checkpoints;
  rewinds: Rewinds;
  /** Runs a panel tool call again (one that waited for the user). */
  rerun: (entry: ChatEntry, name: string, toolCallId: string, input: unknown) => void;
}

export function threadHistory(entry: ChatEntry, deps: HistoryDeps): ThreadHistoryAdapter {
  const load = async () => {
    if (!entry.known) return { headId: null, messages: [] };
    void deps.checkpoints.load(entry.serverId);
    void deps.rewinds.loadBranches(entry.serverId);
    const thread = await entry.pages.last(); // (its last page: earlier ones on demand)
    entry.sent.have(recorded(thread.messages ?? []));
    const rerun = (name: string, toolCallId: string, input: unknown) => deps.rerun(entry, name, toolCallId, input);
    return toRepository(entry.approvals.restore(thread.messages ?? [], rerun));
  };
  return {
    load: async () => ({ messages: [] }),
    append: async () => {}, // the server stores every turn itself (POST /api/assistant/chat)
    withFormat: <TMessage,>() => ({
      load: load as unknown as () => Promise<{ headId: string | null; messages: { parentId: string | null; message: TMessage }[] }>,
      append: async () => {},
    }),
  };
}
