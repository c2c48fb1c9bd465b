import { describe, expect, it } from "vitest";
import { savedWorkflowKeys, type ComfyApp } from "./comfy";

/** An app whose ComfyUI answers each route from `answers` (404 for any other), and the routes asked. */
function comfy(answers: Record<string, [number, unknown]>) {
  const asked: string[] = [];
  const app = {
    api: {
      fetchApi: async (route: string) => {
        asked.push(route);
        const [status, body] = answers[route] ?? [404, "404: Not Found"];
        return new Response(typeof body === "string" ? body : JSON.stringify(body), { status });
      },
    },
  } as unknown as ComfyApp;
  return { app, asked };
}

const V1 = "/userdata?dir=workflows&recurse=true&split=false&full_info=false";

describe("the saved workflows", () => {
  it("are read from the user's whole folder (/v2/userdata), which answers [] for a new user: no 404", async () => {
    const fresh = comfy({ "/v2/userdata": [200, []] });
    expect(await savedWorkflowKeys(fresh.app)).toEqual(new Set());
    expect(fresh.asked).toEqual(["/v2/userdata"]);
    const entries = [
      { name: "studio", path: "workflows/studio", type: "directory" },
      { name: "workflows", path: "workflows", type: "directory" },
      { name: "comfy.settings.json", path: "comfy.settings.json", type: "file", size: 2, modified: 1.5 },
      { name: "flux.json", path: "workflows/studio/flux.json", type: "file", size: 9, modified: 1.5 },
      { name: "portrait.json", path: "workflows/portrait.json", type: "file", size: 9, modified: 1.5 },
      { name: "x.json", path: "subgraphs/x.json", type: "file", size: 9, modified: 1.5 },
    ];
    const user = comfy({ "/v2/userdata": [200, entries] });
    expect(await savedWorkflowKeys(user.app)).toEqual(new Set(["studio/flux.json", "portrait.json"]));
  });

  it("on a ComfyUI without /v2/userdata (before 0.3.31), from the workflows folder, whose 404 means none", async () => {
    const old = comfy({ [V1]: [200, ["portrait.json"]] });
    expect(await savedWorkflowKeys(old.app)).toEqual(new Set(["portrait.json"]));
    expect(old.asked).toEqual(["/v2/userdata", V1]);
    expect(await savedWorkflowKeys(comfy({}).app)).toEqual(new Set());
  });

  it("are unknown when ComfyUI cannot say", async () => {
    expect(await savedWorkflowKeys(comfy({ "/v2/userdata": [500, "Error reading directory contents"] }).app)).toBeUndefined();
    expect(await savedWorkflowKeys(comfy({ [V1]: [403, "Invalid directory"] }).app)).toBeUndefined();
    expect(await savedWorkflowKeys(comfy({ "/v2/userdata": [200, { error: "?" }] }).app)).toBeUndefined();
  });
});
