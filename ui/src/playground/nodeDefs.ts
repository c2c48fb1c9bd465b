// Node definitions for the playground: the environment's /api/object_info (the same data ComfyUI
// serves), registered as LiteGraph node types by ../litegraph/register.
import type { NodeDef } from "../host/comfy";

export type NodeDefs = Record<string, NodeDef>;

export async function fetchNodeDefs(fetchApi: (route: string) => Promise<Response>): Promise<NodeDefs> {
  const response = await fetchApi("/object_info");
  if (!response.ok) throw new Error(`GET /api/object_info answered ${response.status}`);
  return (await response.json()) as NodeDefs;
}
