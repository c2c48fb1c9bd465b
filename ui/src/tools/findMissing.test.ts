// findMissing and downloadModels against a scripted backend (fetch): what they send, what the
// model reads back, and that a deny requests nothing (the real flow: ui/e2e/installs.test.mjs).
import { afterEach, describe, expect, it, vi } from "vitest";
import { sampleJob, sampleScan } from "../../test/installFixtures";
import { NO_MODEL_LIST } from "./findMissing";
import { createTestApp } from "../../test/testing";

type Call = { method: string; path: string; body: unknown };

function backend(answer: (call: Call) => [number, unknown]): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal("fetch", async (path: string, init: RequestInit = {}) => {
    const call = { method: init.method ?? "GET", path, body: init.body ? JSON.parse(String(init.body)) : undefined };
    calls.push(call);
    const [status, body] = answer(call);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  });
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe("findMissing", () => {
  it("sends the open workflow and gives the model a compact result", async () => {
    const t = createTestApp();
    const calls = backend(() => [200, sampleScan("scan_f1")]);
    const result = await t.tools.findMissing({});
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: "POST", path: "/api/assistant/installs/scan" });
    expect(Object.keys(calls[0]!.body as object)).toEqual(["workflow"]);
    expect((calls[0]!.body as { workflow: { nodes: unknown } }).workflow.nodes).toEqual([]);
    expect(result).toEqual({
      ok: true,
      scan: "scan_f1",
      missingNodeTypes: [
        { type: "AddMask", packs: [{ id: "comfyui-impact-pack", title: "ComfyUI Impact Pack", state: "disabled" }] },
        { type: "Mystery", packs: [], note: "no pack in ComfyUI-Manager's node map provides it" },
      ],
      missingModels: [
        { name: "v1-5-pruned-emaonly-fp16.safetensors", folder: "checkpoints", host: "huggingface.co", size: 2_130_000_000, downloadable: true },
        { name: "old.ckpt", folder: "vae", host: "example.com", size: null, downloadable: false, why: "the download address is not an https URL (http://example.com/old.ckpt)" },
      ],
      presentModels: 1,
      note: expect.stringContaining("downloadModels with this scan id"),
    });
    expect(JSON.stringify(result)).not.toMatch(/detector nodes|https:\/\/huggingface/); // (descriptions and URLs stay on the cards)
  });

  it("tells the model why model addresses come only from the workflow, in plain words", async () => {
    const t = createTestApp();
    const scan = sampleScan("scan_f2");
    scan.sources = { ...scan.sources, modelList: false, modelListLegacyUiOnly: true, notes: ["the Comfy Registry was not asked (offline)"] };
    backend(() => [200, scan]);
    const result = await t.tools.findMissing({});
    expect(result.notes).toEqual(["the Comfy Registry was not asked (offline)", NO_MODEL_LIST]);
  });

  it("scans an attachment by id, and passes the server's error on", async () => {
    const t = createTestApp();
    const calls = backend(() => [404, { error: "attachment att_1 does not exist", code: "not_found.attachment", params: { id: "att_1" } }]);
    const result = await t.tools.findMissing({ attachmentId: "att_1" });
    expect(calls[0]!.body).toEqual({ attachment: "att_1" });
    expect(result).toEqual({ ok: false, error: "attachment att_1 does not exist", code: "not_found.attachment" });
  });
});

describe("downloadModels", () => {
  async function scanned(id: string) {
    const t = createTestApp();
    backend(() => [200, sampleScan(id)]);
    await t.tools.findMissing({});
    return t;
  }

  it("asks first with each model's folder, host and size, and a deny requests nothing", async () => {
    const t = await scanned("scan_d1");
    const calls = backend(() => [500, {}]);
    const asked: unknown[] = [];
    const result = await t.tools.downloadModels(
      { scan: "scan_d1", models: ["v1-5-pruned-emaonly-fp16.safetensors"] },
      { approve: async (request) => (asked.push(request), false) },
    );
    expect(asked).toEqual([
      {
        kind: "download",
        action: "Download 1 model file into ComfyUI's models folder.",
        nodes: ["v1-5-pruned-emaonly-fp16.safetensors → checkpoints · huggingface.co · 2.1 GB"],
      },
    ]);
    expect(result).toMatchObject({ ok: false, denied: true });
    expect(calls).toEqual([]);
  });

  it("refuses a name the scan does not list, or cannot download, before asking", async () => {
    const t = await scanned("scan_d2");
    const calls = backend(() => [500, {}]);
    const approve = vi.fn(async () => true);
    const unknown = await t.tools.downloadModels({ scan: "scan_d2", models: ["evil.safetensors"] }, { approve });
    expect(unknown.error).toMatch(/Not among the scan's missing models: evil.safetensors/);
    const refused = await t.tools.downloadModels({ scan: "scan_d2", models: ["old.ckpt"] }, { approve });
    expect(refused.error).toMatch(/Cannot be downloaded: old.ckpt \(the download address is not an https URL/);
    expect(approve).not.toHaveBeenCalled();
    expect(calls).toEqual([]);
  });

  it("starts the scan's models by name, reports progress, and says per model how it ended", async () => {
    const t = createTestApp();
    const scan = sampleScan("scan_d3");
    scan.missingModels.push({ ...scan.missingModels[0]!, name: "b.safetensors" });
    backend(() => [200, scan]);
    await t.tools.findMissing({});
    let polls = 0;
    const calls = backend((call) => {
      if (call.method === "POST") return [200, { jobs: [sampleJob({ state: "queued", bytesDone: 0 }), sampleJob({ id: "job2", name: "b.safetensors", state: "done", alreadyPresent: true })] }];
      polls++;
      return [200, polls < 2 ? sampleJob() : sampleJob({ state: "failed", error: { error: "huggingface.co answered HTTP 401 for x", code: "download.http_status", params: { host: "huggingface.co", status: 401, name: "x" } } })];
    });
    const progress: Record<string, unknown>[] = [];
    const result = await t.tools.downloadModels(
      { scan: "scan_d3", models: ["v1-5-pruned-emaonly-fp16.safetensors", "b.safetensors"] },
      { approve: async () => true, progress: (update) => progress.push(update) },
    );
    expect(result).toEqual({
      ok: true,
      models: [
        { name: "v1-5-pruned-emaonly-fp16.safetensors", status: "failed", error: "huggingface.co answered HTTP 401 for x", code: "download.http_status", params: { host: "huggingface.co", status: 401, name: "x" } },
        { name: "b.safetensors", folder: "checkpoints", status: "already-present" },
      ],
      note: "Model files need no restart: a run finds them.",
    });
    expect(calls[0]).toMatchObject({ method: "POST", path: "/api/assistant/installs/downloads", body: { scan: "scan_d3", models: ["v1-5-pruned-emaonly-fp16.safetensors", "b.safetensors"] } });
    expect(calls.slice(1).map((c) => `${c.method} ${c.path}`)).toEqual(["GET /api/assistant/installs/downloads/job1", "GET /api/assistant/installs/downloads/job1"]);
    expect(progress.some((p) => p.status === "500 MB of 4 GB")).toBe(true);
    expect(progress.at(-1)!.downloads).toHaveLength(2);
  });
});
