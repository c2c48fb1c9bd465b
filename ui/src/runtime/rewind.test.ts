import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ChatStore } from "./chatStore";
import type { RestoreOutcome } from "./checkpoints";
import { fakeServer, sseResponse, textAnswer } from "../../test/fakeServer";
import { branchNote, isRewindNote, rewoundNote } from "./rewindNotes";

afterEach(() => {
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };
const BEFORE = { nodes: [{ id: 1, type: "EmptyImage" }] };

/** A store over a server holding thread th_1 with a checkpoint of msg_a (of workflow flux.json). */
function setup(outcome: RestoreOutcome) {
  const server = fakeServer(() => sseResponse(textAnswer("hi")));
  vi.stubGlobal("fetch", server.fetch);
  server.threads.set("th_1", { id: "th_1", title: "T", archived: false, messages: [], updatedAt: 1 });
  server.checkpoints.set("th_1", new Map([["msg_a", { workflow: "portraits/flux.json", graph: BEFORE, createdAt: 1 }]]));
  const graph = {
    serialize: () => ({ nodes: [] }),
    restore: vi.fn(async (_key: string | null, _graph: unknown) => outcome),
    openInNewTab: vi.fn(async () => "Unsaved Workflow (3)"),
  };
  const store = new ChatStore({ settings, tools: () => ({}), graph });
  return { server, graph, store };
}

describe("rewinding the graph", () => {
  it("restores the checkpoint into its workflow and says Ctrl+Z brings the newer graph back", async () => {
    const { graph, store } = setup({ ok: true, tab: "flux", switched: true });
    const status = await store.rewinds.graph("th_1", "msg_a");
    expect(graph.restore).toHaveBeenCalledWith("portraits/flux.json", BEFORE);
    expect(status).toEqual({
      kind: "done",
      text: "The graph is as it was before this answer. It is in “flux”, shown now. Ctrl+Z on the canvas brings the newer graph back.",
    });
    expect(store.rewinds.statusOf("th_1", "msg_a")).toBe(status);
    setLocale("zh");
    try {
      expect((await store.rewinds.graph("th_1", "msg_a")).text).toBe(
        "工作流已恢复到这条回答之前的样子。它位于“flux”中，现已切换过去。在画布上按 Ctrl+Z 可换回较新的工作流。",
      );
    } finally {
      setLocale("en");
    }
  });

  it("says when the workflow is closed, and opens the graph in a new tab when asked", async () => {
    const { graph, store } = setup({ ok: false, closed: true });
    expect(await store.rewinds.graph("th_1", "msg_a")).toEqual({ kind: "closed", text: "The graph belongs to “flux”, which is not open." });
    expect(await store.rewinds.openInNewTab("th_1", "msg_a")).toEqual({
      kind: "done",
      text: "The graph from before this answer is open in a new tab, “Unsaved Workflow (3)”.",
    });
    expect(graph.openInNewTab).toHaveBeenCalledWith(BEFORE);
  });

  it("says why when the checkpoint cannot be read or restored", async () => {
    const { store } = setup({ ok: false, error: "ComfyUI could not load the checkpoint's graph." });
    expect(await store.rewinds.graph("th_1", "msg_a")).toEqual({
      kind: "error",
      text: "The graph was not restored: ComfyUI could not load the checkpoint's graph.",
    });
    expect(await store.rewinds.graph("th_1", "msg_gone")).toEqual({
      kind: "error",
      text: "The graph was not restored: a checkpoint of message msg_gone in thread th_1 does not exist",
    });
  });

  it("/rewind finds the last answer that changed the graph", async () => {
    const { server, graph, store } = setup({ ok: true, tab: "flux", switched: false });
    server.checkpoints.get("th_1")!.set("msg_c", { workflow: "portraits/flux.json", graph: { nodes: [] }, createdAt: 2 });
    const said = (id: string, role: "user" | "assistant") => ({ id, role, parts: [{ type: "text" as const, text: id }] });
    const messages = [said("u1", "user"), said("msg_a", "assistant"), said("u2", "user"), said("msg_c", "assistant"), said("u3", "user"), said("msg_d", "assistant")];
    server.threads.get("th_1")!.messages = messages;
    await store.checkpoints.load("th_1");
    const target = { serverId: "th_1", chat: { messages } };
    expect(await store.rewinds.last(target, "graph")).toBeNull();
    expect(graph.restore).toHaveBeenCalledWith("portraits/flux.json", { nodes: [] });
    expect(store.noticesOf("th_1").at(-1)).toMatchObject({ kind: "info", title: "Graph rewound" });

    expect(await store.rewinds.last(target, "both")).toBe("u2");
    expect(target.chat.messages.map((m) => m.id)).toEqual(["u1", "msg_a"]);
    expect(store.rewinds.branchesOf("th_1")).toMatchObject([{ number: 1, afterId: "msg_a", messageCount: 4, available: true }]);
    expect(await store.rewinds.last(target, "both")).toBe("u1"); // msg_a: the one before
    expect(target.chat.messages).toEqual([]);
    expect(await store.rewinds.last(target, "conversation")).toBeNull();
    expect(store.noticesOf("th_1").at(-1)).toMatchObject({ kind: "info", title: "Nothing to rewind" });
  });

  it("leaves one current word on rewinds: a newer rewind or return clears the earlier notes and statuses", async () => {
    const { server, store } = setup({ ok: true, tab: "flux", switched: false });
    const said = (id: string, role: "user" | "assistant") => ({ id, role, parts: [{ type: "text" as const, text: id }] });
    const messages = [said("u1", "user"), said("msg_a", "assistant"), said("u2", "user"), said("msg_b", "assistant")];
    server.threads.get("th_1")!.messages = messages;
    server.checkpoints.get("th_1")!.set("msg_b", { workflow: "portraits/flux.json", graph: { nodes: [] }, createdAt: 2 });
    await store.checkpoints.load("th_1");
    const target = store.entryFor("__LOCALID_rw", "th_1"); // (the panel's chat of th_1)
    target.chat.messages = messages;
    store.addNotice("th_1", { kind: "help", title: "Commands" }); // (not a rewind's: it stays)

    await store.rewinds.graph("th_1", "msg_a");
    await store.rewinds.graph("th_1", "msg_b"); // the status under msg_a is stale now
    expect([store.rewinds.statusOf("th_1", "msg_a"), store.rewinds.statusOf("th_1", "msg_b")?.kind]).toEqual([undefined, "done"]);

    await store.rewinds.last(target, "graph");
    await store.rewinds.last(target, "graph");
    expect(store.noticesOf("th_1").map((n) => n.title)).toEqual(["Commands", "Graph rewound"]);

    await store.rewinds.conversation(target, "msg_b"); // thread: u1, msg_a
    expect(store.rewinds.statusOf("th_1", "msg_b")).toBeUndefined();
    expect(target.graphNote).toBeNull(); // (the graph is msg_b's checkpoint already: nothing to tell)
    await store.rewinds.returnTo(target, 1); // back: u1, msg_a, u2, msg_b
    expect(target.graphNote).toBe(branchNote(1));
    expect(branchNote(1)).toBe(
      "[The conversation returned to branch 1, an earlier line of this chat; the workflow was not changed by that: it is as the user's tab " +
        "had it before the return, which may differ from what the messages above describe. Read it (getWorkflow) before relying on it.]",
    );
    expect([isRewindNote(branchNote(1)), isRewindNote(rewoundNote(null)!), isRewindNote("[The conversation was fun]")]).toEqual([true, true, false]);
    const notes = store.noticesOf("th_1");
    expect(notes.map((n) => [n.title, n.after])).toEqual([
      ["Commands", "msg_b"],
      ["Back on branch 1", "msg_b"], // after the thread's last message, the earlier note gone
    ]);
    expect(target.chat.messages.map((m) => m.id)).toEqual(["u1", "msg_a", "u2", "msg_b"]);
  });
});
