import { describe, expect, it } from "vitest";
import { attachPastedWorkflow, isPastedFile, isPastedWorkflow, MAX_PASTE_CHARS, PASTED_NAME, workflowFormat } from "./pastedWorkflow";

const UI = {
  last_node_id: 2,
  nodes: [
    { id: 1, type: "CheckpointLoaderSimple", widgets_values: ["sd_xl_base_1.0.safetensors"] },
    { id: 2, type: "KSampler", widgets_values: [42, "fixed", 20, 8] },
  ],
  links: [],
};
const API = {
  3: { class_type: "KSampler", inputs: { seed: 42, model: ["4", 0] } },
  4: { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "v1-5-pruned-emaonly.safetensors" } },
};

describe("which pastes are workflows (the server's rule, core/files/workflow_text.py)", () => {
  it("takes the UI format and the API format, as copied (indented, with spaces around)", () => {
    expect(isPastedWorkflow(JSON.stringify(UI, null, 2))).toBe(true);
    expect(isPastedWorkflow(`\n  ${JSON.stringify(API)}\n`)).toBe(true);
    expect(workflowFormat(UI)).toBe("ui");
    expect(workflowFormat(API)).toBe("api");
  });

  it("leaves text and JSON that is not a workflow alone", () => {
    expect(isPastedWorkflow("a lighthouse at dusk, golden hour")).toBe(false);
    expect(isPastedWorkflow('{"seed": 42, "steps": 20}')).toBe(false);
    expect(isPastedWorkflow('{"nodes": "three"}')).toBe(false); // nodes must be a list
    expect(isPastedWorkflow('[{"class_type": "KSampler", "inputs": {}}]')).toBe(false); // a list, not an object
    // one value without a class_type: not the API format (as the server decides)
    expect(isPastedWorkflow(JSON.stringify({ ...API, extra: { note: "class_type" } }))).toBe(false);
    expect(workflowFormat({})).toBe(null);
  });

  it("leaves invalid JSON alone (a workflow cut short when copied)", () => {
    const whole = JSON.stringify(UI);
    expect(isPastedWorkflow(whole.slice(0, -10) + "}")).toBe(false);
    expect(isPastedWorkflow('{"nodes": [], NaN}')).toBe(false);
  });

  it("does not parse a huge paste (past the 2 MB the server takes), and decides at once", () => {
    const node = { id: 1, type: "Note", widgets_values: ["x".repeat(1000)] };
    const huge = JSON.stringify({ nodes: Array.from({ length: 2200 }, () => node), links: [] });
    expect(huge.length).toBeGreaterThan(MAX_PASTE_CHARS);
    const started = performance.now();
    expect(isPastedWorkflow(huge)).toBe(false);
    expect(performance.now() - started).toBeLessThan(20);
    // the same workflow under the limit is one
    expect(isPastedWorkflow(JSON.stringify({ nodes: Array.from({ length: 1000 }, () => node), links: [] }))).toBe(true);
  });
});

function paste(items: { text?: string; file?: File }) {
  const data = new DataTransfer();
  if (items.text !== undefined) data.setData("text/plain", items.text);
  if (items.file) data.items.add(items.file);
  return new ClipboardEvent("paste", { clipboardData: data, cancelable: true });
}

function recorder() {
  const added: File[] = [];
  return { added, add: async (file: File) => void added.push(file) };
}

describe("the composer's paste handler", () => {
  it("attaches a pasted workflow as pasted-workflow.json and keeps its text out of the box", async () => {
    const { added, add } = recorder();
    const event = paste({ text: JSON.stringify(API, null, 2) });
    expect(attachPastedWorkflow(event, add)).toBe(true);
    expect(event.defaultPrevented).toBe(true);
    expect(added).toHaveLength(1);
    const [file] = added;
    expect([file!.name, file!.type]).toEqual([PASTED_NAME, "application/json"]);
    expect(JSON.parse(await file!.text())).toEqual(API);
    expect(isPastedFile(file)).toBe(true);
    // a file picked under the same name is not a pasted one
    expect(isPastedFile(new File(["{}"], PASTED_NAME, { type: "application/json" }))).toBe(false);
  });

  it("lets every other paste through: text, JSON that is not a workflow, files", () => {
    const { added, add } = recorder();
    for (const event of [
      paste({ text: "a lighthouse at dusk" }),
      paste({ text: '{"seed": 42}' }),
      paste({ text: "{ not json" }),
      paste({ text: JSON.stringify(UI), file: new File(["png"], "shot.png", { type: "image/png" }) }),
    ]) {
      expect(attachPastedWorkflow(event, add)).toBe(false);
      expect(event.defaultPrevented).toBe(false);
    }
    expect(added).toEqual([]);
  });
});
