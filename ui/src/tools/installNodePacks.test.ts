// installNodePacks and restartComfyUI where no Manager installs: nothing happens, the model gets the
// steps to do it by hand (the flow with Manager: ui/e2e/installs.test.mjs).
import { describe, expect, it } from "vitest";
import { createTestApp, jsonResponse } from "./testing";

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
