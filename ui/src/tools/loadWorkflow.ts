// loadWorkflow: opens a workflow in ComfyUI's UI format (loaded by app.loadGraphData) or API
// format (built node by node into a new blank workflow, see apiWorkflow.ts). Node types are
// checked first. ComfyUI (1.27.10 to 1.58.1) opens what app.loadGraphData loads in a NEW tab and
// leaves the one the user was on as it was: nothing is replaced, so nothing is asked; the result
// says so, and the chat moves to the new tab with the user (runtime/toolCalls.ts). A frontend
// without workflow tabs replaces its one graph: only after the user confirms.
import {
  captureState,
  changeTracker,
  raw,
  rootGraph,
  workflowTitle,
  type ComfyApp,
  type ComfyWorkflow,
  type LGraphNode,
  type LiteGraphGlobal,
} from "../host/comfy";
import { keptAcrossReload } from "../host/reloadKeeps";
import { isRegistered } from "./addNode";
import { buildApiWorkflow, planApiWorkflow, type ApiNode } from "./apiWorkflow";
import { graphLinks } from "./links";
import { requestJson } from "../server/api";
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

/** The open tab, where the frontend lists its tabs (ComfyUI's workflow store; not a bare app). */
function activeTab(app: ComfyApp): ComfyWorkflow | null | undefined {
  const store = app.extensionManager?.workflow;
  return store && Array.isArray(store.openWorkflows) ? store.activeWorkflow : undefined;
}

/** What becomes of the user's tab: unchanged, and whether a page reload keeps it (reloadKeeps.ts). */
function keptNote(app: ComfyApp, tab: ComfyWorkflow, title: string): string {
  if (keptAcrossReload(app, tab)) return `their tab “${title}” is unchanged`;
  const unsaved = tab.isTemporary === true;
  return (
    `their tab “${title}” is unchanged for now, but it ${unsaved ? "is not saved" : "has unsaved changes"} and this ComfyUI keeps no copy of it ` +
    `for a page reload (it restores only the tab that is active then): a reload would close it${unsaved ? "" : " (its file stays, without those changes)"} ` +
    "unless the user saves it, or goes back to it, first"
  );
}

/**
 * Runs `load` where it goes: with workflow tabs into the new tab the frontend opens (the user's
 * tab stays as it is), else over the one graph once the user confirmed. What the result says.
 */
export async function openOrReplace(app: ComfyApp, incoming: number, load: () => Promise<void>): Promise<Obj> {
  const before = activeTab(app);
  if (before === undefined) {
    await confirmReplace(app, incoming);
    await load();
    return { replaced: true };
  }
  const previous = before ? workflowTitle(before) : undefined;
  await load();
  const after = activeTab(app);
  const title = after ? workflowTitle(after) : undefined;
  if (after && raw(after) !== raw(before)) {
    return {
      tab: title,
      note:
        `ComfyUI opened it in a new tab, “${title}”, which the user now sees${before && previous ? `; ${keptNote(app, before, previous)}` : ""}. ` +
        "This chat moved to the new tab: the graph tools now work on it.",
    };
  }
  return { replaced: true, note: `ComfyUI loaded it into the tab the user is on${title ? `, “${title}”` : ""}, in place of its graph (Ctrl+Z brings it back).` };
}

/** An empty workflow, for the API format's nodes to be built in (its own tab where there are tabs). */
const BLANK = { last_node_id: 0, last_link_id: 0, nodes: [], links: [], groups: [], config: {}, extra: {}, version: 0.4 };

export function summary(app: ComfyApp): Obj {
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
  const where = await openOrReplace(app, nodes.length, async () => {
    try {
      await app.loadGraphData(workflow);
    } catch (error) {
      throw new ToolError(`ComfyUI could not load the workflow: ${errorMessage(error)}`);
    }
  });
  // loadGraphData manages the workflow tab's history itself; record the result in the tracker
  // that is active now (a no-op when the tracker already holds this state).
  captureState(changeTracker(app));
  redraw(app);
  return { ok: true, format: "ui", ...where, ...summary(app) };
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
  let notes: string[] = [];
  const tabs = activeTab(app) !== undefined;
  const where = await openOrReplace(app, plan.nodes.length, async () => {
    if (tabs) await app.loadGraphData(structuredClone(BLANK)); // a new tab to build it in
    notes = await buildApiWorkflow(ctx, plan);
  });
  return { ok: true, format: "api", ...where, ...summary(app), ...(notes.length ? { notes } : {}) };
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
