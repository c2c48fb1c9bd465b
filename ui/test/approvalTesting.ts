// For tests only: a chat whose model calls a tool that asks the user first (runtime/approvals.ts),
// over our server's routes answered in memory (fakeServer.ts).
import { generateId, isToolUIPart } from "ai";
import { vi } from "vitest";
import { ChatStore } from "../src/runtime/chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer, type ChatRequestBody, type Chunk } from "./fakeServer";
import { buildTxt2Img, createTestApp } from "./testing";

/** What our server answers a resubmit that carries a denied call: the call ends denied, then the model. */
export function deniedThenText(body: ChatRequestBody): Chunk[] {
  const last = body.messages.at(-1)!;
  const denied = last.parts.filter((p) => isToolUIPart(p) && p.state === "approval-responded" && p.approval.approved === false);
  const [, ...rest] = textAnswer("ok");
  return [{ type: "start", messageId: last.id }, ...denied.map((p) => ({ type: "tool-output-denied", toolCallId: (p as { toolCallId: string }).toolCallId })), ...rest];
}

/** A txt2img graph; the model calls `name` with `args` after the first message, and says "ok"
 * to everything else (a denied call ended first, as our server does). */
export function askingChat(name: string, args: (nodes: ReturnType<typeof buildTxt2Img>) => Record<string, unknown>, maxSteps = 25) {
  const t = createTestApp();
  const nodes = buildTxt2Img(t);
  const server = fakeServer((body) =>
    sseResponse(
      body.messages.length === 1 ? toolCallAnswer(name, args(nodes), "call_1", "a1") : deniedThenText(body),
    ),
  );
  vi.stubGlobal("fetch", server.fetch);
  const store = new ChatStore({ settings: { maxSteps, debugContext: false, askBeforeEdits: true }, tools: () => t.tools, rememberThread: false });
  const entry = store.entryFor(`__LOCALID_deny_${generateId()}`, undefined);
  return { t, nodes, server, store, entry };
}
