import "../../test/reactTestEnv";
// The external agent line: hidden until an MCP client connects (the relay stream's `clients`
// event); then the client's name and since when, its calls, and the approval card marked with
// its name (Deny with words reaches the relay); Disconnect asks the server to end the client, which
// is then listed as disconnected, with "Allow again".
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
  it("shows the client from its connection, its calls and its approval card; Deny sends the words; Disconnect and Allow again reach the server", async () => {
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
    server.send("clients", { clients: [], disconnected: [] });
    expect(container.innerHTML).toBe(""); // (no client yet)

    const since = "2026-11-29T03:04:05+00:00";
    server.send("clients", { clients: [{ id: "s1", name: "cursor", version: "1.4", since }], disconnected: [] });
    const line = await screen.findByRole("region", { name: "External agent" });
    await within(line).findByText("External agent (MCP): cursor 1.4"); // (before any call)
    within(line).getByText(`cursor 1.4, connected at ${new Date(since).toLocaleTimeString()}`);

    server.send("call", { callId: "a", name: "removeNodes", input: { nodeIds: [String(nodes.decode.id)] }, client: { name: "cursor", version: "1.4", session: "s1" } });
    await within(line).findByText("cursor (an MCP client) asks:");
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
    within(within(line).getByRole("listitem")).getByText("cursor"); // (whose call it was)
    fireEvent.click(within(line).getByRole("button", { name: "Disconnect" }));
    await waitFor(() => expect(server.posted).toHaveLength(2));
    expect(server.posted[1]).toEqual({ path: "/api/assistant/mcp/panel/disconnect", body: { session: "s1" } });
    server.send("clients", { clients: [], disconnected: ["cursor"] });
    await within(line).findByText("External agent (MCP): no client connected now");
    within(line).getByText("cursor: disconnected by you; it cannot connect until you allow it");
    fireEvent.click(within(line).getByRole("button", { name: "Allow again" }));
    await waitFor(() => expect(server.posted).toHaveLength(3));
    expect(server.posted[2]).toEqual({ path: "/api/assistant/mcp/panel/allow", body: { name: "cursor" } });
    expect(store.mcp.connected).toBe(true); // (the page still takes calls)
  });
});
