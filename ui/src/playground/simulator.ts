// The playground's stand-in for ComfyUI's executor: there is none standalone. POST /prompt is
// validated like ComfyUI does it and, when valid, "runs": the same websocket events ComfyUI
// sends (executing, executed with a fake image for image outputs, execution_success), a short
// delay apart. Nothing is generated; the page says so.
import type { NodeDef } from "../host/comfy";
import { validatePrompt, type ApiPrompt } from "./validate";

export type Dispatch = (type: string, detail: unknown) => void;

interface Run {
  id: string;
  number: number;
  prompt: ApiPrompt;
  outputs: string[];
  extra: unknown;
  results: Record<string, unknown>;
  status: "pending" | "running" | "success" | "interrupted";
  messages: [string, Record<string, unknown>][];
}

const IMAGE_OUTPUTS: Record<string, "output" | "temp"> = { SaveImage: "output", PreviewImage: "temp" };

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function newId(): string {
  return crypto.randomUUID();
}

/** Execution order: every node after the nodes it reads from (only what the outputs need). */
function executionOrder(prompt: ApiPrompt, outputs: string[]): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (id: string): void => {
    if (seen.has(id) || !prompt[id]) return;
    seen.add(id);
    for (const value of Object.values(prompt[id]!.inputs ?? {})) {
      if (Array.isArray(value) && value.length === 2) visit(String(value[0]));
    }
    order.push(id);
  };
  outputs.forEach(visit);
  return order;
}

export class QueueSimulator {
  private runs = new Map<string, Run>();
  private queue: Run[] = [];
  private running: Run | null = null;
  private number = 0;
  private imageCounter = 0;
  private interrupted = false;

  constructor(
    private readonly defs: () => Record<string, NodeDef>,
    private readonly dispatch: Dispatch,
    private readonly stepMs = 120,
  ) {}

  /** Answer a fetchApi call if it is one of the executor's routes; null: let it through. */
  handle(route: string, init?: RequestInit): Promise<Response> | null {
    const method = (init?.method ?? "GET").toUpperCase();
    const path = route.split("?")[0]!;
    if (path === "/prompt" && method === "POST") return Promise.resolve(this.submit(init?.body));
    if (path === "/prompt" && method === "GET") return Promise.resolve(json(this.queueStatus()));
    if (path === "/queue" && method === "GET") return Promise.resolve(json(this.queueState()));
    if (path === "/queue" && method === "POST") return Promise.resolve(this.editQueue(init?.body));
    if (path === "/interrupt" && method === "POST") return Promise.resolve(this.interrupt());
    if (path === "/history" && method === "GET") return Promise.resolve(json(this.history([...this.runs.keys()])));
    if (path.startsWith("/history/") && method === "GET") {
      return Promise.resolve(json(this.history([decodeURIComponent(path.slice("/history/".length))])));
    }
    return null;
  }

  private submit(body: BodyInit | null | undefined): Response {
    let request: { prompt?: unknown; number?: number; front?: boolean; extra_data?: unknown };
    try {
      request = JSON.parse(typeof body === "string" ? body : "") as typeof request;
    } catch {
      return json({ error: { type: "invalid_prompt", message: "invalid prompt: the body is not JSON", details: "", extra_info: {} }, node_errors: {} }, 400);
    }
    if (!request.prompt || typeof request.prompt !== "object" || Array.isArray(request.prompt)) {
      return json({ error: { type: "no_prompt", message: "No prompt provided", details: "No prompt provided", extra_info: {} }, node_errors: {} }, 400);
    }
    const prompt = request.prompt as ApiPrompt;
    const verdict = validatePrompt(prompt, this.defs());
    if (!verdict.ok) return json({ error: verdict.error, node_errors: verdict.nodeErrors }, 400);
    const run: Run = {
      id: newId(),
      number: typeof request.number === "number" ? request.number : this.number++,
      prompt,
      outputs: verdict.outputs,
      extra: request.extra_data ?? {},
      results: {},
      status: "pending",
      messages: [],
    };
    this.runs.set(run.id, run);
    if (request.front) this.queue.unshift(run);
    else this.queue.push(run);
    this.emitStatus();
    void this.drain();
    return json({ prompt_id: run.id, number: run.number, node_errors: verdict.nodeErrors });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    while (this.queue.length > 0) {
      const run = this.queue.shift()!;
      this.running = run;
      this.interrupted = false;
      await this.execute(run);
      this.running = null;
      this.emitStatus();
    }
  }

  private event(run: Run, type: string, detail: Record<string, unknown>): void {
    const full: Record<string, unknown> = { ...detail, prompt_id: run.id };
    if (type.startsWith("execution_")) run.messages.push([type, { ...full, timestamp: Date.now() }]);
    // ComfyUI's frontend passes `executing` on as the node id alone (null: the prompt is done).
    this.dispatch(type, type === "executing" ? (full.display_node ?? full.node ?? null) : full);
  }

  private async execute(run: Run): Promise<void> {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    run.status = "running";
    await sleep(this.stepMs);
    this.event(run, "execution_start", { timestamp: Date.now() });
    this.event(run, "execution_cached", { nodes: [], timestamp: Date.now() });
    const executed: string[] = [];
    for (const id of executionOrder(run.prompt, run.outputs)) {
      if (this.interrupted) {
        const node = run.prompt[id]!;
        this.event(run, "execution_interrupted", { node_id: id, node_type: node.class_type, executed });
        run.status = "interrupted";
        return;
      }
      this.event(run, "executing", { node: id, display_node: id });
      await sleep(this.stepMs);
      executed.push(id);
      const output = this.fakeOutput(run.prompt[id]!);
      if (output) {
        run.results[id] = output;
        this.event(run, "executed", { node: id, display_node: id, output });
      }
    }
    run.status = "success";
    this.event(run, "execution_success", { timestamp: Date.now() });
    this.event(run, "executing", { node: null, display_node: null });
  }

  private fakeOutput(node: { class_type?: string; inputs?: Record<string, unknown> }): Record<string, unknown> | null {
    const type = IMAGE_OUTPUTS[node.class_type ?? ""];
    if (!type) return null;
    const prefix = type === "output" ? String(node.inputs?.filename_prefix ?? "ComfyUI") : "ComfyUI_temp_sim";
    const counter = String(++this.imageCounter).padStart(5, "0");
    return { images: [{ filename: `${prefix}_${counter}_.png`, subfolder: "", type }] };
  }

  private interrupt(): Response {
    if (this.running) this.interrupted = true;
    return new Response(null, { status: 200 });
  }

  private editQueue(body: BodyInit | null | undefined): Response {
    const request = JSON.parse(typeof body === "string" ? body : "{}") as { clear?: boolean; delete?: string[] };
    if (request.clear) this.queue = [];
    if (request.delete) this.queue = this.queue.filter((run) => !request.delete!.includes(run.id));
    this.emitStatus();
    return new Response(null, { status: 200 });
  }

  private entry(run: Run): unknown[] {
    return [run.number, run.id, run.prompt, run.extra, run.outputs];
  }

  private queueState(): unknown {
    return { queue_running: this.running ? [this.entry(this.running)] : [], queue_pending: this.queue.map((r) => this.entry(r)) };
  }

  private queueStatus(): { exec_info: { queue_remaining: number } } {
    return { exec_info: { queue_remaining: this.queue.length + (this.running ? 1 : 0) } };
  }

  private emitStatus(): void {
    this.dispatch("status", this.queueStatus());
  }

  private history(ids: string[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const id of ids) {
      const run = this.runs.get(id);
      if (!run || run.status === "pending" || run.status === "running") continue;
      out[id] = {
        prompt: this.entry(run),
        outputs: run.results,
        status: { status_str: run.status === "success" ? "success" : "error", completed: run.status === "success", messages: run.messages },
        meta: Object.fromEntries(Object.keys(run.results).map((node) => [node, { node_id: node, display_node: node }])),
      };
    }
    return out;
  }
}
