// A run the chat stopped waiting for (the user pressed "Stop waiting", or the wait timed out),
// read back from ComfyUI's /history/{prompt_id} once it has ended, and said in one line the
// panel adds to the user's next message: "[Run … finished after you stopped waiting: success in
// 41.2 s; outputs: 9: 2 images; looked: …]". Also the rest of what the chat store needs of
// ComfyUI's runs (comfyRuns): interrupting one, and the URL of one of its files.
import type { ComfyApp, LiteGraphGlobal } from "../host/comfy";
import { publicId, type ToolResult } from "./context";
import { summarizeOutput, type Outcome } from "./execution";
import { historyPrompt } from "./latentDecodes";
import { viewRoute, type OutputFile } from "./outputFiles";
import { readBody, runResult, type Body, type RunRecord } from "./runOutcome";

/** The longest the next message waits for ComfyUI's answer about a run. */
const HISTORY_WAIT_MS = 5000;

const NOTE_START = "[Run ";
const NOTE_HEAD = / finished after you stopped waiting: /;

/** How a run in ComfyUI's history ended: its status and the events ComfyUI kept with it
 * (execution_start, execution_cached, then execution_success, _error or _interrupted, each with
 * a timestamp), its outputs by node. */
export function historyRun(entry: Body): { outcome: Outcome; run: RunRecord; seconds?: number } {
  const status = (entry.status ?? {}) as Body;
  const messages = (Array.isArray(status.messages) ? status.messages : []) as [string, Body][];
  const event = (type: string): Body | undefined => messages.find((m) => Array.isArray(m) && m[0] === type)?.[1];
  const error = event("execution_error");
  const interrupted = event("execution_interrupted");
  const outcome: Outcome = error
    ? { kind: "error", detail: error }
    : interrupted
      ? { kind: "interrupted", detail: interrupted }
      : status.status_str === "error"
        ? { kind: "error", detail: { exception_message: "ComfyUI's history says the run failed, not where." } }
        : { kind: "success" };
  const cached = event("execution_cached")?.nodes;
  const cachedIds = new Set(Array.isArray(cached) ? cached.map(String) : []);
  // ComfyUI's history lists the kept output of every node of the prompt that has one, also of
  // output nodes this run did not ask for (a partial run) whose output an earlier run made:
  // only the run's own outputs (those it asked for, and nodes it ran) are this run's.
  const asked = Array.isArray(entry.prompt) && Array.isArray(entry.prompt[4]) ? new Set((entry.prompt[4] as unknown[]).map(String)) : null;
  const outputs: Record<string, Record<string, unknown>> = {};
  for (const [id, output] of Object.entries((entry.outputs ?? {}) as Body)) {
    if (!asked || asked.has(id) || !cachedIds.has(id)) outputs[id] = summarizeOutput(output);
  }
  const run = { outputs, cachedNodes: Array.isArray(cached) ? cached.map(publicId) : [] };
  const start = event("execution_start")?.timestamp;
  const end = [error, interrupted, event("execution_success")].find((e) => e)?.timestamp;
  const seconds = typeof start === "number" && typeof end === "number" ? Math.round((end - start) / 100) / 10 : undefined;
  return { outcome, run, ...(seconds !== undefined ? { seconds } : {}) };
}

/** How the run ended, as queueWorkflow would have said it; null while it is queued or running
 * (ComfyUI's history has it only once it has ended, with the prompt it ran). Throws when
 * ComfyUI cannot say. `lg`: the node definitions (default: the page's LiteGraph). */
export async function finishedRun(app: ComfyApp, promptId: string, lg = pageLiteGraph()): Promise<ToolResult | null> {
  const response = await app.api.fetchApi(`/history/${encodeURIComponent(promptId)}`, { signal: AbortSignal.timeout(HISTORY_WAIT_MS) });
  if (!response.ok) throw new Error(`ComfyUI answered HTTP ${response.status} for the run's history`);
  const entry = (await readBody(response))[promptId];
  if (!entry || typeof entry !== "object") return null;
  const { outcome, run, seconds } = historyRun(entry as Body);
  const ran = { prompt: historyPrompt(entry as Body), lg };
  return runResult(app, outcome, { promptId, ...(seconds !== undefined ? { seconds } : {}) }, run, ran);
}

/** "2 images", "1 image", "1 text". */
function counted(n: number, key: string): string {
  return `${n} ${n === 1 ? key.replace(/s$/, "") : key}`;
}

/** "9: 2 images; 12: 1 text": what each output node made. */
function outputsText(outputs: unknown): string {
  const nodes = Object.entries((outputs ?? {}) as Record<string, Body>);
  return nodes
    .map(([id, output]) => `${id}: ${Object.entries(output).map(([key, items]) => counted(Array.isArray(items) ? items.length : 1, key)).join(", ")}`)
    .join("; ");
}

/** The one line the model reads about a run that ended after it stopped waiting. */
export function runNote(promptId: string, result: ToolResult): string {
  const time = typeof result.seconds === "number" ? ` in ${result.seconds} s` : "";
  const bits = [result.ok ? `success${time}` : `failed${time}: ${result.error}`];
  if (typeof result.cachedNodes === "number") bits.push(`${result.cachedNodes} nodes cached`);
  const outputs = outputsText(result.outputs);
  if (outputs) bits.push(`outputs: ${outputs}`);
  if (Array.isArray(result.looked)) bits.push(`looked: ${result.looked.join("; ")}`);
  for (const extra of [result.lookedError, result.note]) if (typeof extra === "string") bits.push(extra);
  return `${NOTE_START}${promptId} finished after you stopped waiting: ${bits.join("; ")}]`;
}

/** Whether a text part of a user message is such a note (the panel shows it as one). */
export function isRunNote(text: string): boolean {
  return text.startsWith(NOTE_START) && NOTE_HEAD.test(text.split("\n", 1)[0] ?? "");
}

/** The page's LiteGraph, where it is loaded (its node definitions name the decoders). */
function pageLiteGraph(): LiteGraphGlobal | undefined {
  return (globalThis as { LiteGraph?: LiteGraphGlobal }).LiteGraph;
}

/** ComfyUI's runs, as the chat store uses them (runtime/chatStore.ts ComfyRuns). */
export function comfyRuns(app: ComfyApp, lg?: LiteGraphGlobal) {
  return {
    /** Interrupts this run (ComfyUI's POST /interrupt). */
    async interrupt(promptId: string): Promise<void> {
      const response = await app.api.fetchApi("/interrupt", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ prompt_id: promptId }), // (only this run, where ComfyUI can tell)
      });
      if (!response.ok) throw new Error(`ComfyUI answered ${response.status} to /interrupt`);
    },
    /** The note about an ended run; null while it is queued or running. */
    async endedNote(promptId: string): Promise<string | null> {
      const result = await finishedRun(app, promptId, lg ?? pageLiteGraph());
      return result && runNote(promptId, result);
    },
    /** Where one of a run's files is shown (ComfyUI's /view, under the frontend's base path). */
    fileUrl(file: OutputFile): string {
      return app.api.apiURL(viewRoute(file));
    },
  };
}
