// setWidgetValues: sets widget values on one node (at any depth) after checking all of them (all or nothing).
import { nodeLabel, recordEdit, ToolError, type NodeId, type ToolContext, type ToolResult } from "./context";
import { editedGraph, nodeRef, requireNodes } from "./graphs";
import { applyWidgetChanges, planWidgetValues } from "./widgets";

export interface SetWidgetValuesArgs {
  nodeId: NodeId;
  values: Record<string, unknown>;
}

export async function setWidgetValues(ctx: ToolContext, args: SetWidgetValuesArgs): Promise<ToolResult> {
  const { app } = ctx;
  const { node, ref } = requireNodes(app, [args.nodeId], "nothing was changed")[0]!;
  const plan = planWidgetValues(node, args.values);
  if (!plan.ok) throw new ToolError(`Nothing was changed on ${nodeLabel(node)}: ${plan.errors.join(" ")}`);
  const notes = [...plan.notes];
  await recordEdit(app, () => {
    notes.push(...applyWidgetChanges(app, node, plan.changes));
  });
  const where = editedGraph(app, ref, `${nodeLabel(node)} was changed`);
  const values: Record<string, unknown> = {};
  for (const { widget } of plan.changes) values[widget.name] = widget.value;
  const all = [...where.notes, ...notes];
  return { ok: true, nodeId: nodeRef(ref, node), graph: where.graph, values, ...(all.length ? { notes: all } : {}) };
}
