import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { setLocale } from "../i18n";
import { sampleJob, sampleScan } from "../../test/installFixtures";
import { DownloadCards, FindMissingCards } from "./InstallCards";

const fetched: { method: string; path: string }[] = [];

function serve(status: number, body: unknown): void {
  vi.stubGlobal("fetch", async (path: string, init: RequestInit = {}) => {
    fetched.push({ method: init.method ?? "GET", path });
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  });
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetched.length = 0;
  setLocale("en");
});
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

describe("findMissing's cards", () => {
  it("show each pack and model in full, read from the server's stored scan", async () => {
    serve(200, sampleScan("scan_c1"));
    const { container } = render(<FindMissingCards result={{ ok: true, scan: "scan_c1" }} />);
    await screen.findByText("ComfyUI Impact Pack");
    expect(fetched).toEqual([{ method: "GET", path: "/api/assistant/installs/scan/scan_c1" }]);
    const pack = container.querySelector('[data-kind="pack"]')!;
    expect(pack.textContent).toContain("by Dr.Lt.Data");
    expect(pack.textContent).toContain("installed but disabled");
    expect(pack.textContent).toContain("This extension offers various detector nodes");
    expect(pack.textContent).toContain("Licence: unknown");
    expect(pack.textContent).toContain("Size: unknown");
    expect(pack.textContent).toContain("Provides: AddMask");
    expect(screen.getByRole("link", { name: "Repository" }).getAttribute("href")).toBe("https://github.com/ltdrdata/ComfyUI-Impact-Pack");
    expect(screen.getByText("No known pack provides Mystery")).toBeTruthy();
    const [checkpoint, old] = [...container.querySelectorAll('[data-kind="model"]:not([data-present])')];
    expect(checkpoint!.textContent).toContain("Folder: checkpoints");
    expect(checkpoint!.textContent).toContain("From: huggingface.co");
    expect(checkpoint!.textContent).toContain("Size: 2.1 GB");
    expect(checkpoint!.textContent).toContain("sha256 known: checked after the download");
    expect(checkpoint!.textContent).not.toContain("pickle");
    expect(old!.textContent).toContain("pickle format: loading it can run code");
    expect(old!.textContent).toContain("no sha256 known");
    expect(old!.textContent).toContain("cannot be downloaded: the download address is not an https URL");
    expect(container.querySelector('[data-present="true"]')!.textContent).toContain("vae.safetensors" + "already downloaded");
  });

  it("say in the user's words what Manager's missing model list means for them (issue 35)", async () => {
    const scan = sampleScan("scan_nl");
    scan.sources = { ...scan.sources, modelList: false, modelListLegacyUiOnly: true };
    serve(200, scan);
    const { container } = render(<FindMissingCards result={{ ok: true, scan: "scan_nl" }} />);
    await screen.findByText("ComfyUI Impact Pack");
    expect(screen.getByText(/^Download addresses come only from the workflow/).textContent).toBe(
      "Download addresses come only from the workflow: this ComfyUI-Manager does not offer its model list. For a model without an address, search for its file name on Hugging Face or Civitai.",
    );
    expect(container.textContent).not.toMatch(/legacy|getlist|--enable/);
  });

  it("say so when the server no longer has the scan", async () => {
    serve(404, { error: "scan scan_gone does not exist", code: "not_found.scan", params: { id: "scan_gone" } });
    render(<FindMissingCards result={{ ok: true, scan: "scan_gone" }} />);
    expect(await screen.findByText(/no longer on the server/)).toBeTruthy();
  });

  it("in Chinese", async () => {
    setLocale("zh");
    serve(200, sampleScan("scan_zh"));
    const { container } = render(<FindMissingCards result={{ ok: true, scan: "scan_zh" }} />);
    await screen.findByText("ComfyUI Impact Pack");
    const pack = container.querySelector('[data-kind="pack"]')!;
    expect(pack.textContent).toContain("已安装但已禁用");
    expect(pack.textContent).toContain("许可证：未知");
    expect(container.querySelector('[data-kind="model"]')!.textContent).toContain("大小：2.1 GB"); // (bytes, formatted here)
    expect(container.textContent).toContain("pickle 格式：加载时可能运行代码");
  });
});

describe("downloadModels' cards", () => {
  it("show bytes, percent, speed and time left while it runs, and Cancel calls DELETE", async () => {
    serve(200, sampleJob({ state: "cancelled" }));
    const { container } = render(<DownloadCards progress={{ downloads: [sampleJob()] }} result={undefined} />);
    const row = container.querySelector('[data-kind="download"]')!;
    expect(row.textContent).toContain("25% · 500 MB of 2 GB · 25 MB/s · 60 s left");
    expect(row.querySelector("progress")!.getAttribute("value")).toBe("25");
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(fetched).toEqual([{ method: "DELETE", path: "/api/assistant/installs/downloads/job1" }]));
  });

  it("show each model's end, a failure in the user's language", () => {
    setLocale("zh");
    const models = [
      { name: "a.safetensors", status: "done" },
      { name: "b.safetensors", status: "already-present" },
      { name: "c.safetensors", status: "cancelled" },
      { name: "d.safetensors", status: "failed", error: "x.co could not be reached to download d.safetensors", code: "download.unreachable", params: { host: "x.co", name: "d.safetensors" } },
    ];
    const { container } = render(<DownloadCards progress={undefined} result={{ ok: true, models }} />);
    const states = [...container.querySelectorAll(".cua-install-state")].map((s) => s.textContent);
    expect(states).toEqual(["完成", "已存在", "已取消", "失败"]);
    expect(container.querySelector(".cua-install-warning")!.textContent).toContain("x.co");
    expect(container.querySelector(".cua-install-warning")!.textContent).not.toContain("could not be reached");
  });
});
