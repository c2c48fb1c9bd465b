// What the MCP relay (mcpRelay.ts) keeps across a reload of the page, in the tab's sessionStorage
// (this tab only, gone with it; nothing secret: client names, graphs, calls): the clients whose
// graph edits go ahead without asking, the call groups with the graph saved before their first
// edit ("put the graph back"), and the calls listed. A call that was still running or asking is
// kept as cancelled: the reload ended it (the server failed it when the stream closed).
import type { McpCall, McpGroup } from "./mcpCalls";

export const KEPT_KEY = "comfyui-assistant.mcpRelay";

export interface Kept {
  trusted: string[];
  groups: McpGroup[];
  groupCount: number;
  calls: McpCall[];
}

export type KeptStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** What an earlier load of the page kept, or null. */
export function loadKept(storage: KeptStorage): Kept | null {
  try {
    const kept = JSON.parse(storage.getItem(KEPT_KEY) ?? "null") as Kept | null;
    if (!kept || !Array.isArray(kept.trusted) || !Array.isArray(kept.groups) || !Array.isArray(kept.calls)) return null;
    const ended = (c: McpCall): McpCall => (c.state === "running" || c.state === "asking" ? { ...c, state: "cancelled", asking: undefined } : c);
    return { ...kept, calls: kept.calls.map(ended), groupCount: Number(kept.groupCount) || 0 };
  } catch {
    return null;
  }
}

/** Keeps `read()` soon (once per burst of changes); storage refused (full): nothing kept. */
export function keeper(storage: KeptStorage, read: () => Kept): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      try {
        storage.setItem(KEPT_KEY, JSON.stringify(read()));
      } catch (error) {
        storage.removeItem(KEPT_KEY);
        console.warn("[comfyui-assistant] the MCP relay's calls could not be kept for a reload", error);
      }
    }, 0);
  };
}
