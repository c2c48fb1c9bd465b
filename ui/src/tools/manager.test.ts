// Edge cases of the Manager client against a fake fetch and event target (the main proof is the
// browser test ui/e2e/installs.test.mjs, against the recorded Manager stand-in).
import { describe, expect, it } from "vitest";
import { detectManager, installParams, installPacks, reboot, type ManagerApi } from "./manager";

type Route = (init?: RequestInit) => Response | Promise<Response>;

function fakeApi(routes: Record<string, Route>): ManagerApi & { posted: { route: string; body: unknown }[]; emit(type: string, detail: unknown): void } {
  const target = new EventTarget();
  const posted: { route: string; body: unknown }[] = [];
  return {
    clientId: "client-1",
    posted,
    async fetchApi(route, init) {
      if (init?.method === "POST") posted.push({ route, body: init.body ? JSON.parse(String(init.body)) : undefined });
      const handler = routes[route] ?? routes[route.split("?")[0]!];
      return handler ? handler(init) : new Response("", { status: 404 });
    },
    addEventListener: (type, listener) => target.addEventListener(type, listener as EventListener),
    removeEventListener: (type, listener) => target.removeEventListener(type, listener as EventListener),
    emit: (type, detail) => target.dispatchEvent(new CustomEvent(type, { detail })),
  };
}

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200 });

describe("the ComfyUI-Manager client", () => {
  it("tells the new API from the legacy handlers and from no Manager", async () => {
    const v4 = fakeApi({ "/v2/manager/version": () => new Response("V4.3"), "/v2/manager/is_legacy_manager_ui": () => json({ is_legacy_manager_ui: false }) });
    expect(await detectManager(v4)).toEqual({ kind: "v4", version: "V4.3", rebootPath: "/v2/manager/reboot" });
    const v3 = fakeApi({ "/manager/version": () => new Response("V3.41") });
    expect(await detectManager(v3)).toEqual({ kind: "legacy", version: "V3.41", rebootPath: "/manager/reboot" });
    expect(await detectManager(fakeApi({}))).toEqual({ kind: "none" });
  });

  it("installs a Registry pack at latest, and a repository as nightly with its URL", () => {
    expect(installParams("comfyui-impact-pack")).toEqual({ id: "comfyui-impact-pack", version: "latest", selected_version: "latest", mode: "cache", channel: "default" });
    expect(installParams("https://github.com/cubiq/ComfyUI_essentials.git")).toMatchObject({
      id: "ComfyUI_essentials",
      selected_version: "nightly",
      repository: "https://github.com/cubiq/ComfyUI_essentials.git",
    });
  });

  it("reads a task's end from its event: success, skip, and the security level's 'failed'", async () => {
    const api = fakeApi({
      "/v2/manager/queue/task": () => new Response("", { status: 200 }),
      "/v2/manager/queue/start": () => {
        setTimeout(() => {
          api.emit("cm-task-completed", { ui_id: "u-a", result: "success", status: { status_str: "success", messages: [] } });
          api.emit("cm-task-completed", { ui_id: "u-b", result: "skip", status: { status_str: "skip", messages: [] } });
          api.emit("cm-task-completed", { ui_id: "u-c", result: "failed", status: { status_str: "error", messages: ["failed"] } });
        }, 5);
        return new Response("", { status: 200 });
      },
    });
    const outcomes = await installPacks(api, ["a", "b", "c"], { uiId: (id) => `u-${id}`, pollMs: 10_000 });
    expect(outcomes.map((o) => o.status)).toEqual(["installed", "already-installed", "refused"]);
    expect(api.posted[0]).toEqual({ route: "/v2/manager/queue/task", body: { ui_id: "u-a", client_id: "client-1", kind: "install", params: installParams("a") } });
  });

  it("does not wait forever on a worker that crashed (no event, no all-done): the idle queue marks the task lost", async () => {
    const api = fakeApi({
      "/v2/manager/queue/task": () => new Response("", { status: 200 }),
      "/v2/manager/queue/start": () => new Response("", { status: 200 }),
      "/v2/manager/queue/history": () => json({ history: {} }),
      "/v2/manager/queue/status": () => json({ total_count: 0, done_count: 0, in_progress_count: 0, pending_count: 0, is_processing: false }),
    });
    const started = Date.now();
    const [outcome] = await installPacks(api, ["a"], { uiId: () => "u-a", pollMs: 20, timeoutMs: 5000 });
    expect(outcome).toMatchObject({ id: "a", status: "lost" });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("finds a finished task in the history when its event went to another socket", async () => {
    const api = fakeApi({
      "/v2/manager/queue/task": () => new Response("", { status: 200 }),
      "/v2/manager/queue/start": () => new Response("", { status: 201 }), // already running
      "/v2/manager/queue/history": () => json({ history: { ui_id: "u-a", result: "Cannot resolve install target: 'a@latest'", status: { status_str: "error", messages: ["Cannot resolve install target: 'a@latest'"] } } }),
    });
    const [outcome] = await installPacks(api, ["a"], { uiId: () => "u-a", pollMs: 20 });
    expect(outcome).toEqual({ id: "a", status: "failed", message: "Cannot resolve install target: 'a@latest'" });
  });

  it("gives up after the timeout, and takes a 403 at queue time (legacy) as a refusal", async () => {
    const slow = fakeApi({
      "/v2/manager/queue/task": () => new Response("", { status: 200 }),
      "/v2/manager/queue/start": () => new Response("", { status: 200 }),
      "/v2/manager/queue/history": () => json({ history: {} }),
      "/v2/manager/queue/status": () => json({ pending_count: 1, in_progress_count: 0, is_processing: true }),
    });
    expect(await installPacks(slow, ["a"], { pollMs: 10, timeoutMs: 60 })).toEqual([{ id: "a", status: "timeout" }]);
    const strong = fakeApi({ "/v2/manager/queue/task": () => new Response("A security error has occurred.", { status: 403 }) });
    expect(await installPacks(strong, ["a"])).toEqual([{ id: "a", status: "refused", message: "HTTP 403 A security error has occurred." }]);
    expect(strong.posted.map((p) => p.route)).toEqual(["/v2/manager/queue/task"]); // not started
  });

  it("takes a reboot's dropped connection as accepted and a 403 as the security level", async () => {
    const dropped = fakeApi({
      "/v2/manager/reboot": () => {
        throw new TypeError("Failed to fetch");
      },
    });
    expect(await reboot(dropped)).toEqual({ accepted: true });
    const strong = fakeApi({ "/v2/manager/reboot": () => new Response("", { status: 403 }) });
    expect(await reboot(strong)).toEqual({ accepted: false, refused: true, message: "HTTP 403" });
  });
});
