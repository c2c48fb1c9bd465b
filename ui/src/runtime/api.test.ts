import { describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ApiError, apiUrl, requestJson, serverErrorText } from "./api";

describe("serverErrorText", () => {
  it("reads our routes' {error} bodies", () => {
    expect(serverErrorText('{"error": "thread x does not exist"}')).toBe("thread x does not exist");
    expect(serverErrorText('{"error": {"message": "nested"}}')).toBe("nested");
  });
  it("keeps plain text and falls back when empty", () => {
    expect(serverErrorText("Ollama is not reachable at http://x")).toBe("Ollama is not reachable at http://x");
    expect(serverErrorText("{not json")).toBe("{not json");
    expect(serverErrorText("  ", "fallback")).toBe("fallback");
  });
});

describe("requestJson", () => {
  it("uses our paths as they are (no second /api)", async () => {
    expect(apiUrl("/api/assistant/chat")).toBe("/api/assistant/chat");
    const fetch = vi.fn(async () => new Response('{"ok":1}', { status: 200 }));
    expect(await requestJson("/api/x", { method: "POST", body: { a: 1 } }, fetch)).toEqual({ ok: 1 });
    expect(fetch).toHaveBeenCalledWith("/api/x", {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: '{"a":1}',
    });
  });
  it("raises the server's message", async () => {
    const fetch = vi.fn(async () => new Response('{"error":"bad title"}', { status: 400 }));
    await expect(requestJson("/api/x", {}, fetch)).rejects.toEqual(new ApiError("bad title", 400));
  });
});

describe("the panel's own request errors", () => {
  it("say in the user's language that the server is not reachable", async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError("Failed to fetch");
    });
    await expect(requestJson("/api/x", {}, fetch)).rejects.toEqual(new ApiError("The ComfyUI server is not reachable (TypeError: Failed to fetch).", 0));
    setLocale("zh");
    try {
      await expect(requestJson("/api/x", {}, fetch)).rejects.toEqual(new ApiError("无法连接到 ComfyUI 服务器（TypeError: Failed to fetch）。", 0));
      expect(serverErrorText("")).toBe("请求失败。");
    } finally {
      setLocale("en");
    }
  });
});
