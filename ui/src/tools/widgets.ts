// Widget values: the rule each widget follows (from the node definition, else from the widget
// itself), checking a proposed value against it, planning a set of changes all-or-nothing, and
// applying them the way the canvas does (value, then the widget's callback).
import type { ComfyApp, LGraph, LGraphNode } from "../host/comfy";
import {
  CONTROL_VALUES,
  CONTROL_WIDGET,
  comboChoices,
  controlDefault,
  findInput,
  nodeDefOf,
  numberRule,
  orderedInputs,
  widgetDefault,
  widgetKind,
  type WidgetKind,
} from "../litegraph/defs";
import { closest, errorMessage, listText, nodeLabel } from "./context";
import { LinkIndex } from "./links";
import { typeText } from "./slots";

export type Widget = NonNullable<LGraphNode["widgets"]>[number];

export interface WidgetRule {
  kind: WidgetKind | "ANY";
  choices?: unknown[];
  min?: number;
  max?: number;
  step?: number;
  round?: number;
  /** The definition's default; undefined when unknown (no definition for this widget). */
  default?: unknown;
}

type Checked = { value: unknown; note?: string } | { error: string };

/** The widgets holding a value the user can set (no buttons, none that are never saved). */
export function valueWidgets(node: LGraphNode): Widget[] {
  return (node.widgets ?? []).filter((w) => w.type !== "button" && w.serialize !== false && !!w.name);
}

function liveChoices(widget: Widget, node: LGraphNode): unknown[] | null {
  const values = (widget.options as { values?: unknown } | undefined)?.values;
  if (Array.isArray(values)) return values;
  if (typeof values === "function") {
    try {
      const list = (values as (w: Widget, n: LGraphNode) => unknown)(widget, node);
      return Array.isArray(list) ? list : null;
    } catch {
      return null;
    }
  }
  return values && typeof values === "object" ? Object.keys(values) : null;
}

/** How a widget's value is checked: its definition input when there is one, else its options. */
export function widgetRule(node: LGraphNode, widget: Widget): WidgetRule {
  const def = nodeDefOf(node);
  const input = findInput(def, widget.name);
  const kind = input ? widgetKind(input.spec) : null;
  const live = liveChoices(widget, node);
  if (input && kind) {
    const fallback = widgetDefault(kind, input.spec);
    if (kind === "COMBO") return { kind, choices: live ?? comboChoices(input.spec) ?? [], default: fallback };
    if (kind === "INT" || kind === "FLOAT") return { kind, ...numberRule(kind, input.spec), default: fallback };
    return { kind, default: fallback };
  }
  if (widget.name === CONTROL_WIDGET && def) {
    const seed = orderedInputs(def).find((i) => controlDefault(i.name, i.spec));
    if (seed) return { kind: "COMBO", choices: live ?? [...CONTROL_VALUES], default: controlDefault(seed.name, seed.spec) };
  }
  const options = (widget.options ?? {}) as { min?: number; max?: number; step2?: number; round?: number; precision?: number };
  switch (widget.type) {
    case "combo":
      return { kind: "COMBO", choices: live ?? [] };
    case "number":
    case "slider":
    case "knob": {
      const int = options.precision === 0;
      return {
        kind: int ? "INT" : "FLOAT",
        min: options.min ?? -Infinity,
        max: options.max ?? Infinity,
        step: int ? options.step2 || 1 : options.step2 ?? 0,
        round: int ? 0 : options.round ?? 0,
      };
    }
    case "toggle":
      return { kind: "BOOLEAN" };
    case "text":
    case "string":
    case "customtext":
      return { kind: "STRING" };
    default:
      return { kind: "ANY" };
  }
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function checkCombo(choices: unknown[], name: string, raw: unknown): Checked {
  if (!choices.length) {
    // Nothing installed, or a remote list not loaded yet: set it unchecked; ComfyUI checks it on queue.
    if (typeof raw !== "string" && typeof raw !== "number") return { error: `'${name}' must be a name, got ${show(raw)}.` };
    return {
      value: raw,
      note: `'${name}' lists no choices (nothing installed, or not loaded yet), so ${show(raw)} was set unchecked; ComfyUI checks it when the workflow is queued`,
    };
  }
  const exact = choices.find((c) => c === raw) ?? choices.find((c) => String(c) === String(raw));
  if (exact !== undefined) return { value: exact };
  const lower = String(raw).toLowerCase();
  const folded = choices.filter((c) => String(c).toLowerCase() === lower);
  if (folded.length === 1) return { value: folded[0], note: `'${name}': used ${show(folded[0])} for ${show(raw)}` };
  const names = choices.map(String);
  const near = closest(String(raw), names, 3);
  return {
    error:
      `'${name}' can't be ${show(raw)}: it must be one of ${choices.length} choices` +
      `${near.length ? ` (closest: ${near.map(show).join(", ")})` : ""}: ${listText(names, 30)}.`,
  };
}

function numberOf(raw: unknown): number {
  if (typeof raw === "number") return raw;
  return typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
}

function checkNumber(rule: WidgetRule, name: string, raw: unknown): Checked {
  const min = rule.min ?? -Infinity;
  const max = rule.max ?? Infinity;
  const n = numberOf(raw);
  const range = `between ${min} and ${max}`;
  if (!Number.isFinite(n)) return { error: `'${name}' must be a number ${range}, got ${show(raw)}.` };
  if (n < min || n > max) return { error: `'${name}' must be ${range}, got ${n}.` };
  let value = n;
  if (rule.kind === "INT") {
    const step = rule.step || 1;
    const offset = Number.isFinite(min) ? min % step : 0; // ComfyUI rounds to steps counted from min
    value = Math.round((n - offset) / step) * step + offset;
    if (value > max) value -= step;
    if (value < min) value += step;
    if (value !== n) return { value, note: `'${name}': ${n} rounded to ${value} (integer, step ${step})` };
  } else if (rule.round) {
    const precision = Math.max(0, -Math.floor(Math.log10(rule.round)));
    value = Math.min(max, Math.max(min, Number((Math.round(n / rule.round) * rule.round).toFixed(precision))));
    if (Math.abs(value - n) > 1e-12) return { value, note: `'${name}': ${n} rounded to ${value}` };
  }
  return { value };
}

/** Checks one value against a widget's rule; numbers and booleans may come as strings. */
export function checkValue(rule: WidgetRule, name: string, raw: unknown): Checked {
  switch (rule.kind) {
    case "COMBO":
      return checkCombo(rule.choices ?? [], name, raw);
    case "INT":
    case "FLOAT":
      return checkNumber(rule, name, raw);
    case "BOOLEAN": {
      if (typeof raw === "boolean") return { value: raw };
      const text = typeof raw === "string" ? raw.trim().toLowerCase() : "";
      if (text === "true" || text === "false") return { value: text === "true" };
      return { error: `'${name}' must be true or false, got ${show(raw)}.` };
    }
    case "STRING":
      if (typeof raw === "string") return { value: raw };
      if (typeof raw === "number") return { value: String(raw) };
      return { error: `'${name}' must be text, got ${show(raw)}.` };
    default:
      return ["string", "number", "boolean"].includes(typeof raw) ? { value: raw } : { error: `'${name}' must be a string, number or boolean.` };
  }
}

function unknownWidget(node: LGraphNode, name: string, widgets: Widget[]): string {
  const label = nodeLabel(node);
  const input = node.inputs?.find((i) => !i.widget && i.name.toLowerCase() === name.toLowerCase());
  if (input) return `'${input.name}' is an input of ${label} (${typeText(input.type)}), not a widget: link it with connectNodes.`;
  const names = widgets.map((w) => w.name);
  if (!names.length) return `${label} has no widgets, so it has no '${name}'.`;
  const near = closest(name, names, 3);
  return `${label} has no widget '${name}'${near.length ? ` (did you mean ${near.join(" or ")}?)` : ""}. Its widgets: ${names.join(", ")}.`;
}

export interface WidgetChange {
  widget: Widget;
  value: unknown;
}

export type WidgetPlan = { ok: true; changes: WidgetChange[]; notes: string[] } | { ok: false; errors: string[] };

/** Checks every value first; nothing is applied unless all are valid. */
export function planWidgetValues(node: LGraphNode, values: Record<string, unknown>): WidgetPlan {
  const widgets = valueWidgets(node);
  const errors: string[] = [];
  const changes: WidgetChange[] = [];
  const notes: string[] = [];
  for (const [name, raw] of Object.entries(values)) {
    const folded = widgets.filter((w) => w.name.toLowerCase() === name.toLowerCase());
    const widget = widgets.find((w) => w.name === name) ?? (folded.length === 1 ? folded[0] : undefined);
    if (!widget) {
      errors.push(unknownWidget(node, name, widgets));
      continue;
    }
    const checked = checkValue(widgetRule(node, widget), widget.name, raw);
    if ("error" in checked) {
      errors.push(checked.error);
      continue;
    }
    changes.push({ widget, value: checked.value });
    if (checked.note) notes.push(checked.note);
    const socket = node.inputs?.findIndex((i) => i.widget?.name === widget.name) ?? -1;
    if (socket >= 0 && new LinkIndex(node.graph as LGraph | null).into(node.id, socket)) notes.push(`'${widget.name}' is linked, so the linked value is used when the workflow runs, not this one`);
  }
  return errors.length ? { ok: false, errors } : { ok: true, changes, notes };
}

/** Sets the values as the canvas would: value, widget callback, node.onWidgetChanged. */
export function applyWidgetChanges(app: ComfyApp, node: LGraphNode, changes: WidgetChange[]): string[] {
  const warnings: string[] = [];
  const canvas = app.canvas as { graph_mouse?: [number, number] } | undefined;
  for (const { widget, value } of changes) {
    const old = widget.value;
    widget.value = value as Widget["value"];
    try {
      widget.callback?.(widget.value, app.canvas, node, canvas?.graph_mouse ?? [0, 0]);
      node.onWidgetChanged?.(widget.name, widget.value, old, widget);
    } catch (error) {
      warnings.push(`'${widget.name}' was set, but its change handler failed: ${errorMessage(error)}`);
    }
  }
  return warnings;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  return a === b;
}

/**
 * Widget values by name: "all", or only those that differ from the definition's default
 * ("changed"; widgets without a known default always count). Non-primitive values (previews,
 * custom objects) are left out; strings longer than `maxString` are shortened.
 */
export function widgetValues(node: LGraphNode, mode: "all" | "changed", maxString = Infinity): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const widget of valueWidgets(node)) {
    const value = widget.value;
    if (!["string", "number", "boolean"].includes(typeof value)) continue;
    if (mode === "changed") {
      const rule = widgetRule(node, widget);
      if (rule.default !== undefined && sameValue(value, rule.default)) continue;
    }
    out[widget.name] =
      typeof value === "string" && value.length > maxString
        ? `${value.slice(0, maxString)}… [${value.length - maxString} more characters; detail "full" shows all]`
        : value;
  }
  return out;
}
