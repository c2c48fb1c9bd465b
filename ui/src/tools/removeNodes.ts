// removeNodes: removes nodes and every link touching them, all or nothing.
import { nodeLabel, publicId, recordEdit, requireNodes, ToolError, type ToolContext, type ToolResult } from "./context";

export interface RemoveNodesArgs {
  nodeIds: number[];
}

export async function removeNodes(ctx: ToolContext, args: RemoveNodesArgs): Promise<ToolResult> {
  const { app } = ctx;
  const ids = [...new Set(args.nodeIds)];
  const nodes = requireNodes(app, ids, "nothing was removed");
  const locked = nodes.filter((n) => n.ignore_remove || n.removable === false || n.block_delete);
  if (locked.length) {
    throw new ToolError(`${locked.map(nodeLabel).join(", ")} cannot be removed (locked against deletion); nothing was removed.`);
  }
  const linkIds = new Set<unknown>();
  for (const node of nodes) {
    for (const input of node.inputs ?? []) if (input.link != null) linkIds.add(input.link);
    for (const output of node.outputs ?? []) for (const id of output.links ?? []) linkIds.add(id);
  }
  await recordEdit(app, () => {
    for (const node of nodes) app.graph.remove(node);
  });
  const left = nodes.filter((n) => app.graph.getNodeById(n.id));
  if (left.length) {
    const gone = nodes.filter((n) => !left.includes(n)).map((n) => publicId(n.id));
    throw new ToolError(
      `ComfyUI did not remove ${left.map(nodeLabel).join(", ")}; ${gone.length ? `removed: ${gone.join(", ")}` : "nothing was removed"}.`,
      { removed: gone },
    );
  }
  return { ok: true, removed: nodes.map((n) => publicId(n.id)), linksRemoved: linkIds.size };
}
