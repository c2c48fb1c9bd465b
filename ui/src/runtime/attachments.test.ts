import { describe, expect, it } from "vitest";
import { attachmentSrc, fileBase64, ServerAttachments, type ServerAttachment } from "./attachments";
import { ApiError } from "../server/api";
import { setLocale } from "../i18n";

const STORED: ServerAttachment = {
  id: "att_1",
  url: "attachment:att_1",
  name: "out.png",
  mediaType: "image/png",
  kind: "comfy-image",
  size: 5,
  tokens: 900,
  summary: "PNG 64×48, ComfyUI workflow, 7 nodes",
  note: "",
  width: 64,
  height: 48,
  workflow: true,
  room: 20000,
  vision: true,
};

function server(answer: (path: string, init: { method?: string; body?: unknown }) => unknown) {
  const calls: { path: string; method: string; body?: unknown }[] = [];
  const request = async <T,>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
    calls.push({ path, method: init.method ?? "GET", body: init.body });
    return answer(path, init) as T;
  };
  return { calls, request: request as never };
}

async function all<T>(gen: AsyncGenerator<T, void>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of gen) out.push(item);
  return out;
}

describe("ServerAttachments", () => {
  it("sends the file at once, then the message holds only its attachment url", async () => {
    const { calls, request } = server(() => STORED);
    const adapter = new ServerAttachments(() => "thread-9", request);
    const file = new File([new Uint8Array([137, 80, 78, 71, 13])], "out.png", { type: "image/png" });
    const states = await all(adapter.add({ file }));
    expect(states.map((s) => s.status.type)).toEqual(["running", "requires-action"]);
    expect(calls).toEqual([
      { path: "/api/assistant/attachments", method: "POST", body: { thread: "thread-9", name: "out.png", data: "iVBORw0=" } },
    ]);
    const last = states[1]!;
    expect(adapter.uploaded.get(last.id)).toEqual(STORED);
    const sent = await adapter.send(last);
    expect(sent.status).toEqual({ type: "complete" });
    expect(sent.content).toEqual([{ type: "file", data: "attachment:att_1", mimeType: "image/png", filename: "out.png" }]);
    // a sent file stays with its message: removing its chip deletes nothing on the server
    await adapter.remove(sent);
    expect(calls).toHaveLength(1);
  });

  it("says which file was not attached when one is sent that never reached the server, in the user's language", async () => {
    const adapter = new ServerAttachments(() => "thread-9", server(() => STORED).request);
    const file = new File([new Uint8Array([1])], "out.png", { type: "image/png" });
    const never = { id: "local-x", type: "image" as const, name: "out.png", contentType: "image/png", file, status: { type: "requires-action" as const, reason: "composer-send" as const } };
    await expect(adapter.send(never)).rejects.toThrow("out.png was not attached");
    setLocale("zh");
    try {
      await expect(adapter.send(never)).rejects.toThrow("out.png 未能添加");
    } finally {
      setLocale("en");
    }
  });

  it("removes a draft on the server, and a refusal carries the server's reason", async () => {
    const { calls, request } = server((path, init) => {
      if (init.method === "DELETE") return { deleted: "att_1" };
      if (calls.length > 2) throw new ApiError("huge.txt is about 41,200 tokens, but m's 8,192-token window has room for about 5,100", 413);
      return STORED;
    });
    const adapter = new ServerAttachments(() => "t", request);
    const [, ready] = await all(adapter.add({ file: new File(["x"], "a.txt") }));
    await adapter.remove(ready!);
    expect(calls.at(-1)).toEqual({ path: "/api/assistant/attachments/att_1", method: "DELETE", body: undefined });
    await expect(all(adapter.add({ file: new File(["x"], "huge.txt") }))).rejects.toThrow(/41,200 tokens.*room for about 5,100/);
  });

  it("shows sent files from the server by id, and reads files as base64", async () => {
    expect(attachmentSrc("attachment:att_1")).toBe("/api/assistant/attachments/att_1");
    expect(attachmentSrc("data:image/png;base64,xx")).toBeNull();
    expect(await fileBase64(new Blob(["hello"]))).toBe("aGVsbG8=");
  });
});
