// removeNodes: removes nodes (at any depth) and every link touching them, all or nothing.
import { ask } from "./approvals";
import { nodeLabel, recordEdit, ToolError, type NodeId, type ToolContext, type ToolResult } from "./context";
import { editedGraph, graphName, nodeRef, requireNodes, type Found, type GraphRef } from "./graphs";
import { LinkIndex } from "./links";

export interface RemoveNodesArgs {
  nodeIds: NodeId[];
}

export async function removeNodes(ctx: ToolContext, args: RemoveNodesArgs): Promise<ToolResult> {
  const { app } = ctx;
  const found = requireNodes(app, [...new Set(args.nodeIds.map(String))], "nothing was removed");
  const nodes = found.filter((f, i) => found.findIndex((g) => g.node === f.node) === i); // 5 and "5" are one node
  const locked = nodes.filter(({ node: n }) => n.ignore_remove || n.removable === false || n.block_delete);
  if (locked.length) {
    throw new ToolError(`${locked.map((f) => nodeLabel(f.node)).join(", ")} cannot be removed (locked against deletion); nothing was removed.`);
  }
  const labels = nodes.map((f) => nodeLabel(f.node));
  const action = `Remove ${nodes.length === 1 ? "a node" : `${nodes.length} nodes`} from the workflow, with the links that touch ${nodes.length === 1 ? "it" : "them"}.`;
  await ask(ctx.approve, { kind: "graph-edit", action, nodes: labels });
  const graphs = new Map<GraphRef["graph"], GraphRef>(nodes.map((f) => [f.ref.graph, f.ref]));
  const linkIds = new Set<unknown>();
  for (const ref of graphs.values()) {
    const index = new LinkIndex(ref.graph);
    for (const f of nodes) if (f.ref.graph === ref.graph) for (const link of index.touching(f.node)) linkIds.add(link.id);
  }
  await recordEdit(app, () => {
    for (const { node, ref } of nodes) ref.graph.remove(node);
  });
  const stillThere = (f: Found) => f.ref.graph.getNodeById(f.node.id) === f.node;
  const left = nodes.filter(stillThere);
  const gone = nodes.filter((f) => !stillThere(f)).map((f) => nodeRef(f.ref, f.node));
  if (left.length) {
    throw new ToolError(
      `ComfyUI did not remove ${left.map((f) => nodeLabel(f.node)).join(", ")}; ${gone.length ? `removed: ${gone.join(", ")}` : "nothing was removed"}.`,
      { removed: gone },
    );
  }
  const notes = [...graphs.values()].flatMap((ref) => editedGraph(app, ref, "nodes were removed").notes);
  const names = [...graphs.values()].map(graphName);
  return {
    ok: true,
    removed: gone,
    linksRemoved: linkIds.size,
    graph: names.length === 1 ? names[0] : names,
    ...(notes.length ? { notes } : {}),
  };
}
