// The panel tools' argument schemas (generated from the Python registry into
// schemas.generated.ts by scripts/gen_panel_types.py) and a small validator for them. The
// model's arguments are checked here before a tool runs, so a bad call gets a precise error.

export interface Schema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  minProperties?: number;
  minimum?: number;
  maximum?: number;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matches(type: string, value: unknown): boolean {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return typeof value === type;
  }
}

/** Lenient reading of numbers and booleans sent as strings ("5", "true") by small models. */
function coerce(types: string[], value: unknown): unknown {
  if (typeof value !== "string" || types.includes("string")) return value;
  const text = value.trim();
  if (types.includes("integer") && /^-?\d+$/.test(text)) return Number(text);
  if (types.includes("number") && text !== "" && Number.isFinite(Number(text))) return Number(text);
  if (types.includes("boolean") && (text === "true" || text === "false")) return text === "true";
  return value;
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function check(schema: Schema, input: unknown, path: string, errors: string[]): unknown {
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  const value = coerce(types, input);
  const where = path || "arguments";
  if (types.length && !types.some((t) => matches(t, value))) {
    errors.push(`'${where}' must be ${types.join(" or ")}, got ${typeName(value)} ${show(value)}`);
    return value;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    errors.push(`'${where}' must be one of ${schema.enum.map(show).join(", ")}, got ${show(value)}`);
  }
  if (typeof value === "string" && schema.minLength !== undefined && value.length < schema.minLength) {
    errors.push(`'${where}' must not be empty`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`'${where}' must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`'${where}' must be at most ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      errors.push(`'${where}' must have at least ${schema.minItems} item(s)`);
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      errors.push(`'${where}' must have at most ${schema.maxItems} items`);
    }
    return schema.items ? value.map((item, i) => check(schema.items!, item, `${where}[${i}]`, errors)) : value;
  }
  if (matches("object", value) && (schema.properties || schema.additionalProperties !== undefined)) {
    return checkObject(schema, value as Record<string, unknown>, path, errors);
  }
  return value;
}

function checkObject(schema: Schema, value: Record<string, unknown>, path: string, errors: string[]): unknown {
  const out: Record<string, unknown> = {};
  const props = schema.properties ?? {};
  const prefix = path ? `${path}.` : "";
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) errors.push(`'${prefix}${name}' is required`);
  }
  if (schema.minProperties !== undefined && Object.keys(value).length < schema.minProperties) {
    errors.push(`'${path}' must have at least ${schema.minProperties} entr${schema.minProperties === 1 ? "y" : "ies"}`);
  }
  for (const [name, item] of Object.entries(value)) {
    const sub = props[name] ?? (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
    if (sub) out[name] = check(sub, item, prefix + name, errors);
    else if (schema.additionalProperties === false) {
      errors.push(`unknown argument '${prefix}${name}' (allowed: ${Object.keys(props).join(", ") || "none"})`);
    } else out[name] = item;
  }
  for (const [name, sub] of Object.entries(props)) {
    if (out[name] === undefined && sub.default !== undefined) out[name] = sub.default;
  }
  return out;
}

export type Validated = { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };

/**
 * Checks a tool's arguments against its schema: types, required, enum, ranges, unknown names.
 * Accepts the arguments as an object or as a JSON string; missing arguments count as `{}`.
 * Returns the arguments with defaults filled in and numeric strings read as numbers.
 */
export function validateArgs(schema: Schema, input: unknown): Validated {
  let value: unknown = input ?? {};
  if (typeof value === "string") {
    try {
      value = value.trim() === "" ? {} : (JSON.parse(value) as unknown);
    } catch {
      return { ok: false, errors: ["the arguments are not valid JSON"] };
    }
  }
  const errors: string[] = [];
  const checked = check(schema, value, "", errors);
  return errors.length ? { ok: false, errors } : { ok: true, value: checked as Record<string, unknown> };
}
