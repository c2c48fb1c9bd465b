// A ComfyUI workflow pasted into the composer as text (users copy workflow JSON from GitHub,
// Reddit, Discord) becomes an attached workflow file instead: the server reads it into the
// few lines a model reads, and findMissing / loadWorkflow take it by its attachment id. The
// rule is the server's (core/files/workflow_text.py, workflow_format): an object with a
// `nodes` list (UI format), or a non-empty object whose every value has a string
// `class_type` (API format). Any other paste (text, other JSON, files) is left alone.

export const PASTED_NAME = "pasted-workflow.json";
/** Above this a paste is not parsed (the server takes 2 MB of text at most, MAX_TEXT_BYTES). */
export const MAX_PASTE_CHARS = 2 * 1024 * 1024;

/** The files made from pastes, so their chips can say so (a picked file of the same name is not one). */
const pasted = new WeakSet<Blob>();

/** "ui", "api", or null: the same rule as the server's workflow_format. */
export function workflowFormat(value: unknown): "ui" | "api" | null {
  if (!isObject(value)) return null;
  const nodes = Object.values(value);
  if (!nodes.length) return null;
  if (Array.isArray(value.nodes)) return "ui";
  return nodes.every((n) => isObject(n) && typeof n.class_type === "string") ? "api" : null;
}

/** Whether a pasted text is a ComfyUI workflow; cheap checks first, so most pastes are never parsed. */
export function isPastedWorkflow(text: string): boolean {
  if (text.length > MAX_PASTE_CHARS) return false;
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return false;
  if (!trimmed.includes('"nodes"') && !trimmed.includes('"class_type"')) return false;
  try {
    return workflowFormat(JSON.parse(trimmed)) !== null;
  } catch {
    return false;
  }
}

/** Whether this file was made from a pasted workflow. */
export function isPastedFile(file: Blob | undefined): boolean {
  return file !== undefined && pasted.has(file);
}

interface PasteLike {
  clipboardData: Pick<DataTransfer, "getData" | "files"> | null;
  preventDefault(): void;
}

/**
 * The composer's paste handler: a pasted workflow is attached as "pasted-workflow.json"
 * (application/json) and not typed into the box. True when it took the paste. Files on the
 * clipboard are left to the composer's own paste handling (they attach as files already).
 */
export function attachPastedWorkflow(event: PasteLike, addAttachment: (file: File) => Promise<void>): boolean {
  const data = event.clipboardData;
  if (!data || data.files.length > 0) return false;
  const text = data.getData("text/plain");
  if (!isPastedWorkflow(text)) return false;
  event.preventDefault();
  const file = new File([text.trim()], PASTED_NAME, { type: "application/json" });
  pasted.add(file);
  void addAttachment(file).catch(() => {}); // a refusal shows on the chip, as for any file
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
