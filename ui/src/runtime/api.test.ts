import { describe, expect, it, vi } from "vitest";
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
