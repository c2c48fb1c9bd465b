// The panel tools: the seven graph tools the model calls and the four install tools (a scan of
// what the workflow lacks, packs through ComfyUI-Manager, model downloads, a restart; schemas from the Python registry, generated into schemas.generated.ts), run
// against ComfyUI's `app`.
//
//   const tools = graphTools(app);              // LiteGraph from window.LiteGraph, looked up per call
//   const result = await tools.addNode({ nodeType: "KSampler" });
//   const result = await runTool(app, name, input); // unknown names give an error result
//
// Every tool resolves to a JSON-serialisable ToolResult, `{ok: true, ...}` or
// `{ok: false, error, ...}`, and never rejects: invalid arguments, unknown ids or types, and
// failures inside ComfyUI all come back as errors that say what went wrong and what to do.
// Every edit is recorded by the active workflow's change tracker (one Ctrl+Z undoes it).
import { liteGraph, type ComfyApp, type LiteGraphGlobal } from "../host/comfy";
import { addNode, type AddNodeArgs } from "./addNode";
import { connectNodes, type ConnectNodesArgs } from "./connectNodes";
import { errorMessage, ToolError, type ToolContext, type ToolResult } from "./context";
import { getWorkflow, type GetWorkflowArgs } from "./getWorkflow";
import { downloadModels, type DownloadModelsArgs } from "./downloadModels";
import { findMissing, type FindMissingArgs } from "./findMissing";
import { installNodePacks, type InstallNodePacksArgs } from "./installNodePacks";
import { loadTemplate, type LoadTemplateArgs } from "./loadTemplate";
import { loadWorkflow, type LoadWorkflowArgs } from "./loadWorkflow";
import { queueWorkflow, type QueueWorkflowArgs } from "./queueWorkflow";
import { removeNodes, type RemoveNodesArgs } from "./removeNodes";
import { restartComfyUI, type RestartComfyUIArgs } from "./restartComfyUI";
import { validateArgs } from "./schema";
import { PANEL_TOOL_SCHEMAS, type PanelToolName } from "./schemas.generated";
import { setWidgetValues, type SetWidgetValuesArgs } from "./setWidgetValues";

export type { ToolResult } from "./context";
import type { Approve } from "./approvals";
export { PANEL_TOOL_SCHEMAS } from "./schemas.generated";

export type ToolName = PanelToolName;
/** How a call is run: `progress` hears a long call's progress (a run's node and step). */
export interface CallOptions {
  progress?: (update: Record<string, unknown>) => void;
  /** Aborted when the user stops waiting (a run goes on in ComfyUI). */
  detach?: AbortSignal;
  /** Asks the user before the call destroys work or costs money (tools/approvals.ts). */
  approve?: Approve;
}

export type PanelTools = Record<ToolName, (input: unknown, call?: CallOptions) => Promise<ToolResult>>;

interface ArgsByTool {
  getWorkflow: GetWorkflowArgs;
  addNode: AddNodeArgs;
  removeNodes: RemoveNodesArgs;
  connectNodes: ConnectNodesArgs;
  setWidgetValues: SetWidgetValuesArgs;
  queueWorkflow: QueueWorkflowArgs;
  loadWorkflow: LoadWorkflowArgs;
  loadTemplate: LoadTemplateArgs;
  findMissing: FindMissingArgs;
  installNodePacks: InstallNodePacksArgs;
  downloadModels: DownloadModelsArgs;
  restartComfyUI: RestartComfyUIArgs;
}

const IMPLEMENTATIONS: { [K in ToolName]: (ctx: ToolContext, args: ArgsByTool[K]) => ToolResult | Promise<ToolResult> } = {
  getWorkflow,
  addNode,
  removeNodes,
  connectNodes,
  setWidgetValues,
  queueWorkflow,
  loadWorkflow,
  loadTemplate,
  findMissing,
  installNodePacks,
  downloadModels,
  restartComfyUI,
};

/** The panel's tools: those it implements (the table above must name every panel tool of the
 * registry, and only those: tsc checks it against the generated schemas). */
export const PANEL_TOOL_NAMES = Object.keys(IMPLEMENTATIONS) as ToolName[];

export function isPanelTool(name: string): name is ToolName {
  return (PANEL_TOOL_NAMES as readonly string[]).includes(name);
}

async function run(
  app: ComfyApp,
  lg: LiteGraphGlobal | undefined,
  name: ToolName,
  input: unknown,
  call: CallOptions = {},
): Promise<ToolResult> {
  try {
    const checked = validateArgs(PANEL_TOOL_SCHEMAS[name], input);
    if (!checked.ok) return { ok: false, error: `Invalid arguments for ${name}: ${checked.errors.join("; ")}.` };
    const ctx: ToolContext = {
      app,
      lg: lg ?? liteGraph(),
      ...(call.progress ? { progress: call.progress } : {}),
      ...(call.detach ? { detach: call.detach } : {}),
      ...(call.approve ? { approve: call.approve } : {}),
    };
    const implementation = IMPLEMENTATIONS[name] as (ctx: ToolContext, args: unknown) => ToolResult | Promise<ToolResult>;
    return await implementation(ctx, checked.value);
  } catch (error) {
    if (error instanceof ToolError) return { ok: false, error: error.message, ...error.extra };
    return { ok: false, error: `Unexpected error in ${name}: ${errorMessage(error)}` };
  }
}

/** The panel tools bound to `app` (LiteGraph defaults to window.LiteGraph at call time). */
export function graphTools(app: ComfyApp, lg?: LiteGraphGlobal): PanelTools {
  const tools = {} as PanelTools;
  for (const name of PANEL_TOOL_NAMES) tools[name] = (input: unknown, call?: CallOptions) => run(app, lg, name, input, call);
  return tools;
}

/** Runs a panel tool by name; an unknown name gives an error result listing the panel tools. */
export async function runTool(app: ComfyApp, name: string, input: unknown, lg?: LiteGraphGlobal): Promise<ToolResult> {
  if (!isPanelTool(name)) {
    return { ok: false, error: `Unknown panel tool "${name}". Panel tools: ${PANEL_TOOL_NAMES.join(", ")}.` };
  }
  return run(app, lg, name, input);
}
