// Follows one prompt's execution through ComfyUI's api events (app.api), from before it is
// queued (events can arrive before the POST answers) until it succeeds, fails, is interrupted
// or the wait times out. Also: compact forms of node outputs and of validation errors.
import type { ComfyApi } from "../host/comfy";
import { publicId, type NodeId } from "./context";
import { annotatedName } from "./outputFiles";

export const WATCHED_EVENTS = [
  "execution_start",
  "execution_cached",
  "executing",
  "progress",
  "executed",
  "execution_error",
  "execution_interrupted",
  "execution_success",
] as const;

type Detail = Record<string, unknown>;

/** Where a run is, for the tool's card while it runs: the node running (as the tools name
 * it), its step of steps when it reports them (a sampler), how many nodes were cached and how
 * many have run. */
export interface RunProgress {
  promptId?: string;
  node?: NodeId;
  step?: number;
  steps?: number;
  cached: number;
  ran: number;
}

export type Outcome =
  | { kind: "success" }
  | { kind: "error"; detail: Detail }
  | { kind: "interrupted"; detail: Detail }
  | { kind: "timeout" }
  | { kind: "detached" };

const MAX_TEXT = 500;
const MAX_ITEMS = 20;

/** A node's UI output, small: files as annotated names, long texts cut, objects left out. */
export function summarizeOutput(output: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!output || typeof output !== "object") return out;
  for (const [key, value] of Object.entries(output as Detail)) {
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ITEMS).map((item) => {
        if (item && typeof item === "object" && "filename" in item) return annotatedName(item as Detail);
        if (typeof item === "string" && item.length > MAX_TEXT) return `${item.slice(0, MAX_TEXT)}… [${item.length - MAX_TEXT} more characters]`;
        return item !== null && typeof item === "object" ? "[object]" : item;
      });
      if (value.length > MAX_ITEMS) items.push(`… and ${value.length - MAX_ITEMS} more`);
      out[key] = items;
    } else if (value === null || typeof value !== "object") {
      out[key] = value;
    }
  }
  return out;
}

/** ComfyUI's node_errors ({id: {errors, class_type}}) as a list the model can act on; `name`
 * writes an execution id as the tools name that node (graphs.ts executionIdRef). */
export function nodeErrorList(nodeErrors: unknown, name: (id: string) => NodeId = publicId): Record<string, unknown>[] {
  if (!nodeErrors || typeof nodeErrors !== "object") return [];
  return Object.entries(nodeErrors as Record<string, Detail>).map(([id, entry]) => ({
    nodeId: name(id),
    classType: entry?.class_type,
    errors: (Array.isArray(entry?.errors) ? (entry.errors as Detail[]) : []).map((e) => {
      const extra = (e.extra_info ?? {}) as Detail;
      return {
        type: e.type,
        message: e.message,
        ...(e.details ? { details: e.details } : {}),
        ...(extra.input_name !== undefined ? { inputName: extra.input_name } : {}),
        ...(extra.received_value !== undefined ? { receivedValue: extra.received_value } : {}),
      };
    }),
  }));
}

export class ExecutionWatcher {
  readonly outputs: Record<string, Record<string, unknown>> = {};
  cachedNodes: NodeId[] = [];
  private promptId: string | null = null;
  private buffer: [string, unknown][] = [];
  private running = false;
  private finish: ((outcome: Outcome) => void) | null = null;
  private done: Outcome | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners: [string, (event: CustomEvent) => void][];

  private progress: RunProgress = { cached: 0, ran: 0 };

  /** Starts listening at once, so nothing is missed while the prompt is being queued;
   * `onProgress` hears where the run is (`name` writes an execution id as the tools do). */
  constructor(
    private readonly api: ComfyApi,
    private readonly onProgress?: (progress: RunProgress) => void,
    private readonly name: (id: string) => NodeId = publicId,
  ) {
    this.listeners = WATCHED_EVENTS.map((type) => [type, (event: CustomEvent) => this.receive(type, event?.detail)]);
    for (const [type, listener] of this.listeners) api.addEventListener(type, listener);
  }

  /** Waits for the prompt's end; replays the events that came before its id was known.
   * `detach`: the user stopped waiting (the run goes on). */
  wait(promptId: string, timeoutMs: number, detach?: AbortSignal): Promise<Outcome> {
    this.promptId = promptId;
    this.report({ promptId });
    return new Promise<Outcome>((resolve) => {
      this.finish = resolve;
      if (detach?.aborted) this.end({ kind: "detached" });
      detach?.addEventListener("abort", () => this.end({ kind: "detached" }), { once: true });
      for (const [type, detail] of this.buffer.splice(0)) this.handle(type, detail);
      if (this.done) resolve(this.done);
      else this.timer = setTimeout(() => this.end({ kind: "timeout" }), timeoutMs);
    });
  }

  dispose(): void {
    for (const [type, listener] of this.listeners) this.api.removeEventListener(type, listener);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private receive(type: string, detail: unknown): void {
    if (this.promptId === null) this.buffer.push([type, detail]);
    else this.handle(type, detail);
  }

  private end(outcome: Outcome): void {
    if (this.done) return;
    this.done = outcome;
    if (this.timer) clearTimeout(this.timer);
    this.finish?.(outcome);
  }

  private report(change: Partial<RunProgress>): void {
    this.progress = { ...this.progress, ...change };
    try {
      this.onProgress?.(this.progress);
    } catch {
      // The card's listener failing must not stop the run being followed.
    }
  }

  private handle(type: string, raw: unknown): void {
    if (this.done) return;
    const detail = (raw && typeof raw === "object" ? raw : {}) as Detail;
    // `executing` carries only a node id (or null) in ComfyUI's frontend: it counts while our
    // prompt is the one running. The other events carry prompt_id.
    if (type === "executing") {
      const ours = "prompt_id" in detail ? detail.prompt_id === this.promptId : this.running;
      const node = raw && typeof raw === "object" ? (detail.display_node ?? detail.node) : raw;
      if (ours && (node === null || node === undefined)) this.end({ kind: "success" });
      else if (ours) this.report({ node: this.name(String(node)), step: undefined, steps: undefined, ran: this.progress.ran + 1 });
      return;
    }
    const ours = detail.prompt_id === this.promptId;
    if (type === "execution_start") this.running = ours;
    if (!ours) return;
    switch (type) {
      case "execution_cached":
        this.cachedNodes = Array.isArray(detail.nodes) ? detail.nodes.map(publicId) : [];
        this.report({ cached: this.cachedNodes.length });
        break;
      case "progress":
        if (typeof detail.value === "number" && typeof detail.max === "number") {
          const node = detail.display_node ?? detail.node;
          this.report({ step: detail.value, steps: detail.max, ...(node != null ? { node: this.name(String(node)) } : {}) });
        }
        break;
      case "executed": {
        const id = String(detail.display_node ?? detail.node);
        this.outputs[id] = { ...(this.outputs[id] ?? {}), ...summarizeOutput(detail.output) };
        break;
      }
      case "execution_error":
        this.end({ kind: "error", detail });
        break;
      case "execution_interrupted":
        this.end({ kind: "interrupted", detail });
        break;
      case "execution_success":
        this.end({ kind: "success" });
        break;
    }
  }
}
