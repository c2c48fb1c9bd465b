// What a tool asks the user before it acts: removing nodes destroys work, a run of paid API nodes
// costs money, a large batch takes long. The tool knows exactly what it is about to do (the
// nodes it found, the prompt it built), so it asks at that point, before changing anything,
// through `ToolContext.approve` (the chat store shows the AI SDK's own approval parts and waits
// for Allow or Deny). Without an `approve` (a caller with no user to ask) the tool goes on.
import type { ComfyPrompt, LiteGraphGlobal } from "../host/comfy";
import { ToolError } from "./toolError";

export type ApprovalKind = "graph-edit" | "paid-run" | "large-batch" | "server" | "install" | "download" | "restart";

export interface ApprovalRequest {
  kind: ApprovalKind;
  /** What will happen, in a sentence. */
  action: string;
  /** The nodes it concerns ("KSampler #3"). */
  nodes: string[];
  /** What it costs, when known. */
  cost?: string;
}

export type Approve = (request: ApprovalRequest) => Promise<boolean>;

/** Images in one run from which a run asks first (a batch of 8 at 1024² is minutes on most GPUs). */
export const LARGE_BATCH = 8;

/** The user said no: nothing was done, and the model is told so by the AI SDK's denied part. */
export class Denied extends ToolError {
  constructor(action: string) {
    super(`The user denied this: ${action} Nothing was changed.`, { denied: true });
  }
}

/** Asks, when there is someone to ask; throws Denied on a no. */
export async function ask(approve: Approve | undefined, request: ApprovalRequest): Promise<void> {
  if (approve && !(await approve(request))) throw new Denied(request.action);
}

/** What a run of `prompt` should be asked about: paid API nodes, or a large batch; null: nothing. */
export function runApproval(prompt: ComfyPrompt["output"], lg: LiteGraphGlobal, ref: (id: string) => string): ApprovalRequest | null {
  const label = (id: string) => `${prompt[id]?.class_type ?? "node"}#${ref(id)}`; // (as nodeLabel says it)
  const paid: string[] = [];
  let batch = 0;
  const batches: string[] = [];
  for (const [id, node] of Object.entries(prompt)) {
    if (lg.registered_node_types[node.class_type]?.nodeData?.api_node) paid.push(label(id));
    const size = node.inputs?.batch_size;
    if (typeof size === "number" && size > 1) {
      batch = Math.max(batch, size);
      batches.push(`${label(id)} batch_size ${size}`);
    }
  }
  if (paid.length) {
    return {
      kind: "paid-run",
      action: `Run the workflow: it uses ${paid.length === 1 ? "a paid API node" : `${paid.length} paid API nodes`}, charged to your ComfyUI account.`,
      nodes: paid,
      cost: "charged in ComfyUI credits per node run (the node's price badge shows how much)",
    };
  }
  if (batch >= LARGE_BATCH) {
    return { kind: "large-batch", action: `Run a batch of ${batch} images.`, nodes: batches };
  }
  return null;
}
