import { describe, expect, it } from "vitest";
import type { ProviderSettings } from "../server/api";
import { setLocale } from "../i18n";
import { FormError, formFrom, providerName, providerUpdate, sourceLabel } from "./providerForm";

const saved: ProviderSettings = {
  baseUrl: "http://127.0.0.1:11434/v1",
  origin: "http://127.0.0.1:11434",
  model: "qwen3:8b",
  contextWindow: null,
  maxOutputTokens: 2048,
  timeoutSeconds: 300,
  apiKeySet: true,
  provider: "Ollama",
  sources: { baseUrl: "environment", maxOutputTokens: "settings", apiKey: "environment" },
};

describe("the provider form", () => {
  it("starts from the saved settings, never with the key", () => {
    expect(formFrom(saved)).toEqual({
      baseUrl: "http://127.0.0.1:11434/v1",
      model: "qwen3:8b",
      apiKey: "",
      contextWindow: "",
      maxOutputTokens: "2048",
    });
  });

  it("sends nothing when nothing changed", () => {
    expect(providerUpdate(formFrom(saved), saved)).toEqual({});
  });

  it("sends only the changes; an emptied field resets it", () => {
    const form = { ...formFrom(saved), model: " llama3.1 ", contextWindow: "32768", maxOutputTokens: "" };
    expect(providerUpdate(form, saved)).toEqual({ model: "llama3.1", contextWindow: 32768, maxOutputTokens: null });
    expect(providerUpdate({ ...formFrom(saved), model: "" }, saved)).toEqual({ model: null });
  });

  it("sends the key only when one was typed", () => {
    expect(providerUpdate({ ...formFrom(saved), apiKey: "  sk-123 " }, saved)).toEqual({ apiKey: "sk-123" });
  });

  it("refuses numbers that are not whole token counts", () => {
    expect(() => providerUpdate({ ...formFrom(saved), contextWindow: "8k" }, saved)).toThrow(FormError);
    expect(() => providerUpdate({ ...formFrom(saved), maxOutputTokens: "1.5" }, saved)).toThrow(FormError);
  });

  it("says what to fix in the panel's language", () => {
    setLocale("zh");
    try {
      expect(() => providerUpdate({ ...formFrom(saved), contextWindow: "8k" }, saved)).toThrow("上下文窗口必须是整数个 token（留空则自动设置）。");
      expect(sourceLabel(saved, "baseUrl")).toBe("来自环境变量");
      expect([providerName("Ollama"), providerName("The provider"), providerName("The llama.cpp server")]).toEqual(["Ollama", "模型提供商", "llama.cpp 服务器"]);
    } finally {
      setLocale("en");
    }
    expect(() => providerUpdate({ ...formFrom(saved), contextWindow: "8k" }, saved)).toThrow(
      "Context window must be a whole number of tokens (or empty for automatic).",
    );
  });

  it("names where a value comes from", () => {
    expect(sourceLabel(saved, "baseUrl")).toBe("from the environment");
    expect(sourceLabel(saved, "maxOutputTokens")).toBe("set here");
    expect(sourceLabel(saved, "model")).toBe("default");
  });
});
