// "Rewind to here" on a message whose turn changed the graph: the graph back as it was before
// that turn (its checkpoint, runtime/checkpoints.ts, restored into the workflow tab it belongs to
// as one undo step: tools/checkpointGraph.ts). What each rewind came to is kept per message, for
// its menu to show (the panel's tree is rebuilt whenever ComfyUI renders the tab again).
import type { Checkpoints, WorkflowAccess } from "./checkpoints";

export type RewindScope = "graph" | "conversation" | "both";

export type RewindStatus =
  | { kind: "busy"; text: string }
  | { kind: "done"; text: string }
  /** The checkpoint's workflow is not open: it can be opened in a new tab. */
  | { kind: "closed"; text: string }
  | { kind: "error"; text: string };

export interface RewindDeps {
  checkpoints: Checkpoints;
  graph: WorkflowAccess | undefined;
  /** How the panel names a workflow key (its tab's name as last seen). */
  workflowName: (key: string) => string;
  changed: () => void;
  /** Keeps the thread in view while a rewind switches workflow tabs; returns the release. */
  hold: (threadId: string) => () => void;
}

const UNDO_HINT = "Ctrl+Z on the canvas brings the newer graph back.";

export class Rewinds {
  private readonly status = new Map<string, RewindStatus>();

  constructor(private readonly deps: RewindDeps) {}

  statusOf(threadId: string | undefined, messageId: string): RewindStatus | undefined {
    return threadId === undefined ? undefined : this.status.get(key(threadId, messageId));
  }

  private set(threadId: string, messageId: string, status: RewindStatus): RewindStatus {
    this.status.set(key(threadId, messageId), status);
    this.deps.changed();
    return status;
  }

  /** The graph as it was before message `messageId`'s turn changed it, in its workflow's tab. */
  async graph(threadId: string, messageId: string): Promise<RewindStatus> {
    const graph = this.deps.graph;
    if (!graph) return this.set(threadId, messageId, { kind: "error", text: "The workflow cannot be reached from here." });
    this.set(threadId, messageId, { kind: "busy", text: "Restoring the graph…" });
    const release = this.deps.hold(threadId);
    try {
      const { info, graph: saved } = await this.deps.checkpoints.graphOf(threadId, messageId);
      const outcome = await graph.restore(info.workflow, saved);
      if (outcome.ok) {
        const where = outcome.switched && outcome.tab ? ` It is in “${outcome.tab}”, shown now.` : "";
        const text = outcome.unchanged
          ? "The graph is already as it was before this answer."
          : `The graph is as it was before this answer.${where} ${UNDO_HINT}`;
        return this.set(threadId, messageId, { kind: "done", text });
      }
      if ("closed" in outcome) {
        const name = info.workflow === null ? "its workflow" : `“${this.deps.workflowName(info.workflow)}”`;
        return this.set(threadId, messageId, { kind: "closed", text: `The graph belongs to ${name}, which is not open.` });
      }
      return this.set(threadId, messageId, { kind: "error", text: `The graph was not restored: ${outcome.error}` });
    } catch (error) {
      return this.set(threadId, messageId, { kind: "error", text: `The graph was not restored: ${errorText(error)}` });
    } finally {
      release();
    }
  }

  /** A checkpoint whose workflow is closed, opened in a new tab (the user asked). */
  async openInNewTab(threadId: string, messageId: string): Promise<RewindStatus> {
    const graph = this.deps.graph;
    if (!graph) return this.set(threadId, messageId, { kind: "error", text: "The workflow cannot be reached from here." });
    const release = this.deps.hold(threadId);
    try {
      const { graph: saved } = await this.deps.checkpoints.graphOf(threadId, messageId);
      const tab = await graph.openInNewTab(saved);
      const text = `The graph from before this answer is open in a new tab${tab ? `, “${tab}”` : ""}.`;
      return this.set(threadId, messageId, { kind: "done", text });
    } catch (error) {
      return this.set(threadId, messageId, { kind: "error", text: `The graph was not opened: ${errorText(error)}` });
    } finally {
      release();
    }
  }
}

const key = (threadId: string, messageId: string) => `${threadId}\u0000${messageId}`;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
