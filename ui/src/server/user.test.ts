// Every request to our routes names ComfyUI's user (`Comfy-User`), as ComfyUI's `api.fetchApi`
// does: the JSON routes and the chat's stream alike (api.ts followUser).
import { afterEach, describe, expect, it, vi } from "vitest";
import { followUser, requestJson } from "./api";
import { attachmentSrc } from "../runtime/attachments";
import { newOnlyTransport, SentMessages } from "../runtime/sentMessages";

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.removeItem("Comfy.userId");
  followUser(() => undefined);
});

function recording(): { users: (string | null)[] } {
  const users: (string | null)[] = [];
  vi.stubGlobal("fetch", async (_input: RequestInfo | URL, init?: RequestInit) => {
    users.push(new Headers(init?.headers).get("Comfy-User"));
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  return { users };
}

const loaded = { offset: () => 0, allBefore: async () => [] };

describe("the Comfy-User header", () => {
  it("names the host's api.user on JSON requests and on the chat's stream", async () => {
    const { users } = recording();
    let user = "";
    followUser(() => user);
    await requestJson("/api/assistant/threads");
    user = "alice_4f2a";
    await requestJson("/api/assistant/threads", { method: "POST", body: { id: "t" } });
    const chat = newOnlyTransport(new SentMessages(), loaded);
    await chat.fetch("/api/assistant/chat", { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(users).toEqual(["", "alice_4f2a", "alice_4f2a"]); // ("" as fetchApi sends it before a login)
  });

  it("falls back to ComfyUI's stored user, and sends none without one", async () => {
    const { users } = recording();
    await requestJson("/api/assistant/threads");
    localStorage.setItem("Comfy.userId", "bob_77");
    await requestJson("/api/assistant/threads");
    expect(users).toEqual([null, "bob_77"]);
  });

  it("names the user in the query of an attachment's URL, which an <img src> loads without a header", () => {
    expect(attachmentSrc("attachment:att_1")).toBe("/api/assistant/attachments/att_1"); // (no user: as it was)
    localStorage.setItem("Comfy.userId", "bob_77");
    expect(attachmentSrc("attachment:att_1")).toBe("/api/assistant/attachments/att_1?user=bob_77");
    followUser(() => "alice & co/1");
    expect(attachmentSrc("attachment:att 2")).toBe("/api/assistant/attachments/att%202?user=alice%20%26%20co%2F1");
    followUser(() => ""); // single-user ComfyUI: api.user is ""
    expect(attachmentSrc("attachment:att_1")).toBe("/api/assistant/attachments/att_1");
  });
});
