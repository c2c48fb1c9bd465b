// ComfyUI's prompt validation (execution.validate_prompt), for the playground's simulated queue:
// the same error types, messages and response shape as POST /api/prompt on a real ComfyUI.
import type { NodeDef } from "../host/comfy";
import { comboChoices, orderedInputs, slotTypeOf, type InputSpec } from "../litegraph/defs";

export interface PromptNode {
  class_type?: string;
  inputs?: Record<string, unknown>;
  _meta?: { title?: string };
}
export type ApiPrompt = Record<string, PromptNode>;

export interface ValidationError {
  type: string;
  message: string;
  details: string;
  extra_info: Record<string, unknown>;
}

export interface NodeErrors {
  errors: ValidationError[];
  dependent_outputs: string[];
  class_type: string;
}

export type Validation =
  | { ok: true; outputs: string[]; nodeErrors: Record<string, NodeErrors> }
  | { ok: false; error: ValidationError; nodeErrors: Record<string, NodeErrors> };

function fail(type: string, message: string, details = "", extra_info: Record<string, unknown> = {}): ValidationError {
  return { type, message, details, extra_info };
}

/** ComfyUI's validate_node_input: "*" matches anything; "A,B" accepts either. */
function typesMatch(received: string, expected: string): boolean {
  if (received === "*" || expected === "*" || received === expected) return true;
  const want = new Set(expected.split(","));
  return received.split(",").every((t) => want.has(t));
}

function checkValue(name: string, spec: InputSpec, value: unknown): ValidationError | null {
  const options = (spec[1] ?? {}) as Record<string, unknown>;
  const extra = { input_name: name, input_config: spec, received_value: value };
  const combo = comboChoices(spec);
  if (combo) {
    // Standalone there are no model files: an empty list (no checkpoints installed) is accepted,
    // or the playground could never run its own default workflow.
    if (combo.length === 0 || combo.includes(value)) return null;
    const long = combo.length > 20;
    const list = long ? `(list of length ${combo.length})` : `[${combo.map((c) => `'${String(c)}'`).join(", ")}]`;
    return fail("value_not_in_list", "Value not in list", `${name}: '${String(value)}' not in ${list}`, {
      ...extra,
      input_config: long ? null : spec,
    });
  }
  const type = spec[0];
  if (type === "INT" || type === "FLOAT") {
    const number = typeof value === "number" ? value : Number(value);
    if (value === null || value === "" || Number.isNaN(number) || (type === "INT" && !Number.isInteger(number))) {
      return fail("invalid_input_type", `Failed to convert an input value to a ${type} value`, `${name}, ${String(value)}`, extra);
    }
    if (typeof options.min === "number" && number < options.min) {
      return fail("value_smaller_than_min", `Value ${number} smaller than min of ${options.min}`, name, extra);
    }
    if (typeof options.max === "number" && number > options.max) {
      return fail("value_bigger_than_max", `Value ${number} bigger than max of ${options.max}`, name, extra);
    }
  }
  return null;
}

export function validatePrompt(prompt: ApiPrompt, defs: Record<string, NodeDef>): Validation {
  for (const [id, node] of Object.entries(prompt)) {
    if (!node || typeof node.class_type !== "string") {
      const error = fail("invalid_prompt", "Cannot execute because a node is missing the class_type property.", `Node ID '#${id}'`);
      return { ok: false, error, nodeErrors: {} };
    }
    if (!defs[node.class_type]) {
      const error = fail(
        "missing_node_type",
        `Node '${node._meta?.title ?? node.class_type}' not found. The custom node may not be installed.`,
        `Node ID '#${id}'`,
        { node_id: id, class_type: node.class_type, node_title: node._meta?.title ?? node.class_type },
      );
      return { ok: false, error, nodeErrors: {} };
    }
  }
  const outputs = Object.keys(prompt).filter((id) => defs[prompt[id]!.class_type!]?.output_node);
  if (outputs.length === 0) {
    return { ok: false, error: fail("prompt_no_outputs", "Prompt has no outputs"), nodeErrors: {} };
  }

  const verdicts = new Map<string, boolean>();
  const nodeErrors: Record<string, NodeErrors> = {};
  const validateNode = (id: string, trail: Set<string>): boolean => {
    const known = verdicts.get(id);
    if (known !== undefined) return known;
    if (trail.has(id)) return true; // a cycle is reported where it closes
    trail.add(id);
    const node = prompt[id]!;
    const def = defs[node.class_type!]!;
    const inputs = node.inputs ?? {};
    const errors: ValidationError[] = [];
    let valid = true;
    for (const { name, spec, required } of orderedInputs(def)) {
      const value = inputs[name];
      if (value === undefined) {
        if (required) errors.push(fail("required_input_missing", "Required input is missing", name, { input_name: name }));
        continue;
      }
      if (Array.isArray(value)) {
        const [from, slot] = value as [unknown, unknown];
        const source = typeof from === "string" || typeof from === "number" ? prompt[String(from)] : undefined;
        if (value.length !== 2 || !source || typeof slot !== "number") {
          errors.push(fail("bad_linked_input", "Bad linked input, must be a length-2 list of [node_id, slot_index]", name, {
            input_name: name,
            input_config: spec,
            received_value: value,
          }));
          continue;
        }
        const received = defs[source.class_type!]?.output?.[slot] ?? "*";
        const expected = slotTypeOf(spec[0]);
        if (!typesMatch(received, expected)) {
          errors.push(fail("return_type_mismatch", "Return type mismatch between linked nodes",
            `${name}, received_type(${received}) mismatch input_type(${expected})`,
            { input_name: name, input_config: spec, received_type: received, linked_node: value }));
          continue;
        }
        if (!validateNode(String(from), trail)) valid = false;
        continue;
      }
      const error = checkValue(name, spec, value);
      if (error) errors.push(error);
    }
    trail.delete(id);
    if (errors.length > 0) {
      nodeErrors[id] = { errors, dependent_outputs: [], class_type: node.class_type! };
      valid = false;
    }
    verdicts.set(id, valid);
    return valid;
  };

  const good: string[] = [];
  const failedOutputs: string[] = [];
  for (const id of outputs) (validateNode(id, new Set()) ? good : failedOutputs).push(id);
  // Every failing node names the outputs that depend on it.
  const dependsOn = (output: string, target: string, seen = new Set<string>()): boolean => {
    if (output === target) return true;
    if (seen.has(output)) return false;
    seen.add(output);
    return Object.values(prompt[output]?.inputs ?? {}).some(
      (v) => Array.isArray(v) && v.length === 2 && prompt[String(v[0])] !== undefined && dependsOn(String(v[0]), target, seen),
    );
  };
  for (const [id, entry] of Object.entries(nodeErrors)) {
    entry.dependent_outputs = failedOutputs.filter((output) => dependsOn(output, id));
  }
  if (good.length === 0) {
    const details = Object.values(nodeErrors)
      .map((e) => `${e.class_type}:\n${e.errors.map((r) => `- ${r.message}: ${r.details}`).join("\n")}`)
      .join("\n");
    return { ok: false, error: fail("prompt_outputs_failed_validation", "Prompt outputs failed validation", details), nodeErrors };
  }
  return { ok: true, outputs: good, nodeErrors };
}
