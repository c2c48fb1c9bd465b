// The workflow graph as checkpoints and rewinds use it (runtime/checkpoints.ts, runtime/rewind.ts):
// serialized as ComfyUI saves it.
import { rootGraph, type ComfyApp } from "../comfy";
import type { WorkflowAccess } from "../runtime/checkpoints";

/** The graph of the workflow the user is on, as ComfyUI serializes it (subgraph definitions
 * included): `app.rootGraph.serialize()`, the state its change tracker and its save keep. */
export function serializeWorkflow(app: ComfyApp): unknown {
  return (rootGraph(app) as { serialize(): unknown }).serialize();
}

export function workflowAccess(app: ComfyApp): WorkflowAccess {
  return { serialize: () => serializeWorkflow(app) };
}
