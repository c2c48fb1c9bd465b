// findMissing: what the open workflow (or an attached one) needs that this ComfyUI lacks — node
// types and the packs that provide them, model files and where they download from — from the
// server's scan (routes/installs.py). The model reads a compact result (the scan id, the names
// installNodePacks and downloadModels take, each pack's state, each model's folder, host and
// size); the user reads the whole scan on the tool's cards (panel/InstallCards.tsx).
import { serializeWorkflow } from "./checkpointGraph";
import type { ToolContext, ToolResult } from "./context";
import { scanWorkflow, type Scan } from "./installScans";

export interface FindMissingArgs {
  attachmentId?: string;
}

const NEXT =
  "The user sees each pack and model on cards. To fix: installNodePacks with the pack ids (then restartComfyUI), " +
  "downloadModels with this scan id and the downloadable model names; both ask the user first.";

/** Why download addresses come only from the workflow, when Manager's new UI has no model list. */
export const NO_MODEL_LIST =
  "ComfyUI-Manager's model list is not available (its new interface does not serve it; only its legacy one, " +
  "--enable-manager-legacy-ui, does): model download addresses come only from the workflow. A model without " +
  "one: the user can search for its file name on Hugging Face or Civitai.";

/** What the model reads of a scan: names, states, where from; no descriptions. */
export function compactScan(scan: Scan): ToolResult {
  const packs = new Map(scan.packs.map((p) => [p.id, p]));
  const nodeTypes = scan.missingNodes.map((n) => ({
    type: n.type,
    packs: n.packs.map((id) => ({ id, title: packs.get(id)?.title ?? null, state: packs.get(id)?.state ?? "not-installed" })),
    ...(n.note ? { note: n.note } : {}),
  }));
  const models = scan.missingModels.map((m) => ({
    name: m.name,
    folder: m.directory,
    host: m.host,
    size: m.size,
    downloadable: m.downloadable,
    ...(m.problem ? { why: m.problem } : {}),
  }));
  const nothing = !nodeTypes.length && !models.length;
  const notes = [...scan.sources.notes, ...(scan.sources.modelListLegacyUiOnly && models.length ? [NO_MODEL_LIST] : [])];
  return {
    ok: true,
    scan: scan.scan,
    missingNodeTypes: nodeTypes,
    missingModels: models,
    presentModels: scan.presentModels.length,
    ...(notes.length ? { notes } : {}),
    note: nothing ? "Nothing is missing: every node type and model file is installed." : NEXT,
  };
}

export async function findMissing(ctx: ToolContext, args: FindMissingArgs): Promise<ToolResult> {
  const attachment = args.attachmentId?.trim();
  const scan = await scanWorkflow(attachment ? { attachment } : { workflow: serializeWorkflow(ctx.app) });
  return compactScan(scan);
}
