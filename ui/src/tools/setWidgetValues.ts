// setWidgetValues: sets widget values on one node after checking all of them (all or nothing).
import { nodeLabel, publicId, recordEdit, requireNodes, ToolError, type ToolContext, type ToolResult } from "./context";
import { applyWidgetChanges, planWidgetValues } from "./widgets";

export interface SetWidgetValuesArgs {
  nodeId: number;
  values: Record<string, unknown>;
}

export async function setWidgetValues(ctx: ToolContext, args: SetWidgetValuesArgs): Promise<ToolResult> {
  const { app } = ctx;
  const node = requireNodes(app, [args.nodeId], "nothing was changed")[0]!;
  const plan = planWidgetValues(node, args.values);
  if (!plan.ok) throw new ToolError(`Nothing was changed on ${nodeLabel(node)}: ${plan.errors.join(" ")}`);
  const notes = [...plan.notes];
  await recordEdit(app, () => {
    notes.push(...applyWidgetChanges(app, node, plan.changes));
  });
  const values: Record<string, unknown> = {};
  for (const { widget } of plan.changes) values[widget.name] = widget.value;
  return { ok: true, nodeId: publicId(node.id), values, ...(notes.length ? { notes } : {}) };
}
