import { describe, expect, it } from "vitest";
import { PANEL_TOOL_NAMES } from "./index";
import { PANEL_TOOL_SCHEMAS, validateArgs } from "./schema";

const { execFileSync } = process.getBuiltinModule("node:child_process");
const { resolve } = process.getBuiltinModule("node:path");
const { existsSync } = process.getBuiltinModule("node:fs");

/** The panel tools' parameter schemas from tools_definitions.py, or null without python3. */
function pythonSchemas(): Record<string, unknown> | null {
  const root = [resolve(process.cwd(), ".."), process.cwd()].find((dir) => existsSync(resolve(dir, "tools_definitions.py")));
  if (!root) return null;
  const script =
    "import json, sys; sys.path.insert(0, sys.argv[1]); import tools_definitions as t; " +
    "print(json.dumps({s.name: s.as_json()['parameters'] for s in t.tools_for('panel')}))";
  try {
    return JSON.parse(execFileSync("python3", ["-c", script, root], { encoding: "utf8" })) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).filter(([key]) => key !== "description").map(([key, v]) => [key, withoutDescriptions(v)]),
    );
  }
  return value;
}

describe("panel tool schemas", () => {
  it("match tools_definitions.py exactly (descriptions aside)", (ctx) => {
    const python = pythonSchemas();
    if (!python) return ctx.skip();
    expect(Object.keys(python)).toEqual([...PANEL_TOOL_NAMES]);
    expect(withoutDescriptions(python)).toEqual(JSON.parse(JSON.stringify(PANEL_TOOL_SCHEMAS)));
  });
});

describe("validateArgs", () => {
  const { addNode, getWorkflow, queueWorkflow, setWidgetValues, connectNodes, removeNodes, loadWorkflow } = PANEL_TOOL_SCHEMAS;

  it("fills defaults and accepts missing or empty arguments", () => {
    expect(validateArgs(getWorkflow, undefined)).toEqual({ ok: true, value: { detail: "compact" } });
    expect(validateArgs(queueWorkflow, "")).toEqual({ ok: true, value: { waitForResult: true, timeoutSeconds: 300 } });
    expect(validateArgs(queueWorkflow, null)).toEqual({ ok: true, value: { waitForResult: true, timeoutSeconds: 300 } });
  });

  it("accepts arguments as a JSON string and numbers or booleans sent as strings", () => {
    expect(validateArgs(removeNodes, '{"nodeIds": ["3", 4]}')).toEqual({ ok: true, value: { nodeIds: [3, 4] } });
    expect(validateArgs(queueWorkflow, { waitForResult: "false", timeoutSeconds: " 60 " })).toEqual({
      ok: true,
      value: { waitForResult: false, timeoutSeconds: 60 },
    });
    expect(validateArgs(addNode, { nodeType: "KSampler", position: { x: "10.5", y: -3 } })).toEqual({
      ok: true,
      value: { nodeType: "KSampler", position: { x: 10.5, y: -3 } },
    });
    // A slot stays a string ("0" is resolved by the tool), widget values keep their type.
    expect(validateArgs(connectNodes, { fromNodeId: 1, fromOutput: "0", toNodeId: 2, toInput: 1 })).toEqual({
      ok: true,
      value: { fromNodeId: 1, fromOutput: "0", toNodeId: 2, toInput: 1 },
    });
    expect(validateArgs(setWidgetValues, { nodeId: 1, values: { steps: "30" } })).toEqual({
      ok: true,
      value: { nodeId: 1, values: { steps: "30" } },
    });
  });

  it("reports every problem with its path", () => {
    expect(validateArgs(addNode, { title: 5, widgets: { steps: [1] }, nearNodeId: 1.5, extra: true })).toEqual({
      ok: false,
      errors: [
        "'nodeType' is required",
        "'title' must be string, got integer 5",
        "'widgets.steps' must be string or number or boolean, got array [1]",
        "'nearNodeId' must be integer, got number 1.5",
        "unknown argument 'extra' (allowed: nodeType, title, widgets, nearNodeId, position)",
      ],
    });
    expect(validateArgs(addNode, { nodeType: "", position: { x: 1 } })).toEqual({
      ok: false,
      errors: ["'nodeType' must not be empty", "'position.y' is required"],
    });
    expect(validateArgs(getWorkflow, { detail: "everything", nodeIds: [] })).toEqual({
      ok: false,
      errors: [`'detail' must be one of "summary", "compact", "full", got "everything"`, "'nodeIds' must have at least 1 item(s)"],
    });
    expect(validateArgs(queueWorkflow, { timeoutSeconds: 0 })).toEqual({ ok: false, errors: ["'timeoutSeconds' must be at least 1"] });
    expect(validateArgs(queueWorkflow, { timeoutSeconds: 4000 })).toEqual({ ok: false, errors: ["'timeoutSeconds' must be at most 3600"] });
    expect(validateArgs(setWidgetValues, { nodeId: 1, values: {} })).toEqual({ ok: false, errors: ["'values' must have at least 1 entry"] });
    expect(validateArgs(loadWorkflow, { workflow: [] })).toEqual({ ok: false, errors: ["'workflow' must be object, got array []"] });
    expect(validateArgs(removeNodes, [1, 2])).toEqual({ ok: false, errors: ["'arguments' must be object, got array [1,2]"] });
    expect(validateArgs(removeNodes, "{nodeIds")).toEqual({ ok: false, errors: ["the arguments are not valid JSON"] });
  });
});
