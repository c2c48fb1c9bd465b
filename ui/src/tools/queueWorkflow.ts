// queueWorkflow: converts the graph with app.graphToPrompt(), POSTs it to /prompt through
// app.api.fetchApi (as ComfyUI's own queue does), and optionally follows its execution until
// the outputs are ready. Validation errors (HTTP 400) come back with every node error's details;
// how a watched run ended is said as runOutcome.ts says it. A run that outlasts the wait (the
// user stopped waiting, or the timeout) comes back `running: true`: the panel tells its end with
// the user's next message (runHistory.ts).
import { rootGraph, type ComfyApp, type LGraphNode } from "../host/comfy";
import { ask, runApproval } from "./approvals";
import { errorMessage, nodeLabel, ToolError, type NodeId, type ToolContext, type ToolResult } from "./context";
import { allGraphs, executionId, executionIdRef, requireNodes } from "./graphs";
import { ExecutionWatcher, nodeErrorList, type RunProgress } from "./execution";
import type { ApiPrompt } from "./latentDecodes";
import { readBody, runResult, type Body } from "./runOutcome";

export interface QueueWorkflowArgs {
  waitForResult?: boolean;
  timeoutSeconds?: number;
  /** Run only what these output nodes need (ComfyUI's partial execution). */
  outputNodeIds?: NodeId[];
}

/** The first ComfyUI that runs part of a workflow (`partial_execution_targets`, July 2025);
 * an older one ignores the field and runs everything. */
const PARTIAL_SINCE = [0, 3, 48];

/** Every node of the workflow, inside subgraphs too (a subgraph used twice counts once). */
function everyNode(app: ComfyApp): LGraphNode[] {
  const graphs = new Set([rootGraph(app), ...allGraphs(app).map((ref) => ref.graph)]);
  return [...graphs].flatMap((graph) => (graph.nodes ?? []) as LGraphNode[]);
}

/** Runs the widgets' queue hooks (e.g. seed "randomize"), as ComfyUI's queue button does. */
function runWidgetHooks(app: ComfyApp, hook: "beforeQueued" | "afterQueued"): void {
  for (const node of everyNode(app)) {
    for (const widget of node.widgets ?? []) {
      const run = (widget as unknown as Partial<Record<typeof hook, () => void>>)[hook];
      try {
        if (typeof run === "function") run.call(widget);
      } catch {
        // A widget's hook failing must not fail the queueing.
      }
    }
  }
}

function validationFailure(app: ComfyApp, body: Body, status: number): ToolResult {
  const error = (body.error ?? {}) as Body;
  const text = typeof body.text === "string" && body.text ? `: ${body.text.slice(0, 300)}` : "";
  const message = typeof error.message === "string" ? error.message : `ComfyUI rejected the workflow (HTTP ${status})${text}`;
  const details = typeof error.details === "string" && error.details ? `: ${error.details}` : "";
  const nodeErrors = nodeErrorList(body.node_errors, (id) => executionIdRef(app, id));
  return {
    ok: false,
    error: `${message}${details}`,
    ...(typeof error.type === "string" ? { errorType: error.type } : {}),
    ...(nodeErrors.length ? { nodeErrors } : {}),
  };
}

/** ComfyUI's version from /system_stats ([0, 3, 64]), or null when it does not say. */
async function comfyuiVersion(app: ComfyApp): Promise<number[] | null> {
  try {
    const body = await readBody(await app.api.fetchApi("/system_stats"));
    const text = String((body.system as Body | undefined)?.comfyui_version ?? "");
    const found = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text);
    return found ? found.slice(1).map(Number) : null;
  } catch {
    return null;
  }
}

function older(version: number[], than: number[]): boolean {
  for (let i = 0; i < than.length; i++) if ((version[i] ?? 0) !== than[i]) return (version[i] ?? 0) < than[i]!;
  return false;
}

/** The execution ids of the output nodes to run up to, checked: each one an output node, and a
 * ComfyUI that runs part of a workflow (an older one would run all of it). */
async function partialTargets(ctx: ToolContext, ids: NodeId[]): Promise<string[]> {
  const found = requireNodes(ctx.app, ids, "nothing was queued");
  const notOutputs = found.filter((f) => !ctx.lg.registered_node_types[f.node.type]?.nodeData?.output_node);
  if (notOutputs.length) {
    const names = notOutputs.map((f) => nodeLabel(f.node)).join(", ");
    throw new ToolError(
      `${names} ${notOutputs.length === 1 ? "is not an output node" : "are not output nodes"}: outputNodeIds names the ` +
        "output nodes to run up to (SaveImage, PreviewImage, …); nothing was queued.",
    );
  }
  const version = await comfyuiVersion(ctx.app);
  if (version && older(version, PARTIAL_SINCE)) {
    throw new ToolError(
      `This ComfyUI (${version.join(".")}) runs whole workflows only: running part of one needs ComfyUI ` +
        `${PARTIAL_SINCE.join(".")} or newer. Run the whole workflow (no outputNodeIds), or ask the user to update ComfyUI; nothing was queued.`,
    );
  }
  return found.map((f) => executionId(f.ref, f.node));
}

export async function queueWorkflow(ctx: ToolContext, args: QueueWorkflowArgs): Promise<ToolResult> {
  const { app } = ctx;
  const wait = args.waitForResult ?? true;
  const timeout = args.timeoutSeconds ?? 300;
  if (!(rootGraph(app).nodes ?? []).length) throw new ToolError("The workflow is empty: add nodes before queueing it.");
  const targets = args.outputNodeIds?.length ? await partialTargets(ctx, args.outputNodeIds) : null;
  runWidgetHooks(app, "beforeQueued");
  let prompt: Awaited<ReturnType<ComfyApp["graphToPrompt"]>>;
  try {
    prompt = await app.graphToPrompt();
  } catch (error) {
    throw new ToolError(`ComfyUI could not turn the graph into a prompt: ${errorMessage(error)}`);
  }
  const worth = runApproval(prompt.output, ctx.lg, (id) => String(executionIdRef(app, id)));
  if (worth) await ask(ctx.approve, worth);
  const progress = ctx.progress;
  const report = progress ? (update: RunProgress) => progress({ ...update }) : undefined;
  const watcher = wait ? new ExecutionWatcher(app.api, report, (id) => executionIdRef(app, id)) : null;
  try {
    const started = Date.now();
    let response: Response;
    try {
      response = await app.api.fetchApi("/prompt", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          client_id: app.api.clientId,
          prompt: prompt.output,
          extra_data: { extra_pnginfo: { workflow: prompt.workflow } },
          ...(targets ? { partial_execution_targets: targets } : {}),
        }),
      });
    } catch (error) {
      throw new ToolError(`Could not reach ComfyUI to queue the workflow: ${errorMessage(error)}`);
    }
    const body = await readBody(response);
    if (response.status === 400 || (!response.ok && body.error)) return validationFailure(app, body, response.status);
    if (!response.ok) {
      throw new ToolError(`ComfyUI answered HTTP ${response.status} when queueing: ${String(body.text ?? JSON.stringify(body)).slice(0, 300)}`);
    }
    const promptId = body.prompt_id;
    if (typeof promptId !== "string" || !promptId) throw new ToolError("ComfyUI accepted the workflow but sent no prompt_id.");
    runWidgetHooks(app, "afterQueued");
    const warnings = nodeErrorList(body.node_errors, (id) => executionIdRef(app, id));
    const base: Body = { promptId, ...(warnings.length ? { nodeErrors: warnings } : {}) };
    if (!watcher) return { ok: true, ...base, queued: true, ...(typeof body.number === "number" ? { number: body.number } : {}) };
    const outcome = await watcher.wait(promptId, timeout * 1000, ctx.detach);
    base.seconds = Math.round((Date.now() - started) / 100) / 10;
    return await runResult(app, outcome, base, watcher, { prompt: prompt.output as ApiPrompt, lg: ctx.lg }, timeout);
  } finally {
    watcher?.dispose();
  }
}
