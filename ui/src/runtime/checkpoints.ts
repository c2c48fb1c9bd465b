// Checkpoints: the graph as it was before an assistant turn changed it, kept by the server with
// the thread (core/store/checkpoints.py). The first time in a turn (one assistant message) that a
// graph-changing tool is about to run, the workflow is serialized (ComfyUI's own save format,
// subgraph definitions included), before the tool runs; it is posted as that message's
// checkpoint once a call of the turn has changed the graph (a call that failed, was denied or
// set what was already there leaves no checkpoint). A message with a checkpoint offers "Rewind
// to here" (rewind.ts). Here: which messages of which thread have one, saving one, reading one.
import { isToolUIPart, type UIMessage } from "ai";
import { GRAPH_EDITING_TOOLS } from "../tools/schemas.generated";
import { sameGraph, type RestoreOutcome, type WorkflowAccess } from "../tools/checkpointGraph";
import { threadPath } from "./threadAdapter";

export { sameGraph, type RestoreOutcome, type WorkflowAccess };

export interface CheckpointInfo {
  messageId: string;
  /** The key of the workflow the graph belongs to (null: none known). */
  workflow: string | null;
  nodes: number;
  bytes: number;
  createdAt: number;
}

export interface CheckpointDeps {
  request: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  /** Something changed that the panel shows. */
  changed: () => void;
}

/** Whether a panel tool changes the graph (its registry entry says so: `edits_graph`). */
export function editsGraph(name: string): boolean {
  return (GRAPH_EDITING_TOOLS as readonly string[]).includes(name);
}

/** The assistant message that holds a tool call (the turn it belongs to). */
export function messageOfCall(messages: readonly UIMessage[], toolCallId: string): UIMessage | undefined {
  return messages.findLast((m) => m.role === "assistant" && m.parts.some((p) => isToolUIPart(p) && p.toolCallId === toolCallId));
}

export const checkpointsPath = (threadId: string, messageId?: string) =>
  threadPath(threadId, messageId === undefined ? "/checkpoints" : `/checkpoints/${encodeURIComponent(messageId)}`);

export class Checkpoints {
  /** Each thread's checkpoints by message id, as the server listed or saved them. */
  private readonly byThread = new Map<string, Map<string, CheckpointInfo>>();
  /** Saves under way (or done) by thread and message: a turn's later calls wait for its first. */
  private readonly saving = new Map<string, Promise<void>>();
  /** The graph before a turn's first edit, by thread and message, until an edit changes it. */
  private readonly before = new Map<string, { workflow: string | null; graph: unknown }>();

  constructor(private readonly deps: CheckpointDeps) {}

  of(threadId: string | undefined): ReadonlyMap<string, CheckpointInfo> {
    return (threadId && this.byThread.get(threadId)) || EMPTY;
  }

  /** The thread's checkpoints, from the server (a thread opened, the page reloaded). */
  async load(threadId: string): Promise<void> {
    try {
      const { checkpoints } = await this.deps.request<{ checkpoints: CheckpointInfo[] }>(checkpointsPath(threadId));
      this.byThread.set(threadId, new Map(checkpoints.map((c) => [c.messageId, c])));
      this.deps.changed();
    } catch (error) {
      console.warn("[comfyui-assistant] the thread's checkpoints could not be listed", error);
    }
  }

  /** Before a panel tool call: a graph-changing one has the graph before its turn kept first. */
  beforeCall(threadId: string, messages: readonly UIMessage[], name: string, toolCallId: string, workflow: string | null, graph: WorkflowAccess): void {
    const message = editsGraph(name) ? messageOfCall(messages, toolCallId) : undefined;
    if (message) this.beforeEdit(threadId, message.id, workflow, () => graph.serialize());
  }

  /** After it: when a graph-changing call changed the graph, its turn's checkpoint is saved. */
  afterCall(threadId: string, messages: readonly UIMessage[], name: string, toolCallId: string, graph: WorkflowAccess): Promise<void> {
    const message = editsGraph(name) ? messageOfCall(messages, toolCallId) : undefined;
    return message ? this.afterEdit(threadId, message.id, () => graph.serialize()) : Promise.resolve();
  }

  /**
   * Before a graph-changing call of message `messageId`: the graph now (serialized at once, before
   * any call of the turn runs) is kept, the first time only, until an edit changes it.
   */
  beforeEdit(threadId: string, messageId: string, workflow: string | null, serialize: () => unknown): void {
    const key = `${threadId}\u0000${messageId}`;
    if (this.before.has(key) || this.saving.has(key) || this.of(threadId).has(messageId)) return;
    try {
      this.before.set(key, { workflow, graph: serialize() });
    } catch (error) {
      console.warn("[comfyui-assistant] the graph could not be serialized for a checkpoint", error);
    }
  }

  /**
   * After a graph-changing call of message `messageId`: when the graph is no longer the one kept
   * before the turn's first edit, that one is saved as the message's checkpoint (once). A failed
   * save is logged (the edit can still be undone with Ctrl+Z).
   */
  afterEdit(threadId: string, messageId: string, serialize: () => unknown): Promise<void> {
    const key = `${threadId}\u0000${messageId}`;
    const kept = this.before.get(key);
    if (!kept) return this.saving.get(key) ?? Promise.resolve();
    try {
      if (sameGraph(serialize(), kept.graph)) return Promise.resolve();
    } catch {
      // (the graph cannot be read now: keep the checkpoint, as a change may have been made)
    }
    this.before.delete(key);
    const saved = this.save(threadId, messageId, kept.workflow, kept.graph);
    this.saving.set(key, saved);
    return saved;
  }

  private async save(threadId: string, messageId: string, workflow: string | null, graph: unknown): Promise<void> {
    try {
      const info = await this.deps.request<CheckpointInfo & { dropped: string[] }>(checkpointsPath(threadId), {
        method: "POST",
        body: { messageId, workflow, graph },
      });
      const known = this.byThread.get(threadId) ?? new Map<string, CheckpointInfo>();
      for (const id of info.dropped ?? []) known.delete(id);
      const { dropped: _, ...checkpoint } = info;
      known.set(messageId, checkpoint);
      this.byThread.set(threadId, known);
      this.deps.changed();
    } catch (error) {
      console.warn("[comfyui-assistant] the checkpoint before this turn's edits could not be saved", error);
    }
  }

  /** A checkpoint's graph, as it was saved. */
  async graphOf(threadId: string, messageId: string): Promise<{ info: CheckpointInfo; graph: unknown }> {
    const { graph, ...info } = await this.deps.request<CheckpointInfo & { graph: unknown }>(checkpointsPath(threadId, messageId));
    return { info, graph };
  }
}

const EMPTY: ReadonlyMap<string, CheckpointInfo> = new Map();
