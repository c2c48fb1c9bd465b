// Loading an API-format workflow (node id -> {class_type, inputs}): every node, link and widget
// value is checked first (nothing changes on an error), then the graph is rebuilt in place,
// laid out left to right, as one undo step.
import { rootGraph, type LGraphNode } from "../host/comfy";
import { publicId, recordEdit, ToolError, type ToolContext } from "./context";
import { layoutColumns, titleHeight, type Point } from "./layout";
import { describeSlots, resolveInput, typeText, typesMatch } from "./slots";
import { applyWidgetChanges, planWidgetValues, valueWidgets, type WidgetChange } from "./widgets";

export interface ApiNode {
  class_type: string;
  inputs?: Record<string, unknown>;
  _meta?: { title?: unknown };
}

interface Planned {
  key: string;
  node: LGraphNode;
  entry: ApiNode;
  changes: WidgetChange[];
  pos: Point;
}

interface PlannedLink {
  from: Planned;
  out: number;
  to: Planned;
  inp: number;
}

export interface ApiPlan {
  nodes: Planned[];
  links: PlannedLink[];
  notes: string[];
}

function isLinkRef(value: unknown): value is [string | number, number] {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    (typeof value[0] === "string" || typeof value[0] === "number") &&
    Number.isInteger(value[1])
  );
}

function assignIds(keys: string[]): Map<string, number> {
  const ids = new Map<string, number>();
  const taken = new Set<number>();
  for (const key of keys) {
    const n = Number(key);
    if (/^\d+$/.test(key) && n > 0 && Number.isSafeInteger(n) && !taken.has(n)) {
      ids.set(key, n);
      taken.add(n);
    }
  }
  let next = Math.max(0, ...taken) + 1;
  for (const key of keys) if (!ids.has(key)) ids.set(key, next++);
  return ids;
}

/** Checks the whole workflow against the registered types; throws a ToolError listing every problem. */
export function planApiWorkflow(ctx: ToolContext, entries: [string, ApiNode][]): ApiPlan {
  const { lg } = ctx;
  const errors: string[] = [];
  const notes: string[] = [];
  const ids = assignIds(entries.map(([key]) => key));
  const planned: Planned[] = [];
  for (const [key, entry] of entries) {
    const node = lg.createNode(entry.class_type);
    if (!node) {
      errors.push(`node "${key}": LiteGraph could not create a ${entry.class_type}`);
      continue;
    }
    node.id = ids.get(key)!;
    const title = entry._meta?.title;
    if (typeof title === "string" && title && title !== node.title) node.title = title;
    planned.push({ key, node, entry, changes: [], pos: [0, 0] });
  }
  const byKey = new Map(planned.map((p) => [p.key, p]));
  const links: PlannedLink[] = [];
  for (const p of planned) {
    const type = p.entry.class_type;
    const values: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(p.entry.inputs ?? {})) {
      const where = `node "${p.key}" (${type}) input '${name}'`;
      if (isLinkRef(value)) {
        const from = byKey.get(String(value[0]));
        const out = value[1];
        const inp = p.node.inputs.findIndex((i) => i.name === name);
        if (!from) errors.push(`${where} links to node "${value[0]}", which is not in the workflow`);
        else if (out < 0 || out >= from.node.outputs.length) {
          errors.push(`${where} links to output ${out} of node "${from.key}" (${from.entry.class_type}), whose outputs are ${describeSlots(from.node.outputs)}`);
        } else if (inp < 0) {
          const lookup = resolveInput(p.node, name);
          errors.push(`${where}: ${"error" in lookup ? lookup.error : "no such input"}`);
        } else if (!typesMatch(from.node.outputs[out]!.type, p.node.inputs[inp]!.type)) {
          errors.push(`${where} takes ${typeText(p.node.inputs[inp]!.type)}, but output ${out} of node "${from.key}" (${from.entry.class_type}) is ${typeText(from.node.outputs[out]!.type)}`);
        } else links.push({ from, out, to: p, inp });
      } else if (valueWidgets(p.node).some((w) => w.name === name)) {
        values[name] = value;
      } else if (p.node.inputs.some((i) => i.name === name && !i.widget)) {
        errors.push(`${where} needs a link [nodeId, outputIndex], got ${JSON.stringify(value)?.slice(0, 60)}`);
      } else {
        notes.push(`ignored ${where}: ${type} has no such widget or input`);
      }
    }
    const plan = planWidgetValues(p.node, values);
    if (plan.ok) {
      p.changes = plan.changes;
      notes.push(...plan.notes.map((n) => `node "${p.key}": ${n}`));
    } else errors.push(...plan.errors.map((e) => `node "${p.key}" (${type}): ${e}`));
  }
  if (errors.length) {
    const shown = errors.slice(0, 20).map((e, i) => `${i + 1}) ${e}.`.replace(/\.\.$/, "."));
    const more = errors.length > 20 ? ` … and ${errors.length - 20} more.` : "";
    throw new ToolError(`Nothing was loaded. Fix ${errors.length === 1 ? "this" : `these ${errors.length} problems`} and call loadWorkflow again: ${shown.join(" ")}${more}`);
  }
  const positions = layoutColumns(
    planned.map((p) => ({
      key: p.key,
      size: [p.node.size[0], p.node.size[1]] as Point,
      sources: links.filter((l) => l.to === p).map((l) => l.from.key),
    })),
    titleHeight(lg),
  );
  for (const p of planned) p.pos = positions.get(p.key) ?? [0, 0];
  return { nodes: planned, links, notes };
}

/** Replaces the graph with the planned nodes and links (one undo step). Returns warnings. */
export async function buildApiWorkflow(ctx: ToolContext, plan: ApiPlan): Promise<string[]> {
  const { app } = ctx;
  const warnings = [...plan.notes];
  await recordEdit(app, () => {
    const graph = rootGraph(app);
    graph.clear();
    for (const p of plan.nodes) {
      p.node.pos = p.pos;
      graph.add(p.node);
    }
    for (const p of plan.nodes) warnings.push(...applyWidgetChanges(app, p.node, p.changes));
    for (const l of plan.links) {
      if (!l.from.node.connect(l.out, l.to.node, l.inp)) {
        warnings.push(`the link from node ${publicId(l.from.node.id)} output ${l.out} into node ${publicId(l.to.node.id)} '${l.to.node.inputs[l.inp]?.name}' was refused`);
      }
    }
  });
  return warnings;
}
