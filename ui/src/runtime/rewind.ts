// "Rewind to here" on a message whose turn changed the graph: the graph back as it was before
// that turn (its checkpoint, runtime/checkpoints.ts, restored into the workflow tab it belongs to
// as one undo step: tools/checkpointGraph.ts), the conversation back to before that turn (the
// server sets the turn and all that followed aside as a branch: core/store/branches.py), or both.
// A branch can be returned to (what follows its place then becomes a branch in turn). What a
// graph rewind came to is kept per message, for its menu to show; a conversation rewind removes
// the message, so it is told in a note where the thread now ends.
import type { UIMessage } from "ai";
import { t } from "../i18n";
import { sentences } from "../i18n/sentences";
import { sameGraph, type Checkpoints, type WorkflowAccess } from "./checkpoints";
import type { NewNotice } from "./chatTypes";
import { branchNote, rewoundNote } from "./rewindNotes";
import { threadPath } from "./threadAdapter";

export type RewindScope = "graph" | "conversation" | "both";

export type RewindStatus =
  | { kind: "busy"; text: string }
  | { kind: "done"; text: string }
  /** The checkpoint's workflow is not open: it can be opened in a new tab. */
  | { kind: "closed"; text: string }
  | { kind: "error"; text: string };

/** A thread's branch, as GET /api/assistant/threads/{id}/branches lists it. */
export interface BranchInfo {
  number: number;
  /** The message it followed (null: the thread's start). */
  afterId: string | null;
  messageCount: number;
  /** Its first user text. */
  preview: string;
  createdAt: number;
  /** Whether it can be returned to now (the message it followed is in the thread). */
  available: boolean;
}

/** The thread after a rewind or a return (routes/branches.py). */
interface Moved {
  messages: UIMessage[];
  setAside: Omit<BranchInfo, "available"> | null;
  draft: string;
}

/** What a rewind works on: the thread's chat (its messages are replaced by the server's), and
 * the note its next message carries when the conversation moved without the graph. */
export interface RewindTarget {
  readonly serverId: string;
  readonly chat: { messages: UIMessage[] };
  graphNote?: string | null;
}

export interface RewindDeps {
  request: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  /** Notes something in the thread, after its last message (a note of the same group replaced). */
  note: (threadId: string, notice: NewNotice) => void;
  /** Drops the thread's notes of a group. */
  unnote: (threadId: string, group: string) => void;
  checkpoints: Checkpoints;
  graph: WorkflowAccess | undefined;
  /** How the panel names a workflow key (its tab's name as last seen). */
  workflowName: (key: string) => string;
  changed: () => void;
  /** Keeps the thread in view while a rewind switches workflow tabs; returns the release. */
  hold: (threadId: string) => () => void;
}

export class Rewinds {
  private readonly status = new Map<string, RewindStatus>();
  private readonly branches = new Map<string, readonly BranchInfo[]>();

  constructor(private readonly deps: RewindDeps) {}

  statusOf(threadId: string | undefined, messageId: string): RewindStatus | undefined {
    return threadId === undefined ? undefined : this.status.get(key(threadId, messageId));
  }

  private set(threadId: string, messageId: string, status: RewindStatus): RewindStatus {
    this.fresh(threadId, key(threadId, messageId));
    this.status.set(key(threadId, messageId), status);
    this.deps.changed();
    return status;
  }

  /** One current word on rewinds per thread: a new one clears what earlier rewinds said (the
   * statuses under other answers, the notes), which later ones made stale. */
  private fresh(threadId: string, keep?: string): void {
    for (const k of [...this.status.keys()]) if (k.startsWith(key(threadId, "")) && k !== keep) this.status.delete(k);
    this.deps.unnote(threadId, REWIND_NOTES);
  }

  /** A rewind's note, in place of the thread's earlier one. */
  private note(threadId: string, notice: NewNotice): void {
    this.deps.note(threadId, { ...notice, group: REWIND_NOTES });
  }

  /** The graph as it was before message `messageId`'s turn changed it, in its workflow's tab. */
  async graph(threadId: string, messageId: string): Promise<RewindStatus> {
    const graph = this.deps.graph;
    if (!graph) return this.set(threadId, messageId, { kind: "error", text: t("rewind.unreachable") });
    this.set(threadId, messageId, { kind: "busy", text: t("rewind.restoring") });
    const release = this.deps.hold(threadId);
    try {
      const { info, graph: saved } = await this.deps.checkpoints.graphOf(threadId, messageId);
      const outcome = await graph.restore(info.workflow, saved);
      if (outcome.ok) {
        const where = outcome.switched && outcome.tab && t("rewind.shownTab", { tab: outcome.tab });
        const text = outcome.unchanged ? t("rewind.alreadyThere") : sentences(t("rewind.graphBack"), where, t("rewind.undoHint"));
        return this.set(threadId, messageId, { kind: "done", text });
      }
      if ("closed" in outcome) {
        const text = info.workflow === null ? t("rewind.closedUnnamed") : t("rewind.closed", { name: this.deps.workflowName(info.workflow) });
        return this.set(threadId, messageId, { kind: "closed", text });
      }
      return this.set(threadId, messageId, { kind: "error", text: t("rewind.notRestored", { error: outcome.error }) });
    } catch (error) {
      return this.set(threadId, messageId, { kind: "error", text: t("rewind.notRestored", { error: errorText(error) }) });
    } finally {
      release();
    }
  }

  /** The thread's branches, the latest first (empty until loaded). */
  branchesOf(threadId: string | undefined): readonly BranchInfo[] {
    return (threadId && this.branches.get(threadId)) || NONE;
  }

  async loadBranches(threadId: string): Promise<void> {
    try {
      const { branches } = await this.deps.request<{ branches: BranchInfo[] }>(threadPath(threadId, "/branches"));
      this.branches.set(threadId, branches);
      this.deps.changed();
    } catch (error) {
      console.warn("[comfyui-assistant] the thread's branches could not be listed", error);
    }
  }

  /**
   * The conversation back to before the turn of answer `messageId` (with `graph`, the graph too,
   * first: when it cannot be restored nothing changes). The text the turn began with, for the
   * composer; null when nothing was rewound.
   */
  async conversation(target: RewindTarget, messageId: string, graph = false): Promise<string | null> {
    const threadId = target.serverId;
    if (graph && (await this.graph(threadId, messageId)).kind !== "done") return null;
    const note = graph ? null : rewoundNote(await this.differsFrom(threadId, messageId));
    let moved: Moved;
    try {
      moved = await this.deps.request<Moved>(threadPath(threadId, "/rewind"), { method: "POST", body: { messageId } });
    } catch (error) {
      this.note(threadId, { kind: "error", title: t("rewind.conversationFailed"), text: errorText(error) });
      return null;
    }
    target.chat.messages = moved.messages;
    target.graphNote = note; // (after "both" none: the graph is as it was then too)
    this.fresh(threadId);
    await this.loadBranches(threadId);
    const kept = moved.setAside;
    const what = kept && t("rewind.keptAsBranch", { count: kept.messageCount, preview: kept.preview, number: kept.number });
    const text = sentences(t("rewind.conversationBack"), what, graph && t("rewind.graphToo"));
    this.note(threadId, { kind: "info", title: t("rewind.rewound"), text });
    return moved.draft;
  }

  /** Whether the graph now differs from the one before answer `messageId` (its checkpoint);
   * null when that cannot be told. */
  private async differsFrom(threadId: string, messageId: string): Promise<boolean | null> {
    if (!this.deps.graph || !this.deps.checkpoints.of(threadId).has(messageId)) return null;
    try {
      const { graph } = await this.deps.checkpoints.graphOf(threadId, messageId);
      return !sameGraph(this.deps.graph.serialize(), graph);
    } catch {
      return null;
    }
  }

  /** `/rewind`: to before the thread's last answer that changed the graph (it has a checkpoint);
   * the text for the composer, as `conversation`. */
  async last(target: RewindTarget, scope: RewindScope): Promise<string | null> {
    const threadId = target.serverId;
    const saved = this.deps.checkpoints.of(threadId);
    const answer = target.chat.messages.findLast((m) => m.role === "assistant" && saved.has(m.id));
    if (!answer) {
      this.note(threadId, { kind: "info", title: t("rewind.nothing"), text: t("rewind.nothingChanged") });
      return null;
    }
    if (scope !== "graph") {
      const draft = await this.conversation(target, answer.id, scope === "both");
      const graph = this.statusOf(threadId, answer.id);
      if (draft === null && scope === "both" && graph && graph.kind !== "done") this.noteGraph(threadId, graph, t("rewind.nothingRewound"));
      return draft;
    }
    const status = await this.graph(threadId, answer.id);
    this.noteGraph(threadId, status, t(status.kind === "done" ? "rewind.graphRewound" : "rewind.graphNotRewound"));
    return null;
  }

  private noteGraph(threadId: string, status: RewindStatus, title: string): void {
    const more = status.kind === "closed" && t("rewind.closedHint", { button: t("rewind.openInNewTab") });
    this.note(threadId, { kind: status.kind === "done" ? "info" : "error", title, text: sentences(status.text, more) });
  }

  /** Back to branch `number`: its messages after the one it followed; what follows that message now becomes a branch. */
  async returnTo(target: RewindTarget, number: number): Promise<void> {
    const threadId = target.serverId;
    try {
      const moved = await this.deps.request<Moved>(threadPath(threadId, `/branches/${number}/restore`), { method: "POST", body: {} });
      target.chat.messages = moved.messages;
      target.graphNote = branchNote(number);
      this.fresh(threadId);
      await this.loadBranches(threadId);
      const kept = moved.setAside;
      const what = kept && t("rewind.followedKept", { count: kept.messageCount, preview: kept.preview, number: kept.number });
      this.note(threadId, { kind: "info", title: t("rewind.backOnBranch", { number }), text: sentences(t("rewind.goesOn", { number }), what) });
    } catch (error) {
      this.note(threadId, { kind: "error", title: t("rewind.branchNotRestored", { number }), text: errorText(error) });
    }
  }

  /** A checkpoint whose workflow is closed, opened in a new tab (the user asked). */
  async openInNewTab(threadId: string, messageId: string): Promise<RewindStatus> {
    const graph = this.deps.graph;
    if (!graph) return this.set(threadId, messageId, { kind: "error", text: t("rewind.unreachable") });
    const release = this.deps.hold(threadId);
    try {
      const { graph: saved } = await this.deps.checkpoints.graphOf(threadId, messageId);
      const tab = await graph.openInNewTab(saved);
      const text = tab ? t("rewind.openedInTab", { tab }) : t("rewind.opened");
      return this.set(threadId, messageId, { kind: "done", text });
    } catch (error) {
      return this.set(threadId, messageId, { kind: "error", text: t("rewind.notOpened", { error: errorText(error) }) });
    } finally {
      release();
    }
  }
}

const NONE: readonly BranchInfo[] = Object.freeze([]);

/** The group of the notes rewinds and branch returns leave (one current per thread). */
const REWIND_NOTES = "rewind";

const key = (threadId: string, messageId: string) => `${threadId}\u0000${messageId}`;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
