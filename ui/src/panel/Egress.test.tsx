import "./reactTestEnv";
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer } from "../runtime/fakeServer";
import { StoreContext } from "./context";
import { travelsInClear } from "./Egress";
import { Settings } from "./Settings";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setLocale("en");
});

function renderSettings() {
  const server = fakeServer(() => sseResponse(textAnswer("ok")));
  vi.stubGlobal("fetch", server.fetch);
  const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
  render(
    <StoreContext.Provider value={store}>
      <Settings />
    </StoreContext.Provider>,
  );
  return server;
}

const block = async () => within(await screen.findByRole("region", { name: "Where your requests go" }));

describe("Where your requests go", () => {
  it("names the provider's origin only, and what is sent there and what never leaves", async () => {
    renderSettings();
    const where = await block();
    const text = (await screen.findByRole("region", { name: "Where your requests go" })).textContent ?? "";
    expect(where.getAllByText("http://127.0.0.1:11434")).toHaveLength(2); // where, and where the key goes
    expect(text).not.toContain("/v1");
    expect(text).toContain("To http://127.0.0.1:11434 (Ollama), and nowhere else.");
    for (const sent of ["your messages", "The workflow when a tool reads it", "Attached files", "project documents", "only when the model sees images", "A delegated task"]) {
      expect(text).toContain(sent);
    }
    expect(text).toContain("the API key goes only to http://127.0.0.1:11434");
    expect(text).toContain("Nothing else is contacted");
    expect(where.queryByRole("note")).toBeNull(); // loopback: nothing crosses a network
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
    const text = (await screen.findByRole("region", { name: "你的请求发往何处" })).textContent ?? "";
    expect(text).toContain("只发往 http://127.0.0.1:11434（Ollama），不会发往其他任何地方。");
    expect(text).toContain("API 密钥只发往 http://127.0.0.1:11434");
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
