import "../../test/reactTestEnv";
// The external agent line: hidden until an MCP client's call reaches the page; then the client's
// name, its calls, and the approval card marked with its name (Deny with words reaches the relay);
// Disconnect closes the page's relay stream.
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { relayServer } from "../../test/mcpRelayServer";
import { buildTxt2Img, createTestApp } from "../../test/testing";
import { ChatStore } from "../runtime/chatStore";
import { StoreContext } from "./context";
import { ExternalAgent } from "./ExternalAgent";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("the external agent line", () => {
  it("shows the client, its calls and its approval card; Deny sends the words; Disconnect stops the stream", async () => {
    const t = createTestApp();
    const nodes = buildTxt2Img(t);
    const server = relayServer();
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ tools: () => t.tools, rememberThread: false });
    const { container } = render(
      <StoreContext.Provider value={store}>
        <ExternalAgent />
      </StoreContext.Provider>,
    );
    void store.mcp.start();
    await waitFor(() => expect(store.mcp.connected).toBe(true));
    expect(container.innerHTML).toBe(""); // (no client yet)

    server.send("call", { callId: "a", name: "removeNodes", input: { nodeIds: [String(nodes.decode.id)] }, client: { name: "cursor", version: "1.4" } });
    const line = await screen.findByRole("region", { name: "External agent" });
    await within(line).findByText("External agent (MCP): cursor 1.4");
    within(line).getByText("cursor (an MCP client) asks:");
    const card = within(line).getByRole("group", { name: "The assistant asks before it acts" });
    within(card).getByText("Allow graph edits from cursor without asking");
    fireEvent.change(within(card).getByRole("textbox", { name: "Why not? (optional, sent with Deny)" }), { target: { value: "not now" } });
    fireEvent.click(within(card).getByRole("button", { name: "Deny" }));
    await waitFor(() => expect(server.posted).toHaveLength(1));
    expect(server.posted[0]!.body).toEqual({ panel: store.mcp.panelId, callId: "a", denied: "not now" });
    expect(t.graph.getNodeById(nodes.decode.id)).toBeTruthy();
    // (nothing changed: no "put the graph back")
    expect(within(line).queryByRole("button", { name: "Put the graph back as it was before these calls" })).toBeNull();

    fireEvent.click(within(line).getByRole("button", { name: "Calls: 1" }));
    expect(within(line).getByRole("listitem").textContent).toContain("removeNodes denied");
    fireEvent.click(within(line).getByRole("button", { name: "Disconnect" }));
    expect(store.mcp.connected).toBe(false);
    await within(line).findByText("External agent (MCP): cursor 1.4. This page takes no MCP calls now");
    within(line).getByRole("button", { name: "Take MCP calls again" });
  });
});
