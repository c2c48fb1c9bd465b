// A thread's chat: the AI SDK `Chat` over our chat route (POST /api/assistant/chat, its id the
// server's thread id, so a resubmit works while the tab is closed), its automatic resubmits
// after tool outputs, its panel tool calls, and what the panel keeps beside it (ChatEntry).
import { Chat } from "@ai-sdk/react";
import { AssistantChatTransport } from "@assistant-ui/react-ai-sdk";
import type { UIMessage } from "ai";
import { apiUrl, requestJson } from "../server/api";
import { Approvals } from "./approvals";
import { ServerAttachments } from "./attachments";
import type { ChatEntry } from "./chatTypes";
import type { PanelSettings } from "./panelSettings";
import { newOnlyTransport, SentMessages } from "./sentMessages";
import { ThreadPages } from "./threadPages";
import { lastUserId, shouldResubmit } from "./steps";
import type { WorkflowThreads } from "./workflowThreads";

export const CHAT_PATH = "/api/assistant/chat";

export interface ChatEntryDeps {
  settings: () => PanelSettings;
  workflows: WorkflowThreads;
  changed: () => void;
  /** Runs a panel tool call the model made (never awaited: the SDK awaits it in its stream loop). */
  runTool: (entry: ChatEntry, name: string, toolCallId: string, input: unknown) => void;
  /** Keeps the graph as the assistant's turn left it, for the user's next message. */
  keepGraph: (entry: ChatEntry) => void;
  /** A turn failed (runtime/threadSync.ts takes back one another tab's turn refused). */
  failed: (entry: ChatEntry, error: Error) => void;
  /** How its pages are read (the store's answers the first read with a page read ahead). */
  request?: typeof requestJson;
}

export function newChatEntry(serverId: string, known: boolean, deps: ChatEntryDeps): ChatEntry {
  const entry: ChatEntry = {
    serverId,
    known,
    haltedAfter: null,
    pendingTools: 0,
    openingTabs: 0,
    progress: new Map(),
    waits: new Map(),
    unfinishedRuns: new Set(),
    shot: null,
    graphNote: null,
    putBack: null,
    debugRequest: undefined,
    attachments: new ServerAttachments(() => serverId),
    approvals: new Approvals(() => entry.chat, deps.changed, deps.settings().askBeforeEdits !== false),
    sent: new SentMessages(),
    pages: new ThreadPages(serverId, deps.request ?? requestJson),
    chat: undefined as unknown as Chat<UIMessage>,
  };
  // A turn sends what the server does not have (runtime/sentMessages.ts).
  const newOnly = newOnlyTransport(entry.sent, entry.pages);
  const transport = new AssistantChatTransport<UIMessage>({
    api: apiUrl(CHAT_PATH),
    fetch: newOnly.fetch,
    // No runtime is wired into the transport on purpose: the request id is the chat id,
    // which is the server's thread id, so a resubmit works while the tab is closed.
    prepareSendMessagesRequest: async (request) => {
      // "Answer again" after a Stop: the new answer may run its tools to the end.
      if (request.trigger === "regenerate-message") entry.haltedAfter = null;
      deps.workflows.touched(request.id);
      return {
        api: apiUrl(deps.settings().debugContext ? `${CHAT_PATH}?debug=context` : CHAT_PATH),
        body: {
          ...request.body,
          id: request.id,
          ...(await newOnly.body(request.messages)),
          trigger: request.trigger,
          messageId: request.messageId,
          metadata: request.requestMetadata,
          // The workflow tab the panel is on: a thread this request creates belongs to it.
          workflow: deps.workflows.active,
        },
      };
    },
  });
  (entry as { chat: Chat<UIMessage> }).chat = new Chat<UIMessage>({
    id: serverId,
    transport,
    sendAutomaticallyWhen: ({ messages }) =>
      shouldResubmit(messages, { maxSteps: deps.settings().maxSteps, haltedAfter: entry.haltedAfter }),
    onToolCall: ({ toolCall }) => {
      // Never await here: the SDK awaits this callback inside its stream loop.
      deps.runTool(entry, toolCall.toolName, toolCall.toolCallId, toolCall.input);
    },
    onFinish: ({ isAbort, isDisconnect, isError, message, messages }) => {
      if (isAbort) entry.haltedAfter = lastUserId(messages);
      else if (!isDisconnect && !isError) entry.sent.finished(message);
      entry.approvals.finished();
      deps.keepGraph(entry);
      deps.changed();
    },
    onError: (error) => deps.failed(entry, error),
    onData: (part) => {
      if (part.type === "data-context-request") {
        entry.debugRequest = part.data;
        deps.changed();
      }
    },
  });
  return entry;
}
