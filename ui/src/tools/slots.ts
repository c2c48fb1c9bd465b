// Slots: type compatibility (LiteGraph's rule), lookup by name or index, and descriptions.
import type { LGraphNode } from "../host/comfy";
import { nodeLabel } from "./context";

type Slot = { name: string; type: unknown; label?: string; localized_name?: string; widget?: { name: string } };

/** The type of a slot as text: "*" for LiteGraph's wildcards ("", 0, "*"). */
export function typeText(type: unknown): string {
  return type === "" || type === 0 || type === undefined || type === null || type === "*" ? "*" : String(type);
}

/**
 * Whether an output of type `from` may feed an input of type `to`, as LiteGraph decides it
 * (isValidConnection): "*" matches anything, names compare case-insensitively, and
 * comma-separated lists ("IMAGE,MASK") match when any member does.
 */
export function typesMatch(from: unknown, to: unknown): boolean {
  const a = typeText(from).toLowerCase();
  const b = typeText(to).toLowerCase();
  if (a === "*" || b === "*" || a === b) return true;
  const as = a.split(",").map((t) => t.trim());
  const bs = b.split(",").map((t) => t.trim());
  if (as.length === 1 && bs.length === 1) return false;
  return as.some((x) => bs.some((y) => x === "*" || y === "*" || x === y));
}

/** "MODEL at 0" or "samples (LATENT) at 0". */
export function describeSlot(slot: Slot, index: number): string {
  const type = typeText(slot.type);
  return slot.name === type ? `${type} at ${index}` : `${slot.name} (${type}) at ${index}`;
}

export function describeSlots(slots: readonly Slot[], indexes?: readonly number[]): string {
  const chosen = indexes ?? slots.map((_, i) => i);
  return chosen.length ? chosen.map((i) => describeSlot(slots[i]!, i)).join(", ") : "none";
}

/** "name: TYPE" (or just "TYPE" when the name is the type), as tool results list slots. */
export function slotSummary(slot: Slot): string {
  const type = typeText(slot.type);
  return slot.name === type ? type : `${slot.name}: ${type}`;
}

/** Link inputs, leaving out ComfyUI's per-widget sockets (they show up as widgets). */
export function linkInputs(node: LGraphNode): { slot: Slot; index: number }[] {
  return (node.inputs ?? [])
    .map((slot, index) => ({ slot: slot as Slot, index }))
    .filter(({ slot }) => !slot.widget);
}

export type SlotLookup = { index: number } | { error: string };

/**
 * Finds a slot by 0-based index (number or digit string) or by name: exact, then ignoring
 * case, then by label or localized name, then by type when exactly one slot has it.
 */
export function findSlot(slots: readonly Slot[], ref: string | number): number {
  if (typeof ref === "number" || /^\d+$/.test(ref.trim())) {
    const index = Number(ref);
    return Number.isInteger(index) && index >= 0 && index < slots.length ? index : -1;
  }
  const wanted = ref.trim();
  const lower = wanted.toLowerCase();
  const tests: ((s: Slot) => boolean)[] = [
    (s) => s.name === wanted,
    (s) => s.name.toLowerCase() === lower,
    (s) => s.label?.toLowerCase() === lower || s.localized_name?.toLowerCase() === lower,
  ];
  for (const test of tests) {
    const index = slots.findIndex(test);
    if (index >= 0) return index;
  }
  const byType = slots.map((s, i) => (typeText(s.type).toLowerCase() === lower ? i : -1)).filter((i) => i >= 0);
  return byType.length === 1 ? byType[0]! : -1;
}

/** Resolves an output of `node`, or explains which outputs exist. */
export function resolveOutput(node: LGraphNode, ref: string | number): SlotLookup {
  const outputs = (node.outputs ?? []) as Slot[];
  const index = findSlot(outputs, ref);
  if (index >= 0) return { index };
  if (!outputs.length) return { error: `${nodeLabel(node)} has no outputs.` };
  return {
    error: `${nodeLabel(node)} has no output ${JSON.stringify(ref)}. Its outputs: ${describeSlots(outputs)}.`,
  };
}

/**
 * Resolves an input of `node`. A name that is a widget without an input socket fails with an
 * explanation (set it with setWidgetValues instead).
 */
export function resolveInput(node: LGraphNode, ref: string | number): SlotLookup {
  const inputs = (node.inputs ?? []) as Slot[];
  const index = findSlot(inputs, ref);
  if (index >= 0) return { index };
  const label = nodeLabel(node);
  const widget = typeof ref === "string" ? node.widgets?.find((w) => w.name.toLowerCase() === ref.trim().toLowerCase()) : undefined;
  const list = inputs.length ? `Its inputs: ${describeSlots(inputs)}.` : `${label} has no inputs.`;
  if (widget) {
    return {
      error: `'${widget.name}' is a widget of ${label}, not an input: it cannot take a link here. Set its value with setWidgetValues instead. ${list}`,
    };
  }
  return { error: `${label} has no input ${JSON.stringify(ref)}. ${list}` };
}
