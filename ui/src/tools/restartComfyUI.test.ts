// Waiting for ComfyUI to come back asks our backend only once ComfyUI's own socket is back: a
// request to a server that is down logs a console error whatever catches it (issue 35: about 29
// during one restart). The whole restart against the stand-in: ui/e2e/installs.test.mjs.
import { afterEach, describe, expect, it, vi } from "vitest";
import { waitForRestart } from "./restartComfyUI";
import { TestApi } from "../../test/testing";

afterEach(() => vi.unstubAllGlobals());

/** Our backend's probe: when each ask came (ms from now); `up(n)`: whether the n-th ask is answered. */
function backend(up: (n: number) => boolean): number[] {
  const asked: number[] = [];
  const started = Date.now();
  vi.stubGlobal("fetch", async () => {
    asked.push(Date.now() - started);
    if (!up(asked.length)) throw new TypeError("Failed to fetch");
    return new Response("{}", { status: 200 });
  });
  return asked;
}

describe("waitForRestart", () => {
  it("asks the backend once, after the socket reconnected, not while ComfyUI is down", async () => {
    const api = new TestApi();
    const asked = backend(() => true);
    setTimeout(() => api.emit("reconnecting", null), 20);
    setTimeout(() => api.emit("reconnected", null), 300);
    const back = await waitForRestart(api, { probeMs: 10_000, tickMs: 10 });
    expect(back?.socket).toBe(true);
    expect(asked.length).toBe(1);
    expect(asked[0]).toBeGreaterThanOrEqual(290);
    expect(api.listenerCount()).toBe(0);
  });

  it("without any sign from the socket asks rarely, doubling the wait, and counts an answer after a failure", async () => {
    const api = new TestApi();
    const asked = backend((n) => n >= 3);
    const back = await waitForRestart(api, { probeMs: 50, tickMs: 5, socketGraceMs: 30 });
    expect(back?.socket).toBe(false);
    expect(asked.length).toBe(3);
    // 50 ms, then 50 more, then 100 more (doubled)
    expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(45);
    expect(asked[2]! - asked[1]!).toBeGreaterThanOrEqual(95);
  });

  it("does not take the old process's answer, before any sign of the restart, as the new one", async () => {
    const api = new TestApi();
    let asked = 0;
    vi.stubGlobal("fetch", async () => {
      asked += 1;
      return new Response("{}", { status: 200 });
    });
    expect(await waitForRestart(api, { timeoutMs: 200, probeMs: 50, tickMs: 5 })).toBeNull();
    expect(asked).toBeGreaterThanOrEqual(1);
  });
});
