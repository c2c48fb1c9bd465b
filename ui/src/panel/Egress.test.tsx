import "../../test/reactTestEnv";
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer } from "../../test/fakeServer";
import { StoreContext } from "./context";
import { travelsInClear } from "./Egress";
import { Settings } from "./Settings";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setLocale("en");
});

function renderSettings(server = fakeServer(() => sseResponse(textAnswer("ok")))) {
  vi.stubGlobal("fetch", server.fetch);
  const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
  render(
    <StoreContext.Provider value={store}>
      <Settings />
    </StoreContext.Provider>,
  );
  return server;
}

async function waitForDestinations(): Promise<HTMLElement[]> {
  const where = await block();
  await where.findAllByText(/COMFY_ASSISTANT_OFFLINE is/);
  return Array.from(document.querySelectorAll<HTMLElement>(".cua-egress-destinations > li"));
}

const block = async () => within(await screen.findByRole("region", { name: "Where your requests go" }));

describe("Where your requests go", () => {
  it("lists each destination the server names, with its addresses and what the offline switch turns off", async () => {
    renderSettings();
    const where = await block();
    const items = await waitForDestinations();
    expect(items.map((li) => [li.dataset.kind, li.textContent])).toEqual([
      ["provider", "http://127.0.0.1:11434: the provider (Ollama). The chat, summaries, a delegated task, the Test button, and questions that size requests (its context window, what the model can do, token counts)."],
      ["manager", "this ComfyUI's own address: ComfyUI-Manager. A scan for missing nodes and models asks for its node map, installed packs and model list."],
      ["registry", "https://api.comfy.org:443: the Comfy Registry, when a scan finds missing node packs. The names of node types no map places or whose pack ComfyUI-Manager knows only by its repository, and the ids of the packs found (for their licence and details); nothing else. COMFY_ASSISTANT_OFFLINE=1 turns it off."],
      ["modelSizes", "https://huggingface.co:443, https://civitai.com:443: the host of each missing model, when a scan finds missing model files. One HEAD request to its address for its size, with no key, cookie or body. COMFY_ASSISTANT_OFFLINE=1 turns it off."],
      ["downloads", "https://huggingface.co:443, https://civitai.com:443: a model file, only when you approve its download; with no key, cookie or token, a redirect followed only to https (e.g. Hugging Face's CDN)."],
    ]);
    const text = (await screen.findByRole("region", { name: "Where your requests go" })).textContent ?? "";
    expect(text).not.toContain("/v1");
    expect(text).toContain("COMFY_ASSISTANT_OFFLINE is not set: the lookups it would turn off are made.");
    for (const sent of ["your messages", "The workflow when a tool reads it", "Attached files", "project documents", "only when the model sees images", "A delegated task"]) {
      expect(text).toContain(sent);
    }
    expect(text).toContain("the API key goes only to http://127.0.0.1:11434");
    expect(text).toContain("no download you did not approve");
    expect(text).not.toContain("no download;");
    expect(where.queryByRole("note")).toBeNull(); // loopback: nothing crosses a network
  });

  it("says what the offline switch turned off, and what is not used without its setting", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("ok")));
    server.egress.offline = true;
    server.provider.provider = "The provider"; // one the server cannot name
    server.egress.entries = [
      { kind: "provider", hosts: [], offlineOff: false, unused: null },
      { kind: "comfyui", hosts: [], offlineOff: false, unused: "noComfyUI" },
      { kind: "registry", hosts: ["https://api.comfy.org:443"], offlineOff: true, unused: "offline" },
    ];
    renderSettings(server);
    const items = await waitForDestinations();
    expect(items.map((li) => [li.dataset.kind, li.querySelector("strong")?.textContent ?? null])).toEqual([
      ["provider", null],
      ["comfyui", " Not used: COMFYUI_URL is not set."],
      ["registry", " Off now: COMFY_ASSISTANT_OFFLINE is set."],
    ]);
    expect(items[0]?.textContent).toMatch(/^http:\/\/127\.0\.0\.1:11434: the provider\. The chat,/);
    expect(items[1]?.textContent).toMatch(/^COMFYUI_URL: ComfyUI at COMFYUI_URL\. A run's images/);
    const text = (await screen.findByRole("region", { name: "Where your requests go" })).textContent ?? "";
    expect(text).toContain("COMFY_ASSISTANT_OFFLINE is set: what it turns off is not asked. A model you approve is still downloaded.");
  });

  it("follows a saved base URL: its origin, never its path; plain http to another machine is flagged", async () => {
    const server = renderSettings();
    const url = await screen.findByLabelText("Base URL");
    fireEvent.change(url, { target: { value: "http://gpu-box.lan:8080/v1/tok-abc123" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    const where = await block();
    await where.findAllByText("http://gpu-box.lan:8080");
    const text = (await screen.findByRole("region", { name: "Where your requests go" })).textContent ?? "";
    expect(text).not.toContain("tok-abc123");
    expect(where.getByRole("note").textContent).toMatch(/plain http: what is sent crosses the network unencrypted/);
    expect(server.providerPuts).toEqual([{ baseUrl: "http://gpu-box.lan:8080/v1/tok-abc123" }]);
  });

  it("speaks the panel's language: Settings and where requests go in Chinese", async () => {
    setLocale("zh");
    renderSettings();
    const where = within(await screen.findByRole("region", { name: "你的请求发往何处" }));
    await where.findByText(/未设置 COMFY_ASSISTANT_OFFLINE/);
    const zh = (await screen.findByRole("region", { name: "你的请求发往何处" })).textContent ?? "";
    expect(zh).toContain("http://127.0.0.1:11434：服务提供方（Ollama）。");
    expect(zh).toContain("https://api.comfy.org:443：Comfy Registry");
    expect(zh).toContain("COMFY_ASSISTANT_OFFLINE=1 会关闭它。");
    expect(zh).toContain("API 密钥只发往 http://127.0.0.1:11434");
    expect(await screen.findByLabelText("基础 URL")).toBeTruthy();
    expect(screen.getByRole("button", { name: "保存" })).toBeTruthy();
    expect(screen.getByLabelText("每条消息的步数上限")).toBeTruthy();
  });

  it("flags plain http only when it leaves this machine", () => {
    expect(travelsInClear("http://127.0.0.1:11434")).toBe(false);
    expect(travelsInClear("http://localhost:1234")).toBe(false);
    expect(travelsInClear("http://[::1]:8080")).toBe(false);
    expect(travelsInClear("https://api.openai.com:443")).toBe(false);
    expect(travelsInClear("http://192.168.1.20:11434")).toBe(true);
    expect(travelsInClear("http://127.0.0.1.evil.example:80")).toBe(true);
  });
});
