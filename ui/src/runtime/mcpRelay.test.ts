// The panel's half of the MCP relay: the stream of calls read through fetch with the user's
// header, each call run by the real graph tools (one undo step, the graph kept before the group's
// first edit), its approval asked and answered, a cancel, and reconnecting after a failure.
import { afterEach, describe, expect, it, vi } from "vitest";
import { relayServer } from "../../test/mcpRelayServer";
import { buildTxt2Img, createTestApp } from "../../test/testing";
import { followUser } from "../server/api";
import { GRAPH_QUIET_MS, GRAPH_WATCH_MS } from "./graphWatch";
import { GROUP_PAUSE_MS, McpRelay, RELAY_PATH } from "./mcpRelay";
import { keepStreaming, parseEvents, RECONNECT_MS } from "./mcpStream";
import { PanelTools } from "./panelTools";

afterEach(() => {
  vi.unstubAllGlobals();
  followUser(() => undefined);
});

const CLIENT = { name: "claude-code", version: "2.1.0" };

function setUp(options: { askBeforeEdits?: boolean; now?: () => number; storage?: Storage } = {}) {
  const t = createTestApp();
  const nodes = buildTxt2Img(t);
  t.tracker.reset();
  const server = relayServer();
  vi.stubGlobal("fetch", server.fetch);
  const restores: unknown[][] = [];
  const graph = {
    serialize: () => t.graph.serialize(),
    restore: async (key: string | null, graph: unknown) => {
      restores.push([key, graph]);
      return { ok: true as const, switched: false };
    },
    openInNewTab: async () => undefined,
  };
  const relay = new McpRelay({
    tools: new PanelTools(() => t.tools, () => {}),
    graph,
    workflow: () => ({ key: "workflows/a.json", name: "a.json" }),
    askBeforeEdits: () => options.askBeforeEdits ?? true,
    panelId: "p1",
    ...(options.now ? { now: options.now } : {}),
    ...(options.storage ? { storage: options.storage } : {}),
  });
  void relay.start();
  return { t, nodes, server, relay, restores };
}

describe("parseEvents", () => {
  it("reads named events, skips comments, keeps an unfinished event for later", () => {
    const text = ': connected\n\nevent: call\ndata: {"callId":"c1"}\n\n: keep-alive\n\nevent: cancel\r\ndata: {"callId":"c1"}\r\n\r\nevent: call\ndata: {"ca';
    expect(parseEvents(text)).toEqual({
      events: [
        { event: "call", data: { callId: "c1" } },
        { event: "cancel", data: { callId: "c1" } },
      ],
      rest: 'event: call\ndata: {"ca',
    });
  });
});

describe("the MCP relay in the panel", () => {
  it("opens the stream once, as the page's user, naming its panel and workflow", async () => {
    followUser(() => "alice");
    const { server, relay } = setUp();
    void relay.start(); // (a second start: still one stream)
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    expect(server.opened).toEqual([{ url: `${RELAY_PATH}?panel=p1&workflow=a.json`, user: "alice" }]);
    relay.stop();
    expect(relay.connected).toBe(false);
  });

  it("runs addNode as a chat would: the node is added as one undo step, the output posted, the graph kept first", async () => {
    const { t, server, relay, restores } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    const before = t.graph.nodes.length;
    const snapshot = JSON.stringify(t.graph.serialize());
    server.send("call", { callId: "mcp_1", name: "addNode", input: { nodeType: "EmptyLatentImage" }, client: CLIENT });
    await vi.waitFor(() => expect(server.posted).toHaveLength(1));
    expect(t.graph.nodes).toHaveLength(before + 1);
    const added = t.graph.nodes.at(-1)!;
    expect(added.type).toBe("EmptyLatentImage");
    expect(server.posted[0]!.path).toBe(`${RELAY_PATH}/results`);
    expect(server.posted[0]!.body).toMatchObject({ panel: "p1", callId: "mcp_1", output: { ok: true, nodeId: added.id } });
    expect(t.tracker.undoQueue).toEqual([snapshot]); // one undo step, back to the graph before
    expect(JSON.stringify(relay.groups.get(1)!.before!.graph)).toBe(snapshot); // the group's checkpoint
    expect(relay.lastCheckpoint()?.id).toBe(1);
    expect(await relay.restoreBefore(1)).toEqual({ ok: true, switched: false });
    expect(restores.map(([key, graph]) => [key, JSON.stringify(graph)])).toEqual([["workflows/a.json", snapshot]]);
    expect(relay.restored).toEqual({ ok: true, switched: false });
    expect(relay.calls).toMatchObject([{ callId: "mcp_1", name: "addNode", client: CLIENT, state: "done", group: 1 }]);
  });

  it("keeps the graph once per call group: a pause over a minute starts another", async () => {
    let now = 0;
    const { server, relay } = setUp({ now: () => now });
    const kept = () => [...relay.groups.values()].map((g) => g.before !== undefined);
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    const add = (id: string) => server.send("call", { callId: id, name: "addNode", input: { nodeType: "EmptyLatentImage" }, client: CLIENT });
    add("a");
    await vi.waitFor(() => expect(server.posted).toHaveLength(1));
    now += 5_000;
    server.send("call", { callId: "r", name: "getWorkflow", input: {}, client: CLIENT });
    add("b");
    await vi.waitFor(() => expect(server.posted).toHaveLength(3));
    expect(kept()).toEqual([true]);
    now += GROUP_PAUSE_MS + 1;
    add("c");
    await vi.waitFor(() => expect(server.posted).toHaveLength(4));
    expect(kept()).toEqual([true, true]);
    expect(relay.calls.map((c) => [c.callId, c.group])).toEqual([["a", 1], ["r", 1], ["b", 1], ["c", 2]]);
  });

  it("a removal asks first, marked with the client; Deny posts the user's words and removes nothing", async () => {
    const { t, nodes, server, relay } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    server.send("call", { callId: "mcp_2", name: "removeNodes", input: { nodeIds: [String(nodes.decode.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(relay.calls[0]?.state).toBe("asking"));
    expect(relay.calls[0]).toMatchObject({
      client: CLIENT,
      asking: { kind: "graph-edit", action: "Remove a node from the workflow, with the links that touch it.", nodes: [`VAEDecode#${nodes.decode.id}`] },
    });
    expect(server.posted).toEqual([]);
    relay.respond("mcp_2", false, false, "  keep the decoder ");
    await vi.waitFor(() => expect(server.posted).toHaveLength(1));
    expect(server.posted[0]!.body).toEqual({ panel: "p1", callId: "mcp_2", denied: "keep the decoder" });
    expect(t.graph.getNodeById(nodes.decode.id)).toBeTruthy();
    expect(relay.calls[0]).toMatchObject({ state: "denied" });
    expect(relay.calls[0]!.asking).toBeUndefined();
    expect(relay.lastCheckpoint()).toBeUndefined(); // (kept, but nothing changed: nothing to put back)
  });

  it("Allow runs it; 'always' lets this client's next removal go ahead without asking", async () => {
    const { t, nodes, server, relay } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    server.send("call", { callId: "x", name: "removeNodes", input: { nodeIds: [String(nodes.decode.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(relay.calls[0]?.state).toBe("asking"));
    relay.respond("x", true, true, "");
    await vi.waitFor(() => expect(server.posted).toHaveLength(1));
    expect(server.posted[0]!.body).toEqual({ panel: "p1", callId: "x", output: { ok: true, graph: "root", linksRemoved: 3, removed: [nodes.decode.id] } });
    expect(t.graph.getNodeById(nodes.decode.id)).toBeFalsy();
    server.send("call", { callId: "y", name: "removeNodes", input: { nodeIds: [String(nodes.save.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(server.posted).toHaveLength(2));
    expect(t.graph.getNodeById(nodes.save.id)).toBeFalsy();

    // a Disconnect forgets the "always": after the user allows it again, an edit asks first
    server.send("clients", { clients: [{ id: "s1", ...CLIENT, since: "2026-11-29T03:00:00Z" }], disconnected: [] });
    await vi.waitFor(() => expect(relay.connectedClients).toHaveLength(1));
    await relay.disconnect(relay.connectedClients[0]!);
    expect(server.posted[2]).toEqual({ path: `${RELAY_PATH}/disconnect`, body: { session: "s1" } });
    server.send("call", { callId: "w", name: "removeNodes", input: { nodeIds: [String(nodes.sampler.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(relay.calls.at(-1)?.state).toBe("asking"));
  });

  it("a cancel from the server ends the card: nothing removed, nothing posted", async () => {
    const { t, nodes, server, relay } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    server.send("call", { callId: "z", name: "removeNodes", input: { nodeIds: [String(nodes.decode.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(relay.calls[0]?.state).toBe("asking"));
    server.send("cancel", { callId: "z" });
    await vi.waitFor(() => expect(relay.calls[0]?.state).toBe("cancelled"));
    await new Promise((r) => setTimeout(r, 20));
    expect(server.posted).toEqual([]);
    expect(t.graph.getNodeById(nodes.decode.id)).toBeTruthy();
    expect(relay.calls[0]!.asking).toBeUndefined();
  });

  it("a server tool's question: the card with the server's words; Deny posts the words, Allow posts approved", async () => {
    const { t, server, relay } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    const before = JSON.stringify(t.graph.serialize());
    const action = "Save a new skill “x” to your user skills (5 characters of instructions).";
    server.send("ask", { callId: "s1", name: "createUserSkill", input: { name: "x" }, client: CLIENT, action });
    await vi.waitFor(() => expect(relay.calls[0]?.state).toBe("asking"));
    expect(relay.calls[0]!.asking).toEqual({ kind: "server", action, nodes: [] });
    relay.respond("s1", false, false, " not now ");
    await vi.waitFor(() => expect(server.posted).toHaveLength(1));
    expect(server.posted[0]).toEqual({ path: `${RELAY_PATH}/results`, body: { panel: "p1", callId: "s1", denied: "not now" } });
    server.send("ask", { callId: "s2", name: "createUserSkill", input: { name: "x" }, client: CLIENT, action });
    await vi.waitFor(() => expect(relay.calls[1]?.state).toBe("asking"));
    relay.respond("s2", true, false, "");
    await vi.waitFor(() => expect(server.posted).toHaveLength(2));
    expect(server.posted[1]!.body).toEqual({ panel: "p1", callId: "s2", output: { approved: true } });
    expect(relay.calls.map((c) => c.state)).toEqual(["denied", "allowed"]);
    expect(JSON.stringify(t.graph.serialize())).toBe(before); // (nothing ran in the page)
  });

  it("keeps its 'always', saved graphs and calls across a reload of the page (sessionStorage)", async () => {
    const storage = window.sessionStorage;
    storage.clear();
    const first = setUp({ storage });
    await vi.waitFor(() => expect(first.relay.connected).toBe(true));
    first.server.send("call", { callId: "x", name: "removeNodes", input: { nodeIds: [String(first.nodes.decode.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(first.relay.calls[0]?.state).toBe("asking"));
    first.relay.respond("x", true, true, "");
    await vi.waitFor(() => expect(first.server.posted).toHaveLength(1));
    first.server.send("call", { callId: "y", name: "removeNodes", input: { nodeIds: [String(first.nodes.save.id)] }, client: { name: "other", version: "1" } });
    await vi.waitFor(() => expect(first.relay.calls[1]?.state).toBe("asking")); // (the page reloads while it asks)
    const checkpoint = first.relay.lastCheckpoint();
    await new Promise((r) => setTimeout(r, 10)); // (kept once the changes settle)

    const second = setUp({ storage });
    expect(second.relay.calls.map((c) => [c.callId, c.state])).toEqual([
      ["x", "done"],
      ["y", "cancelled"],
    ]);
    expect(second.relay.lastCheckpoint()).toEqual(checkpoint);
    await vi.waitFor(() => expect(second.relay.connected).toBe(true));
    second.server.send("call", { callId: "z", name: "removeNodes", input: { nodeIds: [String(second.nodes.decode.id)] }, client: CLIENT });
    await vi.waitFor(() => expect(second.server.posted).toHaveLength(1)); // ("always" kept: no card)
    expect(second.relay.calls.at(-1)?.state).toBe("done");
    first.relay.stop();
    second.relay.stop();
    storage.clear();
  });

  it("reports a change of the graph once it has been quiet, as one state post", async () => {
    const { server, relay } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    let version = {};
    const stop = relay.watchGraph(() => version, () => true);
    version = {}; // two edits in a row: one report
    await new Promise((r) => setTimeout(r, GRAPH_WATCH_MS + 100));
    version = {};
    await vi.waitFor(() => expect(server.posted).toHaveLength(1), { timeout: GRAPH_WATCH_MS * 2 + GRAPH_QUIET_MS + 1000 });
    expect(server.posted[0]).toEqual({ path: `${RELAY_PATH}/state`, body: { panel: "p1", workflow: "a.json", active: true, changed: true } });
    await new Promise((r) => setTimeout(r, GRAPH_WATCH_MS + GRAPH_QUIET_MS + 200));
    expect(server.posted).toHaveLength(1); // (no change since: nothing more)
    stop();
  }, 15_000);

  it("an unknown tool gets the runner's error, as a chat's call would", async () => {
    const { server, relay } = setUp();
    await vi.waitFor(() => expect(relay.connected).toBe(true));
    server.send("call", { callId: "u", name: "paintTheCat", input: {}, client: {} });
    await vi.waitFor(() => expect(server.posted).toHaveLength(1));
    expect(server.posted[0]!.body).toEqual({ panel: "p1", callId: "u", errorText: "There is no tool called paintTheCat. Use one of the tools offered." });
    expect(relay.calls[0]).toMatchObject({ state: "failed", client: { name: "", version: "" } });
  });
});

describe("keepStreaming", () => {
  it("opens again after a failure, waiting longer each time; a server without the relay is not asked again", async () => {
    const statuses = [500, 500, 503];
    const fetch = vi.fn(async () => new Response("", { status: statuses.shift() ?? 404 }));
    const waits: number[] = [];
    await keepStreaming(
      { url: () => "/x", fetch, onEvent: () => {}, onOpen: () => {}, sleep: async (ms) => void waits.push(ms) },
      new AbortController().signal,
    );
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(waits).toEqual([RECONNECT_MS[0], RECONNECT_MS[1]]);
  });

  it("a stream that ends is opened again, and the wait starts over", async () => {
    let opens = 0;
    const stop = new AbortController();
    const waits: number[] = [];
    const fetch = vi.fn(async () => {
      if (++opens === 3) stop.abort();
      return opens === 1 ? new Response("", { status: 502 }) : new Response(": connected\n\n", { headers: { "content-type": "text/event-stream" } });
    });
    const open: boolean[] = [];
    await keepStreaming({ url: () => "/x", fetch, onEvent: () => {}, onOpen: (o) => void open.push(o), sleep: async (ms) => void waits.push(ms) }, stop.signal);
    expect(waits).toEqual([RECONNECT_MS[0], RECONNECT_MS[0]]);
    expect(open).toEqual([true, false, true, false]);
  });
});
