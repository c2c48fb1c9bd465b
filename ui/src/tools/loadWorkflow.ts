// loadWorkflow: replaces the whole graph with a workflow in ComfyUI's UI format (loaded by
// app.loadGraphData) or API format (built node by node, see apiWorkflow.ts). Node types are
// checked first; a non-empty graph is only replaced after the user confirms.
import { captureState, changeTracker, rootGraph, type ComfyApp, type LGraphNode, type LiteGraphGlobal } from "../comfy";
import { isRegistered } from "./addNode";
import { buildApiWorkflow, planApiWorkflow, type ApiNode } from "./apiWorkflow";
import { graphLinks } from "./links";
import { requestJson } from "../runtime/api";
import {
  closest,
  errorMessage,
  publicId,
  redraw,
  ToolError,
  typeName,
  type ToolContext,
  type ToolResult,
} from "./context";

export interface LoadWorkflowArgs {
  workflow?: Record<string, unknown>;
  /** Instead of `workflow`: an attached file's id (a workflow JSON, or an image ComfyUI made). */
  attachment?: string;
}

type Obj = Record<string, unknown>;

function rootNodes(app: ComfyApp): LGraphNode[] {
  return [...((rootGraph(app).nodes ?? []) as LGraphNode[])];
}

const isObject = (value: unknown): value is Obj => typeof value === "object" && value !== null && !Array.isArray(value);

function unknownTypes(lg: LiteGraphGlobal, types: string[]): string {
  const registered = Object.keys(lg.registered_node_types);
  const each = types.map((type) => {
    const near = closest(type, registered, 3);
    return `"${type}" (${near.length ? `closest: ${near.join(", ")}` : "no close match"})`;
  });
  return `Unknown node type${types.length > 1 ? "s" : ""}: ${each.join("; ")}. Nothing was loaded; use installed class names (search the installed node types if unsure).`;
}

/** Asks the user before a non-empty graph is replaced; throws if they decline. */
async function confirmReplace(app: ComfyApp, incoming: number): Promise<void> {
  const current = rootNodes(app).length;
  if (!current) return;
  const dialog = app.extensionManager?.dialog;
  if (typeof dialog?.confirm !== "function") {
    throw new ToolError("The current graph is not empty and ComfyUI offers no way to ask the user to confirm replacing it; nothing was loaded.");
  }
  const answer = await dialog.confirm({
    title: "Replace the workflow?",
    message: `The assistant wants to replace the current workflow (${current} node${current === 1 ? "" : "s"}) with a new one (${incoming} node${incoming === 1 ? "" : "s"}).`,
  });
  if (answer !== true) {
    throw new ToolError(
      `The user declined replacing the current workflow (${current} nodes); nothing was changed. Ask what they want instead, or make smaller edits to the current graph.`,
      { declined: true },
    );
  }
}

function summary(app: ComfyApp): Obj {
  const nodes: Record<string, string> = {};
  for (const node of rootNodes(app)) nodes[String(publicId(node.id))] = typeName(node);
  const links = graphLinks(rootGraph(app)).length;
  return { nodeCount: Object.keys(nodes).length, linkCount: links, nodes };
}

async function loadUiFormat(ctx: ToolContext, workflow: Obj): Promise<ToolResult> {
  const { app, lg } = ctx;
  const nodes = workflow.nodes as unknown[];
  const typeless = nodes.filter((n) => !isObject(n) || typeof n.type !== "string").length;
  if (typeless) throw new ToolError(`${typeless} item(s) of "nodes" are not objects with a "type"; nothing was loaded.`);
  if (workflow.links !== undefined && !Array.isArray(workflow.links)) {
    throw new ToolError(`"links" must be an array of links; nothing was loaded.`);
  }
  const definitions = isObject(workflow.definitions) ? workflow.definitions.subgraphs : undefined;
  const subgraphs = new Set(Array.isArray(definitions) ? definitions.map((s) => (isObject(s) ? s.id : undefined)) : []);
  const types = [...new Set((nodes as Obj[]).map((n) => n.type as string))];
  const unknown = types.filter((t) => !isRegistered(lg, t) && !subgraphs.has(t));
  if (unknown.length) throw new ToolError(unknownTypes(lg, unknown));
  await confirmReplace(app, nodes.length);
  try {
    await app.loadGraphData(workflow);
  } catch (error) {
    throw new ToolError(`ComfyUI could not load the workflow: ${errorMessage(error)}`);
  }
  // loadGraphData manages the workflow tab's history itself; record the result in the tracker
  // that is active now (a no-op when the tracker already holds this state).
  captureState(changeTracker(app));
  redraw(app);
  return { ok: true, format: "ui", ...summary(app) };
}

async function loadApiFormat(ctx: ToolContext, workflow: Obj): Promise<ToolResult> {
  const { app, lg } = ctx;
  const entries = Object.entries(workflow);
  const malformed = entries.filter(([, v]) => !isObject(v) || typeof v.class_type !== "string" || (v.inputs !== undefined && !isObject(v.inputs)));
  if (malformed.length) {
    throw new ToolError(
      `In API format every entry must be {class_type, inputs}; ${malformed.map(([k]) => `"${k}"`).join(", ")} ${malformed.length === 1 ? "is" : "are"} not. Nothing was loaded.`,
    );
  }
  const typed = entries as [string, ApiNode][];
  const unknown = [...new Set(typed.map(([, e]) => e.class_type))].filter((t) => !isRegistered(lg, t));
  if (unknown.length) throw new ToolError(unknownTypes(lg, unknown));
  const plan = planApiWorkflow(ctx, typed);
  await confirmReplace(app, plan.nodes.length);
  const notes = await buildApiWorkflow(ctx, plan);
  return { ok: true, format: "api", ...summary(app), ...(notes.length ? { notes } : {}) };
}

/** The workflow an attached file holds, as the server read it when it was attached. */
async function attachedWorkflow(id: string): Promise<Obj> {
  try {
    const found = await requestJson<{ workflow: Obj }>(`/api/assistant/attachments/${encodeURIComponent(id)}/workflow`);
    return found.workflow;
  } catch (error) {
    throw new ToolError(`${errorMessage(error)}; nothing was loaded.`);
  }
}

export async function loadWorkflow(ctx: ToolContext, args: LoadWorkflowArgs): Promise<ToolResult> {
  if ((args.workflow === undefined) === (args.attachment === undefined)) {
    throw new ToolError('Give either "workflow" (the workflow itself) or "attachment" (the id of an attached file that holds one). Nothing was loaded.');
  }
  const workflow = args.attachment !== undefined ? await attachedWorkflow(args.attachment) : (args.workflow as Obj);
  if (Array.isArray(workflow.nodes)) return loadUiFormat(ctx, workflow);
  const values = Object.values(workflow);
  if (values.length && values.some((v) => isObject(v) && "class_type" in v)) return loadApiFormat(ctx, workflow);
  throw new ToolError(
    'The workflow is in neither of ComfyUI\'s formats: UI format is an object with "nodes" (and "links"); API format maps node ids to {class_type, inputs}. Nothing was loaded.',
  );
}
