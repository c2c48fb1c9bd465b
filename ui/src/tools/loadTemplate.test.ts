// loadTemplate against a scripted ComfyUI and backend (fetch): it fetches the template as
// ComfyUI's template browser does, opens it in a new tab named by its title with a thread key
// of its own (two templates that share a workflow id are two tabs, two keys), and tells the
// model each missing model in one line with the scan id for downloadModels.
import { afterEach, describe, expect, it, vi } from "vitest";
import { sampleScan } from "../../test/installFixtures";
import { threadKeyOf } from "../host/comfy";
import { createTestApp } from "../../test/testing";

const { readFileSync } = process.getBuiltinModule("node:fs");
const { resolve } = process.getBuiltinModule("node:path");

/** A real template of comfyui-workflow-templates 0.1.95 (tests/fixtures/workflows). */
function fixture(name: string): unknown {
  return JSON.parse(readFileSync(resolve(process.cwd(), `../tests/fixtures/workflows/${name}.json`), "utf8")) as unknown;
}

const INDEX = fixture("index");

function comfy(scan = sampleScan("scan_t1")): string[] {
  const paths: string[] = [];
  vi.stubGlobal("fetch", async (path: string) => {
    paths.push(path);
    const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    if (path === "/templates/index.json") return json(INDEX);
    const name = /^\/templates\/([\w.-]+)\.json$/.exec(path)?.[1];
    if (name && ["api_kling_i2v", "api_openai_dall_e_2_t2i", "default"].includes(name)) return json(fixture(name));
    if (path === "/api/assistant/installs/scan") return json(scan);
    return new Response("404: Not Found", { status: 404 });
  });
  return paths;
}

afterEach(() => vi.unstubAllGlobals());

describe("loadTemplate", () => {
  it("opens the template in a new tab named by its title and lists each missing model in one line", async () => {
    const t = createTestApp({ tabs: true });
    const paths = comfy();
    const result = await t.tools.loadTemplate({ name: "default" });
    expect(paths).toEqual(["/templates/default.json", "/templates/index.json", "/api/assistant/installs/scan"]);
    const store = t.app.extensionManager.workflow!;
    expect(store.openWorkflows).toHaveLength(2);
    expect(result).toEqual({
      ok: true,
      template: "default",
      tab: "Image Generation",
      note: expect.stringContaining("ComfyUI opened it in a new tab, “Image Generation”, which the user now sees"),
      nodeCount: 7,
      linkCount: 9,
      nodes: expect.any(Object),
      scan: "scan_t1",
      missing: [
        "missing model v1-5-pruned-emaonly-fp16.safetensors (models/checkpoints, huggingface.co, 2.1 GB)",
        "missing model old.ckpt (models/vae, example.com): not downloadable (the download address is not an https URL (http://example.com/old.ckpt))",
        "missing node type AddMask (pack: comfyui-impact-pack)",
        "missing node type Mystery (no known pack)",
      ],
      next:
        'downloadModels {"scan": "scan_t1", "models": ["v1-5-pruned-emaonly-fp16.safetensors"]} fetches the downloadable models (it asks the user first); ' +
        "installNodePacks with the pack ids, then restartComfyUI, adds the missing node types.",
    });
  });

  it("gives two templates that share a workflow id a thread key each", async () => {
    const t = createTestApp({ tabs: true });
    comfy({ ...sampleScan("scan_t2"), missingModels: [], missingNodes: [] });
    const a = await t.tools.loadTemplate({ name: "api_kling_i2v" });
    const b = await t.tools.loadTemplate({ name: "api_openai_dall_e_2_t2i" });
    expect([a.ok, b.ok, a.missing, b.next]).toEqual([true, true, [], "Nothing is missing: it can run as it is."]);
    const tabs = (t.app.extensionManager.workflow!.openWorkflows ?? []).slice(1);
    const ids = tabs.map((w) => (w.activeState as { id?: string } | undefined)?.id);
    expect(ids[0]).toBe(ids[1]); // (the same workflow id in both templates)
    const keys = tabs.map((w) => threadKeyOf(w));
    expect(keys[0]).toMatch(/^[\w-]{36}$/);
    expect(keys[1]).toMatch(/^[\w-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("refuses a name that is not a template's, and one this ComfyUI does not have, loading nothing", async () => {
    const t = createTestApp({ tabs: true });
    const paths = comfy();
    expect(await t.tools.loadTemplate({ name: "../user/default/x" })).toEqual({
      ok: false,
      error: '"../user/default/x" is not a template name (letters, digits, _ . -); use a name searchTemplates gave. Nothing was loaded.',
    });
    expect(await t.tools.loadTemplate({ name: "no_such_template" })).toEqual({
      ok: false,
      error: 'This ComfyUI has no template "no_such_template"; use a name searchTemplates gave. Nothing was loaded.',
    });
    expect(paths).toEqual(["/templates/no_such_template.json"]);
    expect(t.app.extensionManager.workflow!.openWorkflows).toHaveLength(1);
  });
});
