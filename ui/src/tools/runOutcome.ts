// How a run ended, in the words the model gets: success with each output node's files and the
// assistant server's look at them (format, size, an all-black or blank image:
// routes/outputs.py), or the error with its node, an interruption, a wait that ended first.
// queueWorkflow says it when it watched the run; runHistory.ts when the run ended later.
import type { ComfyApp, LiteGraphGlobal } from "../host/comfy";
import { errorMessage, nodeLabel, publicId, type ToolResult } from "./context";
import type { Outcome } from "./execution";
import { executionIdRef, findNode } from "./graphs";
import { decodedFiles, type ApiPrompt } from "./latentDecodes";
import { outputFiles } from "./outputFiles";

export type Body = Record<string, unknown>;

/** What a run left: each output node's UI output (files as annotated names), cached nodes. */
export interface RunRecord {
  readonly outputs: Record<string, Record<string, unknown>>;
  readonly cachedNodes: readonly unknown[];
}

const LOOK_PATH = "/assistant/outputs/look";
const MAX_LOOKED = 16;

/** A response's JSON object, or `{text}` when it is not one. */
export async function readBody(response: Response): Promise<Body> {
  const text = await response.text();
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" ? (value as Body) : { text };
  } catch {
    return { text };
  }
}

function outcomeResult(app: ComfyApp, outcome: Outcome, base: Body, run: RunRecord, timeout: number): ToolResult {
  const outputs = run.outputs;
  const partial = Object.keys(outputs).length ? { outputs } : {};
  switch (outcome.kind) {
    case "success": {
      const cached = run.cachedNodes.length ? { cachedNodes: run.cachedNodes.length } : {};
      const note = Object.keys(outputs).length
        ? {}
        : { note: "The workflow finished but no node reported an output (nothing new was computed, or it has no output nodes)." };
      return { ok: true, ...base, outputs, ...cached, ...note };
    }
    case "error": {
      const d = outcome.detail;
      const node = d.node_id != null ? findNode(app, publicId(d.node_id))?.node : undefined;
      const where = node ? ` at ${nodeLabel(node)}` : d.node_id != null ? ` at ${String(d.node_type ?? "node")}#${String(d.node_id)}` : "";
      const traceback = Array.isArray(d.traceback) ? d.traceback.map(String).join("").trim().split("\n").slice(-3) : [];
      return {
        ok: false,
        error: `Execution failed${where}: ${String(d.exception_type ?? "Error")}: ${String(d.exception_message ?? "").trim()}`,
        ...base,
        ...(d.node_id != null ? { nodeId: executionIdRef(app, d.node_id) } : {}),
        nodeType: d.node_type,
        exceptionType: d.exception_type,
        exceptionMessage: d.exception_message,
        ...(traceback.length ? { traceback } : {}),
        ...partial,
      };
    }
    case "interrupted": {
      const d = outcome.detail;
      const at = d.node_id != null ? ` at ${String(d.node_type ?? "node")}#${String(d.node_id)}` : "";
      return { ok: false, error: `Execution was interrupted${at} (cancelled in ComfyUI).`, ...base, ...partial };
    }
    case "detached":
      return {
        ok: true,
        ...base,
        running: true,
        note:
          "The user stopped waiting: the run goes on in ComfyUI (it was not cancelled). Its result will " +
          "come with the user's next message. Don't queue it again; say so.",
        ...partial,
      };
    case "timeout":
      return {
        ok: false,
        error:
          `No result after ${timeout} s: the prompt is still queued or running in ComfyUI. ` +
          "Don't queue it again: its result will come with the user's next message.",
        ...base,
        running: true,
        ...partial,
      };
  }
}

/** The graph a run ran (the prompt sent to ComfyUI), where it is known, and the node
 * definitions to read it with (tools/latentDecodes.ts). */
export interface RanGraph {
  prompt?: ApiPrompt;
  lg?: LiteGraphGlobal;
}

/** The assistant's server looks at the run's files (format, size, all black, blank): a line
 * each for the model, or why they were not looked at. `decoded`: the files made after a latent
 * decode (only for those does all black name a failed decode as its cause). */
async function lookAt(app: ComfyApp, outputs: Record<string, Record<string, unknown>>, ran: RanGraph): Promise<Body> {
  const files = outputFiles(outputs).slice(0, MAX_LOOKED);
  if (!files.length) return {};
  const decoded = decodedFiles(outputs, ran.prompt, ran.lg).filter((name) => files.includes(name));
  let why: string;
  try {
    const response = await app.api.fetchApi(LOOK_PATH, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ outputs: files, ...(decoded.length ? { decoded } : {}) }),
    });
    const body = await readBody(response);
    const looked = body.outputs;
    if (response.ok && Array.isArray(looked)) {
      return {
        looked: looked.map((item: Body) =>
          typeof item.error === "string" ? `${String(item.name)}: not looked at (${item.error})` : String(item.line),
        ),
      };
    }
    why = typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
  } catch (error) {
    why = errorMessage(error);
  }
  return { lookedError: `The outputs were not looked at: ${why}` };
}

/** The tool result of a run that ended as `outcome` (`base`: its prompt id, time, warnings);
 * a successful run's files are looked at first (in the light of the graph that `ran`).
 * `timeout`: the seconds waited, for a timeout. */
export async function runResult(app: ComfyApp, outcome: Outcome, base: Body, run: RunRecord, ran: RanGraph, timeout = 0): Promise<ToolResult> {
  const result = outcomeResult(app, outcome, base, run, timeout);
  return outcome.kind === "success" ? { ...result, ...(await lookAt(app, run.outputs, ran)) } : result;
}
