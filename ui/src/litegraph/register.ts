// Registers ComfyUI node definitions (/api/object_info) as LiteGraph node types, the way
// ComfyUI's frontend does it, in simplified form. Used by the tests and by the playground;
// inside ComfyUI the frontend has registered every type already.
//
// For each definition, a subclass of LiteGraph's LGraphNode with:
// - `static nodeData = def` (what the graph tools read defaults, ranges and choices from),
//   `static title = display_name`, instance `comfyClass = type`;
// - an input slot per link input (MODEL, CLIP, LATENT, ... and widgets with `forceInput`);
// - a widget per primitive input, in definition order: INT/FLOAT "number" (min, max, step,
//   default; options as ComfyUI sets them), STRING "text" (`multiline` kept in options),
//   BOOLEAN "toggle", COMBO "combo" (legacy `[[choices]]` or `["COMBO", {options}]`); a
//   seed-like INT (`control_after_generate`, or named seed/noise_seed) is followed by the
//   combo "control_after_generate" (fixed/increment/decrement/randomize, default randomize);
// - an output slot per output (name from output_name, list outputs drawn as a grid);
// - `serialize_widgets = true` and a size computed like ComfyUI's (1.5 × LiteGraph's width).
//
// Simplifications: no input sockets for widgets (ComfyUI ≥ 1.16 adds one per primitive widget,
// with `widget: {name}`), no upload buttons, previews, DOM text areas or tooltips.
//
// Only `import type` from LiteGraph here: the caller passes the LiteGraph global in, so the
// panel bundle never includes a second LiteGraph.
import type { LGraphNode, LiteGraph } from "@comfyorg/litegraph";
import type { NodeDef } from "../host/comfy";
import {
  CONTROL_VALUES,
  CONTROL_WIDGET,
  controlDefault,
  defOutputs,
  inputOptions,
  numberRule,
  orderedInputs,
  slotTypeOf,
  widgetDefault,
  widgetKind,
  type DefInput,
} from "./defs";

/** The part of LiteGraph's global registration needs. */
export type RegistrationLiteGraph = Pick<typeof LiteGraph, "registerNodeType" | "LGraphNode"> &
  Partial<Pick<typeof LiteGraph, "GRID_SHAPE">>;

type WidgetHost = {
  addWidget(type: string, name: string, value: unknown, callback: () => void, options: object): unknown;
};

const noop = () => {};
/** Extra height ComfyUI gives a multiline text box. */
const MULTILINE_HEIGHT = 60;

function addWidgetFor(node: LGraphNode, input: DefInput): number {
  const host = node as unknown as WidgetHost;
  const { name, spec } = input;
  const kind = widgetKind(spec);
  const options = inputOptions(spec);
  switch (kind) {
    case "INT":
    case "FLOAT": {
      const rule = numberRule(kind, spec);
      const precision = kind === "INT" ? 0 : Math.max(0, -Math.floor(Math.log10(rule.step)));
      host.addWidget("number", name, widgetDefault(kind, spec), noop, {
        min: rule.min,
        max: rule.max,
        step: rule.step * 10, // LiteGraph's legacy 10× step
        step2: rule.step,
        precision,
        ...(rule.round ? { round: rule.round } : {}),
      });
      const control = controlDefault(name, spec);
      if (control) {
        host.addWidget("combo", CONTROL_WIDGET, control, noop, { values: [...CONTROL_VALUES] });
      }
      return 0;
    }
    case "STRING":
      host.addWidget("text", name, widgetDefault(kind, spec), noop, {
        multiline: options.multiline === true,
      });
      return options.multiline === true ? MULTILINE_HEIGHT : 0;
    case "BOOLEAN":
      host.addWidget("toggle", name, widgetDefault(kind, spec), noop, {
        on: typeof options.label_on === "string" ? options.label_on : "true",
        off: typeof options.label_off === "string" ? options.label_off : "false",
      });
      return 0;
    case "COMBO": {
      const values = (Array.isArray(spec[0]) ? spec[0] : options.options) ?? [];
      host.addWidget("combo", name, widgetDefault(kind, spec) ?? "", noop, { values: [...(values as unknown[])] });
      return 0;
    }
    default:
      return 0;
  }
}

/** Builds the slots and widgets of one node from its definition (called by the constructor). */
function buildNode(node: LGraphNode, def: NodeDef, gridShape: number | undefined): void {
  const inputs = orderedInputs(def);
  for (const input of inputs) {
    if (widgetKind(input.spec) === null) node.addInput(input.name, slotTypeOf(input.spec[0]));
  }
  let extraHeight = 0;
  for (const input of inputs) extraHeight += addWidgetFor(node, input);
  for (const output of defOutputs(def)) {
    node.addOutput(output.name, output.type, output.isList && gridShape !== undefined ? { shape: gridShape } : {});
  }
  const size = node.computeSize();
  node.setSize([Number(size[0]) * 1.5, Number(size[1]) + extraHeight]);
}

/**
 * Registers every definition as a LiteGraph node type named after its class (`def.name` or
 * the key). Registering a type again replaces it. Returns the registered type names.
 */
export function registerNodeDefs(liteGraph: RegistrationLiteGraph, defs: Record<string, NodeDef>): string[] {
  const registered: string[] = [];
  for (const [key, def] of Object.entries(defs)) {
    if (!def || typeof def !== "object" || !def.input) continue;
    const type = def.name || key;
    const title = def.display_name || type;
    const gridShape = liteGraph.GRID_SHAPE;
    class ComfyNode extends liteGraph.LGraphNode {
      static nodeData = def;
      static comfyClass = type;
      static override title = title;
      static override category = def.category ?? "";
      override comfyClass = type;

      constructor(nodeTitle?: string) {
        super(nodeTitle ?? title, type);
        this.serialize_widgets = true;
        buildNode(this, def, gridShape);
      }
    }
    liteGraph.registerNodeType(type, ComfyNode);
    // registerNodeType derives title and category from the type name; restore ComfyUI's.
    ComfyNode.title = title;
    ComfyNode.category = def.category ?? "";
    registered.push(type);
  }
  return registered;
}
