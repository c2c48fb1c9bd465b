import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ApiError, apiUrl, errorMessage, requestJson, serverErrorText } from "./api";

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

describe("coded errors", () => {
  afterEach(() => setLocale("en"));
  const missing = { error: "thread t1 does not exist", code: "not_found.thread", params: { thread: "t1" } };
  const refused = {
    error: "The latest message needs 9,000 tokens but only 4,000 fit …",
    code: "context.message_too_long",
    params: { needed: 9000, fit: 4000, model: "m", window: 8192, source: "Settings", reserve: 2048, margin: 144, tools: 0 },
  };

  it("shows the code's message in the user's language, from an HTTP error or a stream's error", async () => {
    setLocale("zh");
    const fetch = vi.fn(async () => new Response(JSON.stringify(missing), { status: 404 }));
    const error = await requestJson("/api/assistant/threads/t1", {}, fetch).catch((e: unknown) => e);
    expect(error).toEqual(new ApiError("对话 t1 不存在", 404, { code: "not_found.thread", params: { thread: "t1" } }));
    expect(errorMessage(error)).toBe("对话 t1 不存在");
    // the AI SDK hands a stream's errorText over as error.message
    expect(errorMessage(new Error(JSON.stringify(refused)))).toBe(
      "最新一条消息需要 9,000 个 token，但 m 的上下文只能容纳 4,000 个（窗口 8,192，来自 Settings；为回答预留 2,048，余量 144，工具占用 0）— 请缩短消息，或调大窗口（LLM_CONTEXT_WINDOW 或设置）。",
    );
    // a provider named in words, not by its product's name, is named in the user's language
    const unreachable = { error: "…", code: "provider.unreachable", params: { name: "The provider", url: "http://h:1/v1" } };
    expect(errorMessage(new Error(JSON.stringify(unreachable)))).toBe("无法连接到模型提供商（http://h:1/v1）— 请启动它，或在设置中配置模型提供商。");
    const ollama = { ...unreachable, params: { name: "Ollama", url: "http://h:11434/v1" } };
    expect(errorMessage(new Error(JSON.stringify(ollama)))).toMatch(/^无法连接到 Ollama（/);
    const broke = { error: "…", code: "provider.broken_stream", params: { subject: "the llama.cpp server" } };
    expect(errorMessage(new Error(JSON.stringify(broke)))).toBe("与 llama.cpp 服务器的连接在回答中途断开 — 已显示的部分会保留；请重试。");
    // no space left between a Japanese word ending in ー and the text after it
    setLocale("ja");
    const limited = { error: "…", code: "provider.rate_limit", params: { name: "The provider", detail: "slow down" } };
    expect(errorMessage(new Error(JSON.stringify(limited)))).toMatch(/^モデルプロバイダーによって/);
    setLocale("ar");
    expect(errorMessage(new Error(JSON.stringify(unreachable)))).toMatch(/^تعذّر الوصول إلى مزوّد النموذج على http/);
    setLocale("en");
    expect(errorMessage(new Error(JSON.stringify(missing)))).toBe("thread t1 does not exist");
    expect(errorMessage(new Error(JSON.stringify(unreachable)))).toBe(
      "The provider is not reachable at http://h:1/v1 — start it or set the provider in Settings.",
    );
  });

  it("shows the server's English for an uncoded error or a code the panel does not know", () => {
    setLocale("zh");
    expect(serverErrorText('{"error": "send {\\"id\\": ...}"}')).toBe('send {"id": ...}');
    const unknown = { error: "something new went wrong", code: "server.brand_new", params: {} };
    expect(serverErrorText(JSON.stringify(unknown))).toBe("something new went wrong");
    expect(errorMessage(new ApiError("plain", 400))).toBe("plain");
  });
});
