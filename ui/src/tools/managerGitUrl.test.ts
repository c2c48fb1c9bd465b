// Git URLs and the packs ComfyUI-Manager does not list (issue 35): the forms people paste become
// the https URL Manager clones; Manager 4.x's legacy UI installs a URL through its git-URL route
// (allow_git_url_install, whatever security_level), and its refusal says what to change; Manager's
// raw "not found in [ManagerChannel.default, …]" becomes `not-listed` with what the user can do.
// The whole flow against the recorded stand-in: ui/e2e/installs.test.mjs.
import { describe, expect, it } from "vitest";
import { asGitUrl, GIT_URL_REFUSED_NOTE, notListedNote, withNotListed } from "./managerGitUrl";
import { createTestApp, jsonResponse } from "../../test/testing";

describe("asGitUrl", () => {
  it("turns the forms people paste into the https URL, and leaves Registry ids alone", () => {
    const want = "https://github.com/cubiq/ComfyUI_essentials";
    for (const form of [want, `${want}.git`, `${want}/`, "git@github.com:cubiq/ComfyUI_essentials.git", "github.com/cubiq/ComfyUI_essentials", "ssh://git@github.com/cubiq/ComfyUI_essentials.git", " http://github.com/cubiq/ComfyUI_essentials "]) {
      expect(asGitUrl(form), form).toBe(want);
    }
    expect(asGitUrl("https://github.com/cubiq/ComfyUI_essentials/tree/main")).toBe("https://github.com/cubiq/ComfyUI_essentials/tree/main");
    for (const id of ["comfyui-impact-pack", "cubiq/ComfyUI_essentials", "was-node-suite-comfyui"]) expect(asGitUrl(id), id).toBeUndefined();
  });
});

describe("a pack ComfyUI-Manager does not list", () => {
  it("is marked not-listed from Manager's own words, which are kept", () => {
    const raw = "Node 'ComfyUI-NotListed@nightly' not found in [ManagerChannel.default, ManagerDatabaseSource.cache]";
    expect(withNotListed({ id: "x", status: "failed", message: raw })).toEqual({ id: "x", status: "not-listed", message: raw });
    const id = "Cannot resolve install target: 'comfyui-nope@latest'";
    expect(withNotListed({ id: "y", status: "failed", message: id }).status).toBe("not-listed");
    expect(withNotListed({ id: "z", status: "failed", message: "Installation failed" }).status).toBe("failed");
  });

  it("is explained with what the user can do", () => {
    expect(notListedNote("comfyui-nope", undefined, false)).toBe(
      "ComfyUI-Manager does not know a pack called 'comfyui-nope': it is not in Manager's copy of the Comfy Registry's list. " +
        "Check the id (as the findMissing scan gave it, or on registry.comfy.org), or install it by its git URL instead.",
    );
    const url = "https://github.com/someone/ComfyUI-NotListed";
    const note = notListedNote(url, url, false);
    expect(note).toMatch(/^ComfyUI-Manager does not list https:\/\/github\.com\/someone\/ComfyUI-NotListed: it installs from its node list \(channel "default"\) or the Comfy Registry/);
    expect(note).toContain("add `allow_git_url_install = true` to the [default] section of user/__manager/config.ini, start ComfyUI with --enable-manager --enable-manager-legacy-ui");
    expect(note).toContain("`pip install -U comfyui-manager`");
  });
});

describe("Manager 4.x's legacy UI and a git URL", () => {
  function legacyManager(gitUrl: (body: unknown) => Response) {
    const t = createTestApp();
    t.api.handler = (route, init) => {
      if (route === "/v2/manager/version") return new Response("V4.3");
      if (route === "/v2/manager/is_legacy_manager_ui") return jsonResponse(200, { is_legacy_manager_ui: true });
      if (route.startsWith("/v2/customnode/getmappings") || route === "/v2/customnode/installed") return jsonResponse(200, {});
      if (route === "/v2/customnode/install/git_url" && init?.method === "POST") return gitUrl(init.body);
      return jsonResponse(404, {});
    };
    return t;
  }

  it("installs the URL through the git-URL route; a Registry id gets the steps", async () => {
    const bodies: unknown[] = [];
    const t = legacyManager((body) => {
      bodies.push(body);
      return new Response("", { status: 200 });
    });
    const result = await t.tools.installNodePacks({ packs: ["git@github.com:cubiq/ComfyUI_essentials.git", "comfyui-impact-pack"] });
    expect(bodies).toEqual(["https://github.com/cubiq/ComfyUI_essentials"]);
    expect(result).toEqual({
      ok: true,
      packs: [{ id: "https://github.com/cubiq/ComfyUI_essentials", status: "installed", note: "installed; it loads when ComfyUI restarts" }],
      restartNeeded: true,
      note: "ComfyUI loads the new packs only after a restart: offer restartComfyUI (it asks the user).",
      instructions: { "comfyui-impact-pack": "comfy node install comfyui-impact-pack" },
      byHand: "Not installed here (this ComfyUI-Manager installs only git URLs from the assistant): comfyui-impact-pack; give the user the instructions.",
    });
    expect(t.api.requests.filter((r) => r.route.includes("queue"))).toEqual([]);
  });

  it("refused for want of allow_git_url_install: the exact config.ini change, to the model and the user", async () => {
    const t = legacyManager(() => jsonResponse(403, { reason: "allow_git_url_install" }));
    const result = await t.tools.installNodePacks({ packs: ["https://github.com/cubiq/ComfyUI_essentials"] });
    expect(result).toMatchObject({ ok: false, refused: GIT_URL_REFUSED_NOTE });
    expect(result.packs).toEqual([
      { id: "https://github.com/cubiq/ComfyUI_essentials", status: "refused", note: "refused by ComfyUI-Manager's settings", message: 'HTTP 403 {"reason":"allow_git_url_install"}' },
    ]);
    expect(GIT_URL_REFUSED_NOTE).toContain("add `allow_git_url_install = true` to the [default] section of user/__manager/config.ini");
    expect(t.toasts.map((m) => [m.summary, m.detail])).toEqual([
      ["ComfyUI-Manager refused", "ComfyUI-Manager installs from a git URL only when its settings allow it. To allow it, stop ComfyUI, add allow_git_url_install = true to the [default] section of ComfyUI-Manager's config.ini (user/__manager/config.ini), and start ComfyUI again."],
    ]);
  });
});
