import type { ThreadMessage } from "@assistant-ui/react";
import { describe, expect, it } from "vitest";
import { rowsForATask } from "./MessageList";

const text = (chars: number) => ({ role: "assistant", content: [{ type: "text", text: "x".repeat(chars) }] }) as unknown as ThreadMessage;
const toolOnly = () => ({ role: "assistant", content: [{ type: "tool-call", toolName: "getWorkflow", args: {} }] }) as unknown as ThreadMessage;

describe("rowsForATask: the rows one browser task mounts, counted back from the end", () => {
  it("takes four ordinary rows, and fewer when fewer are left", () => {
    const thread = Array.from({ length: 10 }, () => text(500));
    expect(rowsForATask(thread, 10)).toBe(4);
    expect(rowsForATask(thread, 6)).toBe(4);
    expect(rowsForATask(thread, 2)).toBe(2);
    expect(rowsForATask(thread, 0)).toBe(0);
  });

  it("takes one row when it is a long answer, also one that alone is over the budget", () => {
    const thread = [text(500), text(500), text(30_000)];
    expect(rowsForATask(thread, 3)).toBe(1);
    expect(rowsForATask(thread, 2)).toBe(2);
  });

  it("weighs rows by their text: three of 2,000 characters, and a folded tool card as an ordinary row", () => {
    expect(rowsForATask(Array.from({ length: 6 }, () => text(2_000)), 6)).toBe(3);
    expect(rowsForATask(Array.from({ length: 6 }, toolOnly), 6)).toBe(4);
  });
});
