// Pure helpers over ComfyUI node definitions (/api/object_info entries), shared by the node
// registration (register.ts) and the graph tools. No LiteGraph at run time: safe to bundle.
//
// The rules follow ComfyUI's frontend (widget constructors in ComfyUI_frontend 1.2x):
// INT default ?? 0, min ?? 0, max ?? 2048, rounded to `step` (offset by min % step);
// FLOAT default ?? 0, step ?? 0.5, rounded to `round` or to the step's decimals;
// COMBO default || first choice; seed-like INTs get a "control_after_generate" combo.
import type { NodeDef } from "../host/comfy";

export type InputOptions = Record<string, unknown>;
/** One input spec: `[type, options?]`; type is a name ("INT", "MODEL") or a list of choices. */
export type InputSpec = readonly [unknown, InputOptions?];
export type WidgetKind = "INT" | "FLOAT" | "STRING" | "BOOLEAN" | "COMBO";

export interface DefInput {
  name: string;
  spec: InputSpec;
  required: boolean;
}

/** The combo widget ComfyUI adds after seed-like INT widgets. */
export const CONTROL_WIDGET = "control_after_generate";
export const CONTROL_VALUES: readonly string[] = ["fixed", "increment", "decrement", "randomize"];

const PRIMITIVE_KINDS = new Set(["INT", "FLOAT", "STRING", "BOOLEAN"]);

/** The definition ComfyUI attached to a node's class (`static nodeData`), if any. */
export function nodeDefOf(node: object | null | undefined): NodeDef | undefined {
  const ctor = (node as { constructor?: { nodeData?: NodeDef } } | null | undefined)?.constructor;
  const def = ctor?.nodeData;
  return def && typeof def === "object" && def.input ? def : undefined;
}

export function inputOptions(spec: InputSpec | undefined): InputOptions {
  const options = spec?.[1];
  return options && typeof options === "object" ? options : {};
}

/** Required then optional inputs, each section in `input_order` (then any left out of it). */
export function orderedInputs(def: NodeDef): DefInput[] {
  const result: DefInput[] = [];
  for (const section of ["required", "optional"] as const) {
    const specs = def.input?.[section];
    if (!specs) continue;
    const order = (def.input_order?.[section] ?? []).filter((name) => name in specs);
    const names = [...order, ...Object.keys(specs).filter((name) => !order.includes(name))];
    for (const name of names) {
      const spec = specs[name];
      if (Array.isArray(spec)) result.push({ name, spec, required: section === "required" });
    }
  }
  return result;
}

export function findInput(def: NodeDef | undefined, name: string): DefInput | undefined {
  return def ? orderedInputs(def).find((input) => input.name === name) : undefined;
}

/** The choices of a combo input (`[[...], {}]` or `["COMBO", {options: [...]}]`), else null. */
export function comboChoices(spec: InputSpec | undefined): unknown[] | null {
  const type = spec?.[0];
  if (Array.isArray(type)) return type;
  if (type !== "COMBO") return null;
  const options = inputOptions(spec).options;
  return Array.isArray(options) ? options : [];
}

/** The widget an input becomes, or null when it is a link input (a type, or `forceInput`). */
export function widgetKind(spec: InputSpec | undefined): WidgetKind | null {
  if (!spec || inputOptions(spec).forceInput) return null;
  if (comboChoices(spec)) return "COMBO";
  const type = spec[0];
  return typeof type === "string" && PRIMITIVE_KINDS.has(type) ? (type as WidgetKind) : null;
}

/** The slot type of an input or output type name: a list of choices is "COMBO". */
export function slotTypeOf(type: unknown): string {
  if (Array.isArray(type)) return "COMBO";
  return typeof type === "string" && type !== "" ? type : "*";
}

/** The default mode of the control widget after this INT input, or null when it has none. */
export function controlDefault(name: string, spec: InputSpec): string | null {
  if (widgetKind(spec) !== "INT") return null;
  const flag = inputOptions(spec).control_after_generate ?? (name === "seed" || name === "noise_seed");
  if (!flag) return null;
  return typeof flag === "string" ? flag : "randomize";
}

export interface NumberRule {
  min: number;
  max: number;
  step: number;
  /** FLOAT only: values are rounded to a multiple of this (0: no rounding). */
  round: number;
}

/** Range, step and rounding of an INT or FLOAT input, as ComfyUI's number widgets apply them. */
export function numberRule(kind: "INT" | "FLOAT", spec: InputSpec): NumberRule {
  const o = inputOptions(spec);
  const num = (value: unknown, fallback: number) =>
    typeof value === "number" && Number.isFinite(value) ? value : fallback;
  const min = num(o.min, 0);
  const max = num(o.max, 2048);
  if (kind === "INT") return { min, max, step: num(o.step, 1) || 1, round: 0 };
  const step = num(o.step, 0.5) || 0.5;
  const precision = Math.max(0, -Math.floor(Math.log10(step)));
  const round = typeof o.round === "number" && o.round > 0 ? o.round : precision ? 10 ** -precision : 0;
  return { min, max, step, round };
}

/** The value a fresh widget of this input holds. */
export function widgetDefault(kind: WidgetKind, spec: InputSpec): unknown {
  const o = inputOptions(spec);
  switch (kind) {
    case "INT":
    case "FLOAT":
      return typeof o.default === "number" ? o.default : 0;
    case "STRING":
      return typeof o.default === "string" ? o.default : "";
    case "BOOLEAN":
      return typeof o.default === "boolean" ? o.default : false;
    case "COMBO":
      return o.default || comboChoices(spec)?.[0];
  }
}

/** Output slots of a definition: name (output_name, else type) and type. */
export function defOutputs(def: NodeDef): { name: string; type: string; isList: boolean }[] {
  return (def.output ?? []).map((type, i) => ({
    name: def.output_name?.[i] || slotTypeOf(type),
    type: slotTypeOf(type),
    isList: def.output_is_list?.[i] === true,
  }));
}
