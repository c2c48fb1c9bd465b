// installNodePacks and restartComfyUI where no Manager installs: nothing happens, the model gets the
// steps to do it by hand (the flow with Manager: ui/e2e/installs.test.mjs).
import { describe, expect, it } from "vitest";
import { createTestApp, jsonResponse } from "../../test/testing";

describe("the install tools without ComfyUI-Manager", () => {
  it("installs nothing and gives the comfy-cli and git + pip steps per pack", async () => {
    const t = createTestApp();
    const routes: string[] = [];
    t.api.handler = (route) => {
      routes.push(route);
      return jsonResponse(404, {});
    };
    const result = await t.tools.installNodePacks({ packs: ["comfyui-impact-pack", "https://github.com/cubiq/ComfyUI_essentials"] });
    expect(result).toMatchObject({ ok: false, installed: [] });
    expect(result.error).toMatch(/ComfyUI-Manager is not available.*nothing was installed/);
    expect(result.instructions).toEqual({
      "comfyui-impact-pack": "comfy node install comfyui-impact-pack",
      "https://github.com/cubiq/ComfyUI_essentials":
        "cd ComfyUI/custom_nodes && git clone https://github.com/cubiq/ComfyUI_essentials && pip install -r ComfyUI_essentials/requirements.txt (with the python that runs ComfyUI), then restart ComfyUI",
    });
    expect(routes.some((r) => r.includes("queue"))).toBe(false);
    expect(t.toasts.map((m) => m.summary)).toEqual(["Nothing was installed"]);
  });

  it("with the legacy Manager (3.x) points to Manager's own window, and a restart is the user's", async () => {
    const t = createTestApp();
    t.api.handler = (route) => (route === "/manager/version" ? new Response("V3.41") : jsonResponse(404, {}));
    const result = await t.tools.installNodePacks({ packs: ["comfyui-impact-pack"] });
    expect(result.error).toMatch(/\(V3\.41\) installs only from its own window/);
    t.api.handler = () => jsonResponse(404, {});
    expect(await t.tools.restartComfyUI({ nodeTypes: ["AddMask"] })).toEqual({
      ok: false,
      error: "ComfyUI-Manager is not available, so the assistant cannot restart ComfyUI: ask the user to stop and start ComfyUI, then reload this page.",
    });
  });

  it("refuses more than 20 packs and an empty list before asking anything", async () => {
    const t = createTestApp();
    const many = Array.from({ length: 21 }, (_, i) => `pack-${i}`);
    expect((await t.tools.installNodePacks({ packs: many })).error).toMatch(/'packs' must have at most 20 items/);
    expect((await t.tools.installNodePacks({ packs: [] })).error).toMatch(/at least 1 item/);
  });
});

describe("after a restart", () => {
  it("finds the nodes loaded while their type was missing, once the type is registered", async () => {
    const { placeholdersOfKnownTypes } = await import("./restartComfyUI");
    const t = createTestApp();
    const node = { id: 7, type: "AddMask", pos: [0, 0], size: [200, 80], flags: {}, order: 0, mode: 0, inputs: [], outputs: [], properties: {}, widgets_values: [] };
    t.graph.configure({ version: 0.4, last_node_id: 7, last_link_id: 0, nodes: [node], links: [], groups: [], config: {}, extra: {} } as never);
    expect((t.graph.getNodeById(7) as { has_errors?: boolean } | null)?.has_errors).toBe(true);
    expect(placeholdersOfKnownTypes(t.app, t.lg)).toEqual([]); // (AddMask is still unknown)
    const known = t.lg.registered_node_types as Record<string, unknown>;
    known.AddMask = class {};
    try {
      expect(placeholdersOfKnownTypes(t.app, t.lg).map((n) => n.id)).toEqual([7]);
      // frontend 1.49.6 leaves has_errors false on the plain node it loads for a missing type
      (t.graph.getNodeById(7) as { has_errors?: boolean }).has_errors = false;
      expect(placeholdersOfKnownTypes(t.app, t.lg).map((n) => n.id)).toEqual([7]);
    } finally {
      delete known.AddMask;
    }
  });
});
