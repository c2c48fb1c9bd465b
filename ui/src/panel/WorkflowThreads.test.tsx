import "../../test/reactTestEnv";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ComfyApp } from "../host/comfy";
import { PlaygroundWorkflows } from "../playground/workflows";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer } from "../../test/fakeServer";
import { keyIn, THREAD_KEY } from "../host/threadKeys";
import { Panel } from "./Panel";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** The panel following workflow tabs shaped like ComfyUI's (the playground's emulation). */
function setup(
  server = fakeServer((body) => {
    const text = body.messages.at(-1)?.parts.find((p) => p.type === "text");
    return sseResponse(textAnswer(`Answer to ${text && "text" in text ? text.text : "?"}`));
  }),
  first = "graph-a",
  tools: (tabs: PlaygroundWorkflows) => Record<string, (input: unknown) => Promise<unknown>> = () => ({}),
) {
  vi.stubGlobal("fetch", server.fetch);
  // The graph each tab shows, with the id ComfyUI gives it and (the first tab's) thread key.
  const graph = {
    shown: { id: "graph-1", extra: { [THREAD_KEY]: first } } as { extra?: Record<string, unknown> },
    get extra() {
      return (graph.shown.extra ??= {});
    },
    serialize: () => structuredClone(graph.shown),
    load: (state: unknown) => void (graph.shown = structuredClone(state) as typeof graph.shown),
  };
  const tabs = new PlaygroundWorkflows(graph);
  const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false, tools: () => tools(tabs) });
  store.workflows.follow({ graph, extensionManager: { workflow: tabs } } as unknown as ComfyApp);
  store.setThreadsOpen(true);
  return { server, tabs, store };
}

async function send(text: string) {
  const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
  fireEvent.change(box, { target: { value: text } });
  await waitFor(() => expect(box.value).toBe(text));
  fireEvent.click(screen.getByRole("button", { name: "Send" }));
  await screen.findByText(`Answer to ${text}`);
}

/** What a thread started on the active tab is bound to: its thread key (threadKeys.ts). */
const activeKey = (tabs: PlaygroundWorkflows) => `unsaved:${keyIn(tabs.activeWorkflow!.activeState)}`;

const group = (name: string) => screen.getByRole("group", { name });

describe("threads that belong to a workflow", () => {
  it("a tab shows its threads first, starts afresh where it has none, and continues its own", async () => {
    const { server, tabs, store } = setup();
    render(<Panel store={store} />);
    await send("hello from A");
    const threadA = store.currentThreadId!;
    await waitFor(() => expect(server.threads.get(threadA)?.workflow).toBe("unsaved:graph-a"));
    expect(server.chatRequests[0]?.workflow).toBe("unsaved:graph-a");
    await waitFor(() => expect(within(group("This workflow")).getByText("hello from A")).toBeTruthy());

    await act(() => tabs.newBlank()); // tab B
    await screen.findByText(/Ask about your workflow/); // a fresh thread
    expect(screen.queryByText("Answer to hello from A")).toBeNull();
    expect(within(group("This workflow")).getByText(/No threads yet/)).toBeTruthy();
    expect(within(group("Other threads")).getByText("hello from A")).toBeTruthy();
    expect(within(group("Other threads")).getByText("Unsaved Workflow")).toBeTruthy(); // where it belongs

    await send("hello from B");
    const threadB = store.currentThreadId!;
    expect(threadB).not.toBe(threadA);
    expect(server.threads.get(threadB)?.workflow).toBe(activeKey(tabs));

    await act(() => tabs.openWorkflow(tabs.openWorkflows[0]!)); // back to A
    await screen.findByText("Answer to hello from A");
    expect(store.currentThreadId).toBe(threadA);
    expect(within(group("This workflow")).getByText("hello from A")).toBeTruthy();
    expect(within(group("Other threads")).getByText("hello from B")).toBeTruthy();
    await send("more on A");
    expect(server.chatRequests.at(-1)?.id).toBe(threadA);
    expect(server.chatRequests.at(-1)?.messages).toHaveLength(3);
  });

  it("a new tab that gets an earlier tab's name starts afresh: threads follow the graph, not the name", async () => {
    const earlier = setup();
    const first = render(<Panel store={earlier.store} />);
    await act(() => earlier.tabs.newBlank()); // "Unsaved Workflow (2)"
    await send("about the fox graph");
    const fox = earlier.store.currentThreadId!;
    first.unmount(); // the session ends (a reload: the unsaved tab is gone, nothing closed it)

    const later = setup(earlier.server, "graph-later"); // the same server, a new page
    render(<Panel store={later.store} />);
    await act(() => later.tabs.newBlank()); // "Unsaved Workflow (2)" again, another graph
    expect(later.tabs.activeWorkflow!.key).toBe("Unsaved Workflow (2).json");
    await screen.findByText(/Ask about your workflow/);
    expect(screen.queryByText("Answer to about the fox graph")).toBeNull();
    await waitFor(() => expect(within(group("Other threads")).getByText("an unsaved workflow")).toBeTruthy()); // the fox thread
    expect(within(group("This workflow")).getByText(/No threads yet/)).toBeTruthy();
    expect(later.store.currentThreadId).not.toBe(fox);
    expect(later.store.workflows.workflowOf(fox)).toBe(earlier.store.workflows.workflowOf(fox));
  });

  it("a workflow the assistant loads opens in a new tab, and the chat goes on there, bound to it", async () => {
    const server = fakeServer((body) =>
      sseResponse(body.messages.at(-1)?.role === "user" ? toolCallAnswer("loadWorkflow", { workflow: { nodes: [] } }) : textAnswer("Loaded it in a new tab.")),
    );
    // As ComfyUI's app.loadGraphData does (tools/loadWorkflow.ts reads it back): a new tab.
    const loadWorkflow = (tabs: PlaygroundWorkflows) => async () => {
      await tabs.openNew({ nodes: [], links: [] });
      return { ok: true, format: "ui", tab: tabs.activeWorkflow!.filename };
    };
    const { tabs, store } = setup(server, "graph-a", (t) => ({ loadWorkflow: loadWorkflow(t) }));
    render(<Panel store={store} />);
    const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
    fireEvent.change(box, { target: { value: "load the portrait workflow" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await screen.findByText("Loaded it in a new tab.");
    const thread = store.currentThreadId!;
    const opened = activeKey(tabs);
    expect(tabs.activeWorkflow!.key).toBe("Unsaved Workflow (2).json");
    await waitFor(() => expect(server.threads.get(thread)?.workflow).toBe(opened)); // moved with it
    expect(within(group("This workflow")).getByText("load the portrait workflow")).toBeTruthy();
    expect(group("This workflow").textContent).toContain("Unsaved Workflow (2)");

    await act(() => tabs.openWorkflow(tabs.openWorkflows[0]!)); // the tab the user was on
    await screen.findByText(/Ask about your workflow/);
    expect(within(group("This workflow")).getByText(/No threads yet/)).toBeTruthy();
    expect(within(group("Other threads")).getByText("load the portrait workflow")).toBeTruthy();
    await act(() => tabs.openWorkflow(tabs.openWorkflows[1]!));
    await screen.findByText("Loaded it in a new tab.");
    expect(store.currentThreadId).toBe(thread);
  });

  it("a thread's menu moves it to this workflow or unbinds it", async () => {
    const { server, store } = setup();
    server.threads.set("th_b", { id: "th_b", title: "Elsewhere", archived: false, updatedAt: 1, messages: [], workflow: "b.json" });
    render(<Panel store={store} />);
    await waitFor(() => expect(within(group("Other threads")).getByText("Elsewhere")).toBeTruthy());
    expect(within(group("Other threads")).getByText("b")).toBeTruthy();

    fireEvent.click(screen.getByRole("button", { name: "Workflow of “Elsewhere”" }));
    fireEvent.click(screen.getByRole("menuitem", { name: "Move to this workflow" }));
    await waitFor(() => expect(within(group("This workflow")).getByText("Elsewhere")).toBeTruthy());
    expect(server.threads.get("th_b")?.workflow).toBe("unsaved:graph-a");
    expect(screen.queryByRole("group", { name: "Other threads" })).toBeNull();

    fireEvent.click(screen.getByRole("button", { name: "Workflow of “Elsewhere”" }));
    expect(screen.queryByRole("menuitem", { name: "Move to this workflow" })).toBeNull(); // it is here already
    fireEvent.click(screen.getByRole("menuitem", { name: "Unbind from its workflow" }));
    await waitFor(() => expect(within(group("Other threads")).getByText("no workflow")).toBeTruthy());
    expect(server.threads.get("th_b")?.workflow).toBeNull();
  });

  it("saving an unsaved tab under a name keeps its threads with it", async () => {
    const { server, tabs, store } = setup();
    render(<Panel store={store} />);
    await send("hello");
    const thread = store.currentThreadId!;
    await act(() => tabs.renameWorkflow(tabs.activeWorkflow!, "workflows/portraits/flux.json"));
    await waitFor(() => expect(server.threads.get(thread)?.workflow).toBe("portraits/flux.json"));
    expect(server.calls).toContain("POST /api/assistant/threads/rebind");
    expect(store.currentThreadId).toBe(thread); // still shown: the same tab
    expect(within(group("This workflow")).getByText("hello")).toBeTruthy();
    expect(group("This workflow").textContent).toContain("flux");
  });

  it("without a workflow API the list is one list, as before", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("ok")));
    vi.stubGlobal("fetch", server.fetch);
    server.threads.set("th_x", { id: "th_x", title: "Old", archived: false, updatedAt: 1, messages: [], workflow: "b.json" });
    const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
    store.workflows.follow({ extensionManager: {} } as unknown as ComfyApp);
    store.setThreadsOpen(true);
    render(<Panel store={store} />);
    await screen.findByText("Old");
    expect(screen.queryByRole("group")).toBeNull();
    expect(screen.queryByRole("button", { name: "Workflow of “Old”" })).toBeNull();
  });
});
