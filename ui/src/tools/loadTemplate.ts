// loadTemplate: opens one of ComfyUI's official workflow templates the way its own template
// browser does (1.27.10 and 1.58.1: fetch `/templates/<name>.json`, then
// app.loadGraphData(json, true, true, <tab name>): a new tab), with a thread key of our own in
// the workflow (templates share workflow ids: host/threadKeys.ts), then scans it for what this
// ComfyUI lacks and tells the model each missing model in one line, with the scan id that
// downloadModels takes. The tab is named by the template's title in ComfyUI's index (1.27.10
// names it so, from its translations; 1.58.1 by the template's name when it has none).
import { keyLoadedGraph } from "../host/threadKeys";
import { serializeWorkflow } from "./checkpointGraph";
import { errorMessage, redraw, ToolError, type ToolContext, type ToolResult } from "./context";
import { scanWorkflow, type Scan } from "./installScans";
import { openOrReplace, summary } from "./loadWorkflow";

export interface LoadTemplateArgs {
  name: string;
}

type Obj = Record<string, unknown>;
type IndexGroup = { templates?: { name?: unknown; title?: unknown }[] };

const NAME = /^[\w.-]{1,120}$/;

/** A URL of a file ComfyUI serves (its frontend's api.fileURL: the base path, if any). */
function fileUrl(ctx: ToolContext, route: string): string {
  return typeof ctx.app.api?.fileURL === "function" ? ctx.app.api.fileURL(route) : route;
}

async function fetchJson(ctx: ToolContext, route: string): Promise<{ status: number; json?: unknown }> {
  let response: Response;
  try {
    response = await fetch(fileUrl(ctx, route), { cache: "no-cache" });
  } catch (error) {
    throw new ToolError(`ComfyUI did not answer for ${route}: ${errorMessage(error)}. Nothing was loaded.`);
  }
  if (!response.ok) return { status: response.status };
  try {
    return { status: response.status, json: (await response.json()) as unknown };
  } catch {
    return { status: response.status };
  }
}

/** The tab's name: the template's title in ComfyUI's index, else its name; no path separators. */
async function tabName(ctx: ToolContext, name: string): Promise<string> {
  const index = await fetchJson(ctx, "/templates/index.json").catch(() => ({ json: undefined }));
  const groups = Array.isArray(index.json) ? (index.json as IndexGroup[]) : [];
  const entry = groups.flatMap((g) => (Array.isArray(g.templates) ? g.templates : [])).find((t) => t.name === name);
  const title = typeof entry?.title === "string" && entry.title.trim() ? entry.title : name;
  return title.replace(/[\\/:*?"<>|]+/g, " ").replace(/\s+/g, " ").trim() || name;
}

/** What the model reads of the scan: one line per missing model (and node type). */
function missingLines(scan: Scan): string[] {
  const models = scan.missingModels.map((m) => {
    const where = [m.directory ? `models/${m.directory}` : "folder unknown", m.host ?? "no download address", m.size ? `${(m.size / 1e9).toFixed(1)} GB` : null]
      .filter(Boolean)
      .join(", ");
    return `missing model ${m.name} (${where})${m.downloadable ? "" : `: not downloadable${m.problem ? ` (${m.problem})` : ""}`}`;
  });
  const nodes = scan.missingNodes.map((n) => `missing node type ${n.type}${n.packs.length ? ` (pack: ${n.packs.join(" or ")})` : " (no known pack)"}`);
  return [...models, ...nodes];
}

function nextStep(scan: Scan): string {
  const downloadable = scan.missingModels.filter((m) => m.downloadable).map((m) => m.name);
  const steps: string[] = [];
  if (downloadable.length) steps.push(`downloadModels {"scan": "${scan.scan}", "models": ${JSON.stringify(downloadable)}} fetches the downloadable models (it asks the user first)`);
  if (scan.missingNodes.length) steps.push("installNodePacks with the pack ids, then restartComfyUI, adds the missing node types");
  return steps.length ? `${steps.join("; ")}.` : "Nothing is missing: it can run as it is.";
}

export async function loadTemplate(ctx: ToolContext, args: LoadTemplateArgs): Promise<ToolResult> {
  const name = args.name.trim().replace(/\.json$/i, "");
  if (!NAME.test(name)) throw new ToolError(`"${args.name}" is not a template name (letters, digits, _ . -); use a name searchTemplates gave. Nothing was loaded.`);
  const found = await fetchJson(ctx, `/templates/${name}.json`);
  if (found.status === 404) throw new ToolError(`This ComfyUI has no template "${name}"; use a name searchTemplates gave. Nothing was loaded.`);
  const workflow = found.json as Obj | undefined;
  if (!workflow || typeof workflow !== "object" || !Array.isArray(workflow.nodes)) {
    throw new ToolError(`ComfyUI did not serve template "${name}" as a workflow (HTTP ${found.status}). Nothing was loaded.`);
  }
  const title = await tabName(ctx, name);
  keyLoadedGraph(workflow); // its own thread key: templates share their workflow ids
  const where = await openOrReplace(ctx.app, workflow.nodes.length, async () => {
    try {
      await ctx.app.loadGraphData(workflow, true, true, title);
    } catch (error) {
      throw new ToolError(`ComfyUI could not load template "${name}": ${errorMessage(error)}`);
    }
  });
  redraw(ctx.app);
  const result = { ok: true as const, template: name, ...where, ...summary(ctx.app) };
  try {
    const scan = await scanWorkflow({ workflow: serializeWorkflow(ctx.app) });
    return { ...result, scan: scan.scan, missing: missingLines(scan), next: nextStep(scan) };
  } catch (error) {
    return { ...result, missing: null, scanError: `It is open, but the scan for missing models failed: ${error instanceof ToolError ? error.message : errorMessage(error)}. findMissing can scan it again.` };
  }
}
