import { describe, expect, it } from "vitest";
import { PANEL_TOOL_NAMES } from "./index";
import { validateArgs } from "./schema";
import { PANEL_TOOL_SCHEMAS } from "./schemas.generated";
import { REGISTRY_PANEL_TOOLS } from "./schemas.generated";

describe("panel tool schemas", () => {
  it("are the registry's panel tools, each implemented by the panel and none more", () => {
    expect([...PANEL_TOOL_NAMES]).toEqual([...REGISTRY_PANEL_TOOLS]);
    expect(Object.keys(PANEL_TOOL_SCHEMAS)).toEqual([...REGISTRY_PANEL_TOOLS]);
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
    // Node ids may be strings ("12:5" inside a subgraph): "3" stays a string, the tool reads it.
    expect(validateArgs(removeNodes, '{"nodeIds": ["3", 4]}')).toEqual({ ok: true, value: { nodeIds: ["3", 4] } });
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
        "'nearNodeId' must be integer or string, got number 1.5",
        "unknown argument 'extra' (allowed: nodeType, title, widgets, nearNodeId, position, subgraph)",
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
