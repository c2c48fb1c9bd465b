import "../../test/reactTestEnv";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, openStream, sseResponse, textAnswer, toolCallAnswer, type FakeServer } from "../../test/fakeServer";
import { Panel } from "./Panel";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };

function setup(
  chat: Parameters<typeof fakeServer>[0],
  tools: Record<string, (input: unknown) => Promise<unknown>> = {},
): { server: FakeServer; store: ChatStore } {
  const server = fakeServer(chat);
  vi.stubGlobal("fetch", server.fetch);
  return { server, store: new ChatStore({ settings: { ...settings }, tools: () => tools }) };
}

const report = {
  model: "qwen3:8b",
  window: { tokens: 8192, source: "settings" },
  budget: 6000,
  tokens: { system: 900, userContext: 0, summary: 400, history: 1500, toolResults: 300, tools: 700, reminders: 0, recalled: 0, documents: 0, reserve: 1024 },
  counts: { kept: 6, digested: 1, summarized: 8, dropped: 0, cut: 0 },
  summary: { covers: 8, fallback: false },
  estimated: 3800,
  exact: true,
  reported: null,
  cachedTokens: null,
  repairs: 0,
  limits: [],
  documents: null,
  recalled: null,
};

const input = () => screen.getByLabelText<HTMLTextAreaElement>("Message");

async function type(text: string) {
  const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
  fireEvent.change(box, { target: { value: text } });
  await waitFor(() => expect(box.value).toBe(text));
}

async function send(text: string) {
  await type(text);
  fireEvent.click(screen.getByRole("button", { name: "Send" }));
}


describe("the panel", () => {
  it("keeps the conversation and the draft across unmount and remount", async () => {
    const { store } = setup(() => sseResponse(textAnswer("Hello from the model.")));
    const first = render(<Panel store={store} />);
    await send("hello there");
    await screen.findByText("Hello from the model.");
    await type("an unsent draft");
    first.unmount();
    expect(screen.queryByText("Hello from the model.")).toBeNull();

    expect(store.currentThreadId).toBeDefined(); // the thread got its server id

    render(<Panel store={store} />);
    await screen.findByText("Hello from the model.");
    expect(screen.getByText("hello there")).toBeTruthy();
    await waitFor(() => expect(input().value).toBe("an unsent draft"));
  });

  it("lets a running answer finish while the tab is closed", async () => {
    const stream = openStream();
    const { store, server } = setup(() => stream.response);
    const first = render(<Panel store={store} />);
    await send("write a poem");
    await waitFor(() => expect(server.chatRequests).toHaveLength(1));
    act(() => {
      stream.send([{ type: "start" }, { type: "start-step" }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "Roses are red" }]);
    });
    await screen.findByText("Roses are red");
    expect(screen.getByRole("button", { name: "Stop the answer" })).toBeTruthy();
    first.unmount();

    // closed: the answer goes on
    stream.send([{ type: "text-delta", id: "t", delta: ", violets are blue" }]);
    await new Promise((r) => setTimeout(r, 10));
    render(<Panel store={store} />);
    await screen.findByText("Roses are red, violets are blue");
    expect(screen.getByRole("button", { name: "Stop the answer" })).toBeTruthy();

    act(() => {
      stream.send([{ type: "text-end", id: "t" }, { type: "finish-step" }, { type: "finish", finishReason: "stop" }]);
      stream.close();
    });
    await screen.findByRole("button", { name: "Send" });
  });

  it("stops at once", async () => {
    const stream = openStream();
    const { store } = setup(() => stream.response);
    render(<Panel store={store} />);
    await send("go");
    act(() => stream.send([{ type: "start" }, { type: "start-step" }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "Working" }]));
    fireEvent.click(await screen.findByRole("button", { name: "Stop the answer" }));
    await screen.findByRole("button", { name: "Send" });
    expect(screen.getByText("Working")).toBeTruthy();
  });

  it("answers slash commands in the panel, without a model call", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("no")));
    render(<Panel store={store} />);
    await type("/");
    const list = await screen.findByRole("listbox", { name: "Commands" });
    expect(within(list).getAllByRole("option").map((o) => o.textContent)).toEqual(
      expect.arrayContaining([expect.stringContaining("/help"), expect.stringContaining("/skill")]),
    );
    await type("/help");
    fireEvent.keyDown(input(), { key: "Enter" });
    await screen.findByText("Commands", { selector: ".cua-notice-title" });
    await type("/whatever");
    fireEvent.keyDown(input(), { key: "Enter" });
    await screen.findByText("Unknown command /whatever");
    expect(server.chatRequests).toHaveLength(0);
    expect(input().value).toBe("");
  });

  it("takes the focus when it opens, but not from the canvas when a run starts", async () => {
    const { store } = setup(() => sseResponse(textAnswer("Done.")));
    const canvas = document.createElement("canvas");
    canvas.tabIndex = 0;
    document.body.appendChild(canvas);
    render(<Panel store={store} />);
    await waitFor(() => expect(document.activeElement).toBe(input()));
    canvas.focus();
    await send("hello"); // a click event that moves no focus, as a run that starts after tools
    await screen.findByText("Done.");
    expect(document.activeElement).toBe(canvas);
    canvas.remove();
  });

  it("completes skill names from the server", async () => {
    const { store } = setup(() => sseResponse(textAnswer("no")));
    render(<Panel store={store} />);
    await waitFor(() => expect(store.skills.map((s) => s.slug)).toEqual(["upscale"]));
    await type("/skill up");
    const option = await screen.findByRole("option", { name: /upscale/ });
    fireEvent.mouseDown(option);
    await waitFor(() => expect(input().value).toBe("/skill upscale "));
  });

  it("sends /skill to the server as the user's text", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("Following the skill.")));
    render(<Panel store={store} />);
    await send("/skill upscale make it 2x");
    await screen.findByText("Following the skill.");
    const last = server.chatRequests[0]?.messages.at(-1);
    expect(last?.parts).toContainEqual({ type: "text", text: "/skill upscale make it 2x" });
  });

  it("lists the server's threads after a reload and loads one's messages", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("no")));
    server.threads.set("th_old", {
      id: "th_old",
      title: "An old chat",
      archived: false,
      updatedAt: 1_700_000_000,
      messages: [
        { id: "m1", role: "user", parts: [{ type: "text", text: "What is a VAE?" }] },
        { id: "m2", role: "assistant", parts: [{ type: "text", text: "It encodes images to latents." }] },
      ],
    });
    render(<Panel store={store} />);
    fireEvent.click(screen.getByRole("button", { name: "Show the threads" }));
    fireEvent.click(await screen.findByText("An old chat"));
    await screen.findByText("It encodes images to latents.");
    expect(store.currentThreadId).toBe("th_old");
  });

  it("shows the server's error in the thread", async () => {
    const { store } = setup(() => new Response(JSON.stringify({ error: "'messages' must be a non-empty list" }), { status: 400 }));
    render(<Panel store={store} />);
    await send("hi");
    await screen.findByText("'messages' must be a non-empty list");
  });

  it("runs panel tools, shows them as cards and resubmits", async () => {
    const addNode = async (input: unknown) => ({ ok: true, node: { id: 7, type: (input as { type: string }).type } });
    const { store, server } = setup(
      (body) =>
        sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("addNode", { type: "KSampler" }) : textAnswer("Done: added node 7.")),
      { addNode },
    );
    render(<Panel store={store} />);
    await send("add a sampler");
    await screen.findByText("Done: added node 7.");
    expect(server.chatRequests).toHaveLength(2);
    const card = screen.getByText("addNode").closest("details");
    expect(card?.getAttribute("data-state")).toBe("done");
    expect(card?.textContent).toContain('"id": 7');
    expect(card?.querySelector("summary")?.getAttribute("aria-label")).toBe("Tool addNode: done");
  });

  it("draws the context gauge from the answer's report, with the shortening marker", async () => {
    const { store } = setup(() => sseResponse(textAnswer("Fine.", undefined, report)));
    render(<Panel store={store} />);
    await send("hi");
    const meter = await screen.findByRole("meter");
    expect(meter.getAttribute("aria-label")).toBe("Context: 3800 of 8192 tokens");
    expect(meter.querySelectorAll(".cua-seg")).toHaveLength(6);
    expect(screen.getByLabelText("8 messages summarized, 1 tool round digested")).toBeTruthy();
    await type("/context");
    fireEvent.keyDown(input(), { key: "Enter" });
    await screen.findByText("Context of the last answer");
    expect(screen.getAllByRole("meter")).toHaveLength(2);
  });

  it("keeps a /context card after the answer it describes: the next question and answer come below it", async () => {
    let turn = 0;
    const { store } = setup(() => sseResponse(textAnswer(++turn === 1 ? "The first answer." : "The second answer.", undefined, report)));
    const { container } = render(<Panel store={store} />);
    await send("first question");
    await screen.findByText("The first answer.");
    await type("/help");
    fireEvent.keyDown(input(), { key: "Enter" });
    await type("/context");
    fireEvent.keyDown(input(), { key: "Enter" });
    await screen.findByText("Context of the last answer");
    await send("second question");
    await screen.findByText("The second answer.");
    const order = [...container.querySelectorAll(".cua-viewport .cua-msg, .cua-viewport .cua-notice")].map(
      (e) => e.querySelector(".cua-notice-title")?.textContent ?? e.textContent?.replace(/copyretry$/, ""),
    );
    expect(order).toEqual(["first question", "The first answer.", expect.stringMatching(/^Commands/), "Context of the last answer", "second question", "The second answer."]);
  });

  it("opens a long thread at its last page; 'Show earlier messages' reads the pages before", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("no")));
    const messages = Array.from({ length: 110 }, (_, i) => ({
      id: `m${i}`,
      role: (i % 2 ? "assistant" : "user") as "assistant" | "user",
      parts: [{ type: "text" as const, text: `message number ${i}` }],
    }));
    server.threads.set("th_long", { id: "th_long", title: "A long chat", archived: false, updatedAt: 1, messages });
    render(<Panel store={store} />);
    fireEvent.click(screen.getByRole("button", { name: "Show the threads" }));
    fireEvent.click(await screen.findByText("A long chat"));
    await screen.findByText("message number 109");
    // (the list is windowed: in jsdom, which lays nothing out, it shows the last messages only)
    const reads = () => server.calls.filter((c) => c.startsWith("GET /api/assistant/threads/th_long?"));
    expect(reads()).toEqual(["GET /api/assistant/threads/th_long?last=30"]);
    expect(screen.queryByText("message number 79")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Show earlier messages" }));
    await waitFor(() => expect(screen.queryByRole("button", { name: "Show earlier messages" })).toBeNull());
    expect(reads()).toEqual(["GET /api/assistant/threads/th_long?last=30", "GET /api/assistant/threads/th_long?last=100&before=m80"]);
    await screen.findByText("message number 109"); // (the view stays at the end)
  }, 20_000); // (slow in jsdom on a busy machine)

  it("reopens the thread shown before a reload with one read of its last page, never the whole thread", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("no")));
    vi.stubGlobal("fetch", server.fetch);
    const messages = Array.from({ length: 110 }, (_, i) => ({
      id: `m${i}`,
      role: (i % 2 ? "assistant" : "user") as "assistant" | "user",
      parts: [{ type: "text" as const, text: `message number ${i}` }],
    }));
    server.threads.set("th_long", { id: "th_long", title: "A long chat", archived: false, updatedAt: 1, messages });
    localStorage.setItem("comfyui-assistant.thread", "th_long"); // (the thread shown before the reload)
    try {
      const store = new ChatStore({ settings: { ...settings }, tools: () => ({}) });
      render(<Panel store={store} />);
      await screen.findByText("message number 109");
      expect(screen.getByText("A long chat")).toBeTruthy(); // (the header's title: the thread's metadata)
      const reads = server.calls.filter((c) => /^GET \/api\/assistant\/threads\/th_long(\?|$)/.test(c));
      expect(reads).toEqual(["GET /api/assistant/threads/th_long?last=30"]);
      expect(store.currentThreadId).toBe("th_long");
    } finally {
      localStorage.removeItem("comfyui-assistant.thread");
    }
  }, 20_000);

  it("renames and deletes threads through the list", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("no")));
    server.threads.set("th_a", { id: "th_a", title: "First", archived: false, updatedAt: 2, messages: [] });
    server.threads.set("th_b", { id: "th_b", title: "Second", archived: false, updatedAt: 1, messages: [] });
    store.confirm = async () => true;
    store.setThreadsOpen(true);
    render(<Panel store={store} />);
    await screen.findByText("First");
    fireEvent.click(screen.getByRole("button", { name: "Rename “First”" }));
    const box = screen.getByLabelText<HTMLInputElement>("Thread title");
    fireEvent.change(box, { target: { value: "Renamed" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await screen.findByText("Renamed");
    await waitFor(() => expect(server.threads.get("th_a")?.title).toBe("Renamed"));
    fireEvent.click(screen.getByRole("button", { name: "Delete “Second”" }));
    await waitFor(() => expect(server.threads.has("th_b")).toBe(false));
    await waitFor(() => expect(screen.queryByText("Second")).toBeNull());
  });

  it("edits the provider settings without ever keeping the key", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("no")));
    render(<Panel store={store} />);
    fireEvent.click(screen.getByRole("button", { name: "Open the settings" }));
    const url = await screen.findByLabelText<HTMLInputElement>("Base URL");
    expect(url.value).toBe("http://127.0.0.1:11434/v1");
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await screen.findByText(/works with qwen3:8b/);
    expect(screen.getByText("2 models offered by the provider")).toBeTruthy();
    const key = screen.getByLabelText<HTMLInputElement>("API key");
    expect(key.type).toBe("password");
    fireEvent.change(key, { target: { value: "sk-secret" } });
    fireEvent.change(screen.getByLabelText("Context window"), { target: { value: "16384" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await screen.findByText("Saved.");
    expect(server.providerPuts).toEqual([{ contextWindow: 16384, apiKey: "sk-secret" }]);
    expect(screen.getByLabelText<HTMLInputElement>("API key").value).toBe("");
    expect(JSON.stringify(localStorage)).not.toContain("sk-secret");
    // the key belongs to that address: moving the base URL elsewhere says it was removed
    fireEvent.change(screen.getByLabelText("Base URL"), { target: { value: "http://elsewhere:1234/v1" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await screen.findByText(/Saved\. The stored API key was for http:\/\/127\.0\.0\.1:11434\/v1 and has been removed/);
    expect(server.provider.apiKeySet).toBe(false);
  });

  it("says which environment settings the server ignores", async () => {
    const { store, server } = setup(() => sseResponse(textAnswer("no")));
    const problem = "LLM_BASE_URL is ignored: the value must not contain a user name or password.";
    server.provider.problems = [problem];
    render(<Panel store={store} />);
    fireEvent.click(screen.getByRole("button", { name: "Open the settings" }));
    expect((await screen.findByRole("alert")).textContent).toBe(problem);
  });

  it("drops the Test verdict once a field changes", async () => {
    const { store } = setup(() => sseResponse(textAnswer("no")));
    render(<Panel store={store} />);
    fireEvent.click(screen.getByRole("button", { name: "Open the settings" }));
    await screen.findByLabelText("Base URL");
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await screen.findByText(/works with qwen3:8b/);
    fireEvent.change(screen.getByLabelText("Model"), { target: { value: "llama3.2" } });
    expect(screen.queryByText(/works with qwen3:8b/)).toBeNull();
  });
});
