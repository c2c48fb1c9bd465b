import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore } from "./chatStore";
import { editsGraph } from "./checkpoints";
import { fakeServer, sseResponse, textAnswer, type Chunk } from "../../test/fakeServer";

afterEach(() => {
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };

/** One step calling several panel tools at once (as a model may). */
function calls(messageId: string, ...tools: [name: string, id: string][]): Chunk[] {
  return [
    { type: "start", messageId },
    { type: "start-step" },
    ...tools.flatMap(([name, id]) => [
      { type: "tool-input-start", toolCallId: id, toolName: name },
      { type: "tool-input-available", toolCallId: id, toolName: name, input: {} },
    ]),
    { type: "finish-step" },
    { type: "finish", finishReason: "tool-calls" },
  ];
}

/** A graph the tools change, and what happened in which order. */
function workflow() {
  const graph = { nodes: [{ id: 1, type: "CheckpointLoaderSimple" }] as { id: number; type: string }[] };
  const log: string[] = [];
  const edit = (type: string) =>
    vi.fn(async () => {
      log.push(`run ${type}`);
      graph.nodes.push({ id: graph.nodes.length + 1, type });
      return { ok: true };
    });
  const access = {
    serialize: () => {
      log.push("serialize");
      return structuredClone(graph);
    },
    restore: vi.fn(async () => ({ ok: true as const, switched: false })),
    openInNewTab: vi.fn(async () => undefined),
  };
  return { graph, log, access, edit };
}

describe("checkpoints", () => {
  it("names the tools that change the graph", () => {
    expect(["addNode", "removeNodes", "connectNodes", "setWidgetValues", "loadWorkflow"].every(editsGraph)).toBe(true);
    expect(["getWorkflow", "queueWorkflow", "searchInstalledNodes"].some(editsGraph)).toBe(false);
  });

  it("saves the graph before a turn's first edit, once for the whole turn", async () => {
    let step = 0;
    const server = fakeServer(() => {
      step++;
      if (step === 1) return sseResponse(calls("msg_a", ["getWorkflow", "c0"]));
      if (step === 2) return sseResponse(calls("msg_a", ["addNode", "c1"], ["addNode", "c2"]));
      if (step === 3) return sseResponse(calls("msg_a", ["addNode", "c3"]));
      return sseResponse(textAnswer("Done.", "msg_a"));
    });
    vi.stubGlobal("fetch", server.fetch);
    const { graph, log, access, edit } = workflow();
    const tools = { getWorkflow: vi.fn(async () => ({ ok: true })), addNode: edit("KSampler") };
    const store = new ChatStore({ settings, tools: () => tools, graph: access });
    store.workflows.active = "portraits/flux.json";
    const entry = store.entryFor("__LOCALID_cp1", undefined);

    await entry.chat.sendMessage({ text: "add two samplers and connect them" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(4));
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));

    // Kept once, before either addNode of the step ran (then read once to see the first changed
    // it); reading the graph saved nothing.
    expect(log.filter((l) => l.startsWith("run"))).toHaveLength(3);
    expect(log.slice(0, 2)).toEqual(["serialize", "run KSampler"]);
    expect(log.filter((l) => l === "serialize")).toHaveLength(2);
    const posts = server.calls.filter((c) => c.startsWith("POST") && c.includes("/checkpoints"));
    expect(posts).toEqual([`POST /api/assistant/threads/${entry.serverId}/checkpoints`]);
    const saved = server.checkpoints.get(entry.serverId)?.get("msg_a");
    expect(saved).toMatchObject({ workflow: "portraits/flux.json", graph: { nodes: [{ id: 1, type: "CheckpointLoaderSimple" }] } });
    expect(graph.nodes).toHaveLength(4);
    expect([...store.checkpoints.of(entry.serverId).keys()]).toEqual(["msg_a"]);
  });

  it("saves none for a turn whose edits changed nothing: a failed call, a value already set", async () => {
    let step = 0;
    const server = fakeServer(() => {
      step++;
      if (step === 1) return sseResponse(calls("msg_n", ["addNode", "c1"], ["setWidgetValues", "c2"]));
      return sseResponse(textAnswer("Nothing to do.", "msg_n"));
    });
    vi.stubGlobal("fetch", server.fetch);
    const { log, access } = workflow();
    const tools = {
      addNode: vi.fn(async () => ({ ok: false, error: "Unknown node type 'KSamplr'." })),
      setWidgetValues: vi.fn(async () => ({ ok: true, nodeId: 1, values: { ckpt_name: "a.safetensors" } })),
    };
    const store = new ChatStore({ settings, tools: () => tools, graph: access });
    const entry = store.entryFor("__LOCALID_cpn", undefined);
    await entry.chat.sendMessage({ text: "add a sampler" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    expect(tools.addNode).toHaveBeenCalledOnce();
    expect(log).toEqual(["serialize", "serialize", "serialize"]); // kept once, compared after each call
    expect(server.calls.filter((c) => c.startsWith("POST") && c.includes("/checkpoints"))).toEqual([]);
    expect(store.checkpoints.of(entry.serverId).size).toBe(0);
  });

  it("lets the edit run when the checkpoint cannot be saved", async () => {
    let step = 0;
    const server = fakeServer(() => (++step === 1 ? sseResponse(calls("msg_b", ["addNode", "c1"])) : sseResponse(textAnswer("Added.", "msg_b"))));
    const failing = (async (input: RequestInfo | URL, init?: RequestInit) =>
      String(input).includes("/checkpoints") ? new Response('{"error": "the disk is full"}', { status: 507 }) : server.fetch(input, init)) as typeof fetch;
    vi.stubGlobal("fetch", failing);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { graph, access, edit } = workflow();
    const store = new ChatStore({ settings, tools: () => ({ addNode: edit("KSampler") }), graph: access });
    const entry = store.entryFor("__LOCALID_cp2", undefined);
    await entry.chat.sendMessage({ text: "add a sampler" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(graph.nodes).toHaveLength(2);
    expect(store.checkpoints.of(entry.serverId).size).toBe(0);
    expect(String(warn.mock.calls[0]?.[0])).toContain("could not be saved");
    warn.mockRestore();
  });

  it("lists a thread's checkpoints when its messages load", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("hi")));
    vi.stubGlobal("fetch", server.fetch);
    server.threads.set("th_old", { id: "th_old", title: "Old", archived: false, messages: [], updatedAt: 1 });
    server.checkpoints.set("th_old", new Map([["msg_1", { workflow: "a.json", graph: { nodes: [{}, {}] }, createdAt: 1 }]]));
    const store = new ChatStore({ settings, tools: () => ({}) });
    const entry = store.entryFor("__LOCALID_cp3", "th_old");
    const history = store.historyAdapter(entry).withFormat!({} as never);
    await history.load();
    await vi.waitFor(() => expect(store.checkpoints.of("th_old").get("msg_1")).toMatchObject({ workflow: "a.json", nodes: 2 }));
  });
});
