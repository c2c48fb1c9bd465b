import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { Chat } from "@ai-sdk/react";
import { act, cleanup, render } from "@testing-library/react";
import type { UIMessage, UIMessageChunk } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { useChatStatus } from "./context";

/** A chat whose answers are the chunks the test writes to `answer`. */
function chatWithAnswer() {
  let write: ((chunk: UIMessageChunk) => void) | null = null;
  let close: (() => void) | null = null;
  const chat = new Chat<UIMessage>({
    transport: {
      sendMessages: async () =>
        new ReadableStream<UIMessageChunk>({
          start(controller) {
            write = (chunk) => controller.enqueue(chunk);
            close = () => controller.close();
          },
        }),
      reconnectToStream: async () => null,
    },
  });
  return { chat, write: (chunk: UIMessageChunk) => write?.(chunk), close: () => close?.() };
}

afterEach(cleanup);
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

describe("useChatStatus", () => {
  it("re-renders when the status changes, not for each streamed chunk", async () => {
    const { chat, write, close } = chatWithAnswer();
    const seen: string[] = [];
    const Status = () => {
      const status = useChatStatus(chat);
      seen.push(status);
      return <span>{status}</span>;
    };
    const view = render(<Status />);
    expect(seen).toEqual(["ready"]);
    let sent!: Promise<void>;
    await act(async () => {
      sent = chat.sendMessage({ text: "hello" });
      await new Promise((r) => setTimeout(r, 10));
    });
    await act(async () => {
      write({ type: "start" });
      write({ type: "text-start", id: "t" });
      for (const word of ["one ", "two ", "three ", "four ", "five"]) {
        write({ type: "text-delta", id: "t", delta: word });
        await new Promise((r) => setTimeout(r, 5));
      }
      write({ type: "text-end", id: "t" });
      write({ type: "finish" });
      close();
      await sent;
    });
    expect(chat.messages.at(-1)?.parts).toContainEqual(expect.objectContaining({ type: "text", text: "one two three four five" }));
    expect(seen).toEqual(["ready", "submitted", "streaming", "ready"]);
    expect(view.container.textContent).toBe("ready");
  });
});
