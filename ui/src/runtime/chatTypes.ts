// The types the chat store and the panel share: a thread's chat entry, the notes a command
// leaves, what the store is built from (runtime/chatStore.ts).
import type { Chat } from "@ai-sdk/react";
import type { UIMessage } from "ai";
import type { Approvals } from "./approvals";
import type { ServerAttachments } from "./attachments";
import type { WorkflowAccess } from "./checkpoints";
import type { PanelSettings } from "./panelSettings";
import type { SentMessages } from "./sentMessages";
import type { ThreadPages } from "./threadPages";
import type { ToolFunctions } from "./toolRunner";
import type { ContextReport } from "./contextReport";
import type { GraphShot } from "../tools/graphSnapshot";
import type { OutputFile } from "../tools/outputFiles";

export interface ChatEntry {
  /** The thread's id on the server: the chat's id, the `id` of every POST /api/assistant/chat. */
  readonly serverId: string;
  readonly chat: Chat<UIMessage>;
  /** Whether the server knows the thread (listed, or initialized by the thread list). */
  known: boolean;
  /** The user message whose turn was stopped: no automatic resubmit for it. */
  haltedAfter: string | null;
  /** Panel tool calls running now. */
  pendingTools: number;
  /** Of those, calls that open a workflow tab (loadWorkflow, loadTemplate). */
  openingTabs: number;
  /** Where each running call is, by its tool call id, when it says (a run: its node, step). */
  readonly progress: Map<string, Record<string, unknown>>;
  /** Each running call's "stop waiting", by its tool call id. */
  readonly waits: Map<string, AbortController>;
  /** ComfyUI runs (prompt ids) a call stopped waiting for: how each ended comes with the
   * user's next message once it has (ChatStore.sendMessage). */
  readonly unfinishedRuns: Set<string>;
  /** The workflow as the assistant's last turn left it (or as the user's last message told it):
   * what the user changed by hand since comes with their next message. None after a reload. */
  shot: GraphShot | null;
  /** The note for the next message after the conversation moved without the graph (a
   * conversation-only rewind, a branch return: runtime/rewindNotes.ts), until it is sent. */
  graphNote: string | null;
  /** The words of a message the server refused (another tab's answer was being written, or the
   * thread moved on there: threadSync.ts), for the composer to take back; null when none. */
  putBack: string | null;
  /** The last `data-context-request` (with ?debug=context). */
  debugRequest: unknown;
  /** Files attached in this thread's composer (sent to the server as they are attached). */
  readonly attachments: ServerAttachments;
  /** Tool calls waiting for the user's Allow or Deny, and whether graph edits need one. */
  readonly approvals: Approvals;
  /** What the server has of the thread's messages: a turn sends the rest (sentMessages.ts). */
  readonly sent: SentMessages;
  /** Where its messages start in the thread: it opens with the last page (threadPages.ts). */
  readonly pages: ThreadPages;
}

export interface Notice {
  id: string;
  kind: "help" | "info" | "error" | "context" | "compact";
  title: string;
  text?: string;
  report?: ContextReport | null;
  /** The message it follows in the thread (the last one when it was noted; null: none yet).
   * Later messages come below it, so a tall card never hides the next answer. */
  after?: string | null;
  /** Notes of one group replace each other: a thread shows only its latest (rewinds: "rewind"). */
  group?: string;
}

/** What a command notes: the store adds its id and its place in the thread. */
export type NewNotice = Omit<Notice, "id" | "after">;

export type PanelView = "chat" | "settings";

export type ToolsFactory = () => ToolFunctions | null;

/** The active workflow tab's graph, as the user's edits are told against (tools/graphSnapshot.ts). */
export type GraphReader = () => GraphShot | null;

/** ComfyUI's runs, as the store uses them (tools/runHistory.ts comfyRuns(app)). */
export interface ComfyRuns {
  /** Interrupts a run by its prompt id (ComfyUI's POST /interrupt). */
  interrupt(promptId: string): Promise<void>;
  /** How a run ended, as one line for the model; null while it is queued or running. */
  endedNote(promptId: string): Promise<string | null>;
  /** Where one of a run's files is shown (ComfyUI's /view). */
  fileUrl(file: OutputFile): string;
}

export interface ChatStoreOptions {
  /** Reopen the last thread after a page reload (default true; tests turn it off). */
  rememberThread?: boolean;
  /** The graph tools (graphTools(app)); called once, when the first panel tool call arrives. */
  tools?: ToolsFactory;
  settings?: PanelSettings;
  /** ComfyUI's runs: interrupting one, how one ended, its files' URLs. */
  runs?: ComfyRuns;
  /** Reads the graph: what the user changes by hand between answers is told to the model. */
  snapshot?: GraphReader;
  /** The workflow graph, for checkpoints and rewinds (tools/checkpointGraph.ts). */
  graph?: WorkflowAccess;
}
