// Whether ComfyUI shows a workflow tab again after a page reload, told by what the frontend keeps,
// not by its version. Checked in the sources of frontends 1.27.10 and 1.58.1
// (platform/workflow/persistence): 1.27 stores the ACTIVE graph only ("workflow" in the browser's
// storage) and reopens saved tabs without unsaved changes, so an unsaved tab that is not active
// at the reload is gone (seen on a real ComfyUI 0.3.64 + 1.27.10); newer frontends keep a draft
// of each open tab in localStorage (V2: "Comfy.Workflow.DraftIndex.v2:<workspace>", whose entries
// name each draft's path; earlier drafts: "Comfy.Workflow.Drafts", keyed by path) and reopen the
// unsaved tabs that have one. Nothing is kept when the setting Comfy.Workflow.Persist is off.
import type { ComfyApp, ComfyWorkflow } from "./comfy";

const DRAFT_INDEX = "Comfy.Workflow.DraftIndex.v2:";
const OLD_DRAFTS = "Comfy.Workflow.Drafts";

function storedJson(storage: Storage, key: string): unknown {
  try {
    return JSON.parse(storage.getItem(key) ?? "null") as unknown;
  } catch {
    return null;
  }
}

/** Whether the frontend keeps a draft of the workflow at `path` in this browser. */
export function hasDraft(storage: Storage, path: string): boolean {
  const old = storedJson(storage, OLD_DRAFTS);
  if (typeof old === "object" && old !== null && path in old) return true;
  for (let i = 0; i < storage.length; i++) {
    const key = storage.key(i);
    if (!key?.startsWith(DRAFT_INDEX)) continue;
    const entries = (storedJson(storage, key) as { entries?: Record<string, { path?: unknown }> } | null)?.entries;
    if (entries && Object.values(entries).some((entry) => entry?.path === path)) return true;
  }
  return false;
}

/**
 * Whether `workflow`'s tab comes back as it is after a page reload while another tab is active:
 * a saved one without unsaved changes does (its file); another one only where the frontend keeps
 * a draft of it.
 */
export function keptAcrossReload(app: ComfyApp, workflow: ComfyWorkflow): boolean {
  const saved = workflow.isTemporary !== true && workflow.isModified !== true;
  if (saved) return true;
  if (app.extensionManager?.setting?.get("Comfy.Workflow.Persist") === false) return false;
  const path = workflow.path;
  return typeof path === "string" && typeof localStorage !== "undefined" && hasDraft(localStorage, path);
}
