import "../../test/reactTestEnv";
// The approval card in the panel, through assistant-ui's runtime (issue 35, item 1): the user's
// words go with Deny, and a denial the chat did not resubmit (one step allowed) is sent with the
// next message as denied, not rewritten as cancelled by the runtime.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { isToolUIPart } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { askingChat } from "../../test/approvalTesting";
import { Panel } from "./Panel";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

async function send(text: string) {
  const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
  fireEvent.change(box, { target: { value: text } });
  await waitFor(() => expect(box.value).toBe(text));
  fireEvent.click(screen.getByRole("button", { name: "Send" }));
}

describe("the approval card", () => {
  it("sends the user's words with Deny, and the next message keeps the call denied", async () => {
    const { server, store, t, nodes } = askingChat("removeNodes", (n) => ({ nodeIds: [String(n.decode.id)] }), 1);
    render(<Panel store={store} />);
    await send("remove the decoder");
    const card = await screen.findByRole("group", { name: "The assistant asks before it acts" });
    fireEvent.change(within(card).getByRole("textbox", { name: "Why not? (optional, sent with Deny)" }), { target: { value: " it feeds my preview " } });
    fireEvent.click(within(card).getByRole("button", { name: "Deny" }));
    await waitFor(() => expect(screen.queryByRole("group", { name: "The assistant asks before it acts" })).toBeNull());
    expect(server.chatRequests).toHaveLength(1); // (one step allowed: the denial waits for the next message)
    await send("hi");
    await waitFor(() => expect(server.chatRequests).toHaveLength(2));
    const part = server.chatRequests[1]!.messages.flatMap((m) => m.parts).find(isToolUIPart);
    expect(part).toMatchObject({
      state: "output-denied",
      approval: { id: "approval_call_1", approved: false, reason: "it feeds my preview" },
    });
    expect(part).not.toHaveProperty("errorText");
    expect(t.app.graph.getNodeById(nodes.decode.id)).toBeTruthy();
  });
});
