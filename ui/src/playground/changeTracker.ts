// The active workflow's undo history, shaped like ComfyUI's ChangeTracker: snapshots of
// graph.serialize(); checkState() records one when the graph changed, undo() restores the last.
import type { ChangeTracker } from "../host/comfy";

export interface TrackedGraph {
  serialize(): unknown;
  load(state: unknown): void | Promise<void>;
}

const MAX_HISTORY = 50;

type Serialised = { nodes?: { id: number; order?: number }[] };

/** The graph state without what is not an edit: the view (pan, zoom), the nodes' order in the
 * list and their computed execution order (loading a state recomputes it). */
export function comparable(state: unknown): string {
  const nodes = (state as Serialised | null)?.nodes;
  const sorted = nodes ? [...nodes].sort((a, b) => Number(a.id) - Number(b.id)).map(({ order: _, ...n }) => n) : nodes;
  return JSON.stringify({ ...(state as object), nodes: sorted }, (key, value: unknown) => (key === "ds" ? undefined : value));
}

export class PlaygroundChangeTracker implements ChangeTracker {
  activeState: unknown;
  undoQueue: unknown[] = [];
  redoQueue: unknown[] = [];
  private changeCount = 0;
  private restoring = false;

  /** `initial`: the tab's graph when it is not the one shown (a new tab), else the graph now. */
  constructor(
    private readonly graph: TrackedGraph,
    initial: unknown = graph.serialize(),
  ) {
    this.activeState = initial;
  }

  /** Forget the history: the current graph becomes the starting state (a workflow loaded). */
  reset(): void {
    this.activeState = this.graph.serialize();
    this.undoQueue = [];
    this.redoQueue = [];
    this.changeCount = 0;
  }

  beforeChange(): void {
    this.changeCount++;
  }

  afterChange(): void {
    if (this.changeCount > 0 && --this.changeCount === 0) this.checkState();
  }

  checkState(): void {
    if (this.restoring || this.changeCount > 0) return;
    const current = this.graph.serialize();
    if (comparable(current) === comparable(this.activeState)) return;
    this.undoQueue.push(this.activeState);
    if (this.undoQueue.length > MAX_HISTORY) this.undoQueue.shift();
    this.activeState = current;
    this.redoQueue = [];
  }

  async undo(): Promise<void> {
    await this.step(this.undoQueue, this.redoQueue);
  }

  async redo(): Promise<void> {
    await this.step(this.redoQueue, this.undoQueue);
  }

  private async step(from: unknown[], to: unknown[]): Promise<void> {
    this.checkState(); // an edit nobody recorded yet is undone first, not lost
    const previous = from.pop();
    if (previous === undefined) return;
    to.push(this.activeState);
    this.restoring = true;
    try {
      await this.graph.load(previous);
      this.activeState = previous;
    } finally {
      this.restoring = false;
    }
  }
}
