import { generateId, isToolUIPart, type UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore, NEW_THREAD } from "./chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer, type ChatRequestBody } from "../../test/fakeServer";
import { comfyRuns } from "../tools/runHistory";
import { graphShot } from "../tools/graphSnapshot";
import { buildTxt2Img, comfyUIRunningP1, createTestApp, DECODE_CAUSE } from "../../test/testing";

afterEach(() => {
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };

function lastToolPart(body: ChatRequestBody | undefined) {
  const last = body?.messages.at(-1);
  return last?.parts.find(isToolUIPart) as (UIMessage["parts"][number] & { state: string; output?: unknown; errorText?: string }) | undefined;
}

function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
}

describe("the chat store", () => {
  it("runs a panel tool, adds its output and resubmits by itself", async () => {
    const server = fakeServer((body) =>
      sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("addNode", { type: "KSampler" }) : textAnswer("Added a KSampler.")),
    );
    vi.stubGlobal("fetch", server.fetch);
    const addNode = vi.fn(async () => ({ ok: true, node: { id: 5 } }));
    const store = new ChatStore({ settings, tools: () => ({ addNode }) });
    const entry = store.entryFor("__LOCALID_1", undefined);

    await entry.chat.sendMessage({ text: "add a sampler" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));

    expect(addNode).toHaveBeenCalledWith({ type: "KSampler" }, { progress: expect.any(Function), detach: expect.any(AbortSignal), approve: expect.any(Function) });
    const [first, second] = server.chatRequests;
    expect(first?.id).toBe(entry.serverId);
    expect(second?.id).toBe(entry.serverId);
    expect(second?.messageId).toBe(second?.messages.at(-1)?.id); // a continuation of the same answer
    expect(lastToolPart(second)).toMatchObject({ state: "output-available", output: { ok: true, node: { id: 5 } } });
    expect(entry.chat.messages).toHaveLength(2);
    expect(textOf(entry.chat.messages.at(-1))).toBe("Added a KSampler.");
    expect(entry.pendingTools).toBe(0);
  });

  it("leaves server tools to the server", async () => {
    const server = fakeServer(() =>
      sseResponse([
        { type: "start" },
        { type: "start-step" },
        { type: "tool-input-available", toolCallId: "s1", toolName: "searchInstalledNodes", input: { query: "upscale" }, providerExecuted: true },
        { type: "tool-output-available", toolCallId: "s1", output: { nodes: [] }, providerExecuted: true },
        { type: "finish-step" },
        ...textAnswer("Nothing found.").slice(1),
      ]),
    );
    vi.stubGlobal("fetch", server.fetch);
    const searchInstalledNodes = vi.fn(async () => ({ ok: true }));
    const store = new ChatStore({ settings, tools: () => ({ searchInstalledNodes }) });
    const entry = store.entryFor("__LOCALID_2", undefined);
    await entry.chat.sendMessage({ text: "find an upscaler" });
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    await new Promise((r) => setTimeout(r, 20));
    expect(searchInstalledNodes).not.toHaveBeenCalled();
    expect(server.chatRequests).toHaveLength(1);
  });

  it("answers an unknown tool with an error so the model can go on", async () => {
    const server = fakeServer((body) =>
      sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("frobnicate", {}) : textAnswer("Sorry.")),
    );
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings, tools: () => ({}) });
    const entry = store.entryFor("__LOCALID_3", undefined);
    await entry.chat.sendMessage({ text: "do it" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(lastToolPart(server.chatRequests[1])).toMatchObject({ state: "output-error", errorText: expect.stringContaining("frobnicate") });
  });

  it("never resubmits a stopped turn, even when a tool finishes afterwards", async () => {
    const server = fakeServer(() => sseResponse(toolCallAnswer("addNode", { type: "KSampler" })));
    vi.stubGlobal("fetch", server.fetch);
    let finish!: (value: unknown) => void;
    const addNode = vi.fn(() => new Promise((resolve) => (finish = resolve)));
    const store = new ChatStore({ settings, tools: () => ({ addNode }) });
    const entry = store.entryFor("__LOCALID_4", undefined);
    await entry.chat.sendMessage({ text: "add" });
    await vi.waitFor(() => expect(addNode).toHaveBeenCalled());
    expect(entry.pendingTools).toBe(1);
    await store.halt(entry);
    finish({ ok: true });
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(server.chatRequests).toHaveLength(1);
    // the output is still recorded, so the thread stays consistent
    expect(entry.chat.messages.at(-1)?.parts.find(isToolUIPart)).toMatchObject({ state: "output-available" });
  });

  it("lets 'answer again' after a Stop run its tools to the end", async () => {
    let calls = 0;
    const server = fakeServer((body) => {
      calls++;
      if (calls === 1) return sseResponse(toolCallAnswer("addNode", {}, "call_a"));
      return sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("addNode", {}, "call_b") : textAnswer("done"));
    });
    vi.stubGlobal("fetch", server.fetch);
    let release: (() => void) | null = null;
    const addNode = vi.fn(() => new Promise((resolve) => {
      if (release === null) release = () => resolve({ ok: true });
      else resolve({ ok: true });
    }));
    const store = new ChatStore({ settings, tools: () => ({ addNode }) });
    const entry = store.entryFor("__LOCALID_r", undefined);
    await entry.chat.sendMessage({ text: "add" });
    await vi.waitFor(() => expect(addNode).toHaveBeenCalledOnce());
    await store.halt(entry);
    release!();
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    await new Promise((r) => setTimeout(r, 20));
    expect(server.chatRequests).toHaveLength(1);
    expect(entry.haltedAfter).not.toBeNull();
    await entry.chat.regenerate();
    await vi.waitFor(() => expect(textOf(entry.chat.messages.at(-1))).toBe("done"));
    expect(server.chatRequests.map((r) => r.trigger)).toEqual(["submit-message", "regenerate-message", "submit-message"]);
  });

  it("stops resubmitting at the step limit", async () => {
    let n = 0;
    const server = fakeServer(() => sseResponse(toolCallAnswer("addNode", {}, `call_${++n}`)));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 3, debugContext: false }, tools: () => ({ addNode: async () => ({ ok: true }) }) });
    const entry = store.entryFor("__LOCALID_5", undefined);
    await entry.chat.sendMessage({ text: "loop" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(3));
    await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
    await new Promise((r) => setTimeout(r, 30));
    expect(server.chatRequests).toHaveLength(3);
  });

  it("shows the server's error text", async () => {
    const server = fakeServer(() =>
      sseResponse([{ type: "start" }, { type: "error", errorText: "Ollama is not reachable at http://127.0.0.1:11434/v1" }]),
    );
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings });
    const entry = store.entryFor("__LOCALID_6", undefined);
    await entry.chat.sendMessage({ text: "hi" });
    await vi.waitFor(() => expect(entry.chat.status).toBe("error"));
    expect(entry.chat.error?.message).toBe("Ollama is not reachable at http://127.0.0.1:11434/v1");
  });

  it("asks for the exact request with the debug switch", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("ok")));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 25, debugContext: true } });
    const entry = store.entryFor("__LOCALID_7", undefined);
    await entry.chat.sendMessage({ text: "hi" });
    expect(server.calls).toContain("POST /api/assistant/chat?debug=context");
  });

  it("keys chats by list id and remote id, and hands a new thread its server id", () => {
    const store = new ChatStore({ settings });
    const fresh = store.entryFor("__LOCALID_8", undefined);
    expect(fresh.known).toBe(false);
    store.addNotice(NEW_THREAD, { kind: "help", title: "Commands" });
    const id = store.serverIdFor("__LOCALID_8");
    expect(id).toBe(fresh.serverId);
    expect(fresh.known).toBe(true);
    expect(store.entryFor("__LOCALID_8", id)).toBe(fresh);
    expect(store.entryFor(id, id)).toBe(fresh);
    // the note written before the first message moved with the thread
    expect(store.noticesOf(id).map((n) => n.title)).toEqual(["Commands"]);
    expect(store.noticesOf(NEW_THREAD)).toEqual([]);
    const listed = store.entryFor("th_server", "th_server");
    expect(listed.serverId).toBe("th_server");
    expect(listed.known).toBe(true);
    store.forget("th_server");
    expect(store.chatOf("th_server")).toBeUndefined();
  });

  it("drops an unused new chat when another new thread starts", () => {
    const store = new ChatStore({ settings });
    const a = store.entryFor("__LOCALID_a", undefined);
    store.entryFor("__LOCALID_b", undefined);
    expect(store.entryFor("__LOCALID_a", undefined)).not.toBe(a);
  });
});

describe("a run the chat stopped waiting for", () => {
  const LOOKED = "ComfyUI_00001_.png [output]: PNG 512×512, all black (the usual sign of a failed VAE decode: NaN values)";
  const at = (timestamp: number) => ({ prompt_id: "p1", timestamp });

  /** ComfyUI with a txt2img graph: it queues p1, whose history is `comfy.history` (none: running). */
  function comfyUI() {
    return comfyUIRunningP1(LOOKED);
  }

  /** The model queues the workflow (with `args`; null: it does not), then answers "ok" to everything. */
  function chat(comfy: ReturnType<typeof comfyUI>, args: Record<string, unknown> | null = {}) {
    const server = fakeServer((body) =>
      sseResponse(args && body.messages.length === 1 ? toolCallAnswer("queueWorkflow", args, "call_run") : textAnswer("ok")),
    );
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings, tools: () => comfy.t.tools, runs: comfyRuns(comfy.t.app) });
    const entry = store.entryFor(`__LOCALID_run_${generateId()}`, undefined);
    const say = async (text: string) => {
      const before = server.chatRequests.length;
      await store.sendMessage(entry, { text });
      await vi.waitFor(() => expect(server.chatRequests.length).toBeGreaterThan(before));
      await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
      return server.chatRequests.at(-1)!.messages.at(-1)!.parts;
    };
    return { server, store, entry, say };
  }

  /** ComfyUI's history entry of p1, ended well: SaveImage#7 saved one file of `prompt`. */
  const ended = (prompt: { output: unknown }) => ({
    prompt: [1, "p1", prompt.output, {}, ["7"]],
    outputs: { 7: { images: [{ filename: "ComfyUI_00001_.png", subfolder: "", type: "output" }] } },
    status: {
      status_str: "success",
      completed: true,
      messages: [["execution_start", at(1_000)], ["execution_cached", { ...at(1_000), nodes: [] }], ["execution_success", at(42_200)]],
    },
  });

  const historyAsked = (comfy: ReturnType<typeof comfyUI>) => comfy.t.api.requests.filter((r) => r.route === "/history/p1").length;

  it("comes with the next message once it has ended, once; not while it runs", async () => {
    const comfy = comfyUI();
    const { server, store, entry, say } = chat(comfy);
    await store.sendMessage(entry, { text: "run it" });
    await vi.waitFor(() => expect(store.canInterrupt("call_run")).toBe(true));
    store.stopWaiting("call_run");
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2));
    expect(lastToolPart(server.chatRequests[1])).toMatchObject({ output: { ok: true, running: true, promptId: "p1" } });
    expect([...entry.unfinishedRuns]).toEqual(["p1"]);

    // still running: the message goes as typed, and the run stays remembered
    expect(await say("is it done?")).toEqual([{ type: "text", text: "is it done?" }]);
    expect([...entry.unfinishedRuns]).toEqual(["p1"]);

    comfy.history = { p1: ended(await comfy.t.app.graphToPrompt()) }; // its SaveImage#7 is after a VAEDecode
    const note = `[Run p1 finished after you stopped waiting: success in 41.2 s; outputs: 7: 1 image; looked: ${LOOKED}]`;
    expect(await say("and now?")).toEqual([{ type: "text", text: "and now?" }, { type: "text", text: note }]);
    expect(entry.chat.messages.at(-2)?.parts).toEqual([{ type: "text", text: "and now?" }, { type: "text", text: note }]); // stored as sent
    expect(entry.unfinishedRuns.size).toBe(0);
    expect(historyAsked(comfy)).toBe(2);

    expect(await say("thanks")).toEqual([{ type: "text", text: "thanks" }]);
    expect(historyAsked(comfy)).toBe(2);
    // the whole thread as the server got it last: the note once, in the message it came with
    const sent = JSON.stringify(server.chatRequests.at(-1)!.messages);
    expect(sent.split("finished after you stopped waiting").length - 1).toBe(1);
  });

  it("names no cause for an all-black file that no decode made (an EmptyImage saved)", async () => {
    const comfy = comfyUI();
    const { entry, say } = chat(comfy, null);
    entry.unfinishedRuns.add("p1");
    const prompt = { "1": { class_type: "EmptyImage", inputs: { width: 512, height: 512, batch_size: 1, color: 0 } }, "7": { class_type: "SaveImage", inputs: { images: ["1", 0] } } };
    comfy.history = { p1: ended({ output: prompt }) };
    const looked = LOOKED.replace(DECODE_CAUSE, "");
    expect(looked).toBe("ComfyUI_00001_.png [output]: PNG 512×512, all black");
    expect(await say("and now?")).toEqual([
      { type: "text", text: "and now?" },
      { type: "text", text: `[Run p1 finished after you stopped waiting: success in 41.2 s; outputs: 7: 1 image; looked: ${looked}]` },
    ]);
    const look = comfy.t.api.requests.find((r) => r.route === "/assistant/outputs/look")!;
    expect(look.body).toEqual({ outputs: ["ComfyUI_00001_.png [output]"] }); // (no file named as decoded)
  });

  it("after a timeout, a failed run comes with the next message as its error, with its node", async () => {
    const comfy = comfyUI();
    const { server, store, entry, say } = chat(comfy, { timeoutSeconds: 1 });
    await store.sendMessage(entry, { text: "run it" });
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2), { timeout: 3_000 });
    expect(lastToolPart(server.chatRequests[1])).toMatchObject({ output: { ok: false, running: true, promptId: "p1" } });
    comfy.history = {
      p1: {
        outputs: {},
        status: {
          status_str: "error",
          completed: false,
          messages: [
            ["execution_start", at(1_000)],
            ["execution_error", { ...at(4_200), node_id: "5", node_type: "KSampler", exception_type: "torch.OutOfMemoryError", exception_message: "CUDA out of memory." }],
          ],
        },
      },
    };
    expect((await say("how did it go?")).map((p) => (p.type === "text" ? p.text : p.type))).toEqual([
      "how did it go?",
      "[Run p1 finished after you stopped waiting: failed in 3.2 s: Execution failed at KSampler#5: torch.OutOfMemoryError: CUDA out of memory.]",
    ]);
    expect(entry.unfinishedRuns.size).toBe(0);
  });

  it("stays remembered when ComfyUI cannot say, and the message still goes", async () => {
    const comfy = comfyUI();
    const { store, entry, say } = chat(comfy, null);
    entry.unfinishedRuns.add("p1");
    const answer = comfy.t.api.handler;
    comfy.t.api.handler = (route, init) => (route === "/history/p1" ? new Response("down", { status: 502 }) : answer(route, init));
    expect(await say("hello")).toEqual([{ type: "text", text: "hello" }]);
    expect([...entry.unfinishedRuns]).toEqual(["p1"]);
    expect(store.fileUrl({ filename: "x.png", subfolder: "", type: "output" })).toBe("/comfy/api/view?filename=x.png&subfolder=&type=output");
  });
});

describe("what the user changed by hand", () => {
  const HEAD = "[Since your last answer the user changed the workflow by hand (keep these changes unless asked): ";

  /** A txt2img graph (5 is its KSampler) and a chat whose model answers "ok", or first calls
   * addNode with `add` when given. */
  function chat(add: Record<string, unknown> | null = null) {
    const t = createTestApp();
    const nodes = buildTxt2Img(t);
    const server = fakeServer((body) =>
      sseResponse(add && body.messages.length === 1 ? toolCallAnswer("addNode", add, "call_add") : textAnswer("ok")),
    );
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings, tools: () => t.tools, snapshot: () => graphShot(t.app) });
    const entry = store.entryFor(`__LOCALID_edits_${generateId()}`, undefined);
    const say = async (text: string) => {
      const before = server.chatRequests.length;
      await store.sendMessage(entry, { text });
      await vi.waitFor(() => expect(server.chatRequests.length).toBeGreaterThan(before));
      await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
      await vi.waitFor(() => expect(entry.pendingTools).toBe(0));
      return server.chatRequests.at(-1)!.messages.at(-1)!.parts;
    };
    const widget = (name: string) => nodes.sampler.widgets!.find((w) => w.name === name)!;
    return { t, nodes, server, store, entry, say, widget };
  }

  it("come with the next message once: a widget change and a link; none before the first answer", async () => {
    const { nodes, server, entry, say, widget } = chat();
    widget("steps").value = 25; // before any answer: no shot to tell it against
    expect(await say("hello")).toEqual([{ type: "text", text: "hello" }]);

    widget("steps").value = 30;
    nodes.latent.disconnectOutput(0);
    nodes.latent.connect(0, nodes.decode, 0);
    const note = `${HEAD}link 4.LATENT → 6.samples; removed link 4.LATENT → 5.latent_image; removed link 5.LATENT → 6.samples; 5 KSampler: steps 25 → 30]`;
    expect(await say("I rewired it")).toEqual([{ type: "text", text: "I rewired it" }, { type: "text", text: note }]);
    expect(entry.chat.messages.at(-2)?.parts).toEqual([{ type: "text", text: "I rewired it" }, { type: "text", text: note }]); // stored as sent

    expect(await say("thanks")).toEqual([{ type: "text", text: "thanks" }]);
    const sent = JSON.stringify(server.chatRequests.at(-1)!.messages);
    expect(sent.split("changed the workflow by hand").length - 1).toBe(1);
  });

  it("leave out what the assistant's own tools changed", async () => {
    const { t, server, entry, say } = chat({ nodeType: "LoraLoader" });
    await say("add a LoRA");
    await vi.waitFor(() => expect(server.chatRequests).toHaveLength(2)); // with the tool's result
    await vi.waitFor(() => expect(entry.chat.status).toBe("ready"));
    expect(t.graph.nodes.map((n) => n.type)).toContain("LoraLoader");
    expect(await say("and now?")).toEqual([{ type: "text", text: "and now?" }]);
  });

  it("are not told against another workflow's graph", async () => {
    const { t, store, entry, say, widget } = chat();
    const tab = t.app.extensionManager.workflow!.activeWorkflow as unknown as { path?: string };
    tab.path = "a.json";
    store.workflows.bindings.set(entry.serverId, { workflow: "a.json", updatedAt: 0, archived: false });
    await say("hello");
    tab.path = "b.json"; // the user is on another tab: its graph is no change of a.json's
    widget("cfg").value = 4;
    expect(await say("this one")).toEqual([{ type: "text", text: "this one" }]);
    tab.path = "a.json";
    widget("cfg").value = 5;
    expect(await say("back")).toEqual([{ type: "text", text: "back" }, { type: "text", text: `${HEAD}5 KSampler: cfg 8 → 5]` }]);
  });
});
