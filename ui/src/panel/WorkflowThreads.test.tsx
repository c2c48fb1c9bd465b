import "./reactTestEnv";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ComfyApp } from "../comfy";
import { PlaygroundWorkflows } from "../playground/workflows";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer } from "../runtime/fakeServer";
import { Panel } from "./Panel";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** The panel following workflow tabs shaped like ComfyUI's (the playground's emulation). */
function setup() {
  const server = fakeServer((body) => {
    const text = body.messages.at(-1)?.parts.find((p) => p.type === "text");
    return sseResponse(textAnswer(`Answer to ${text && "text" in text ? text.text : "?"}`));
  });
  vi.stubGlobal("fetch", server.fetch);
  const tabs = new PlaygroundWorkflows({ serialize: () => ({}), load: () => {} });
  const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
  store.workflows.follow({ extensionManager: { workflow: tabs } } as unknown as ComfyApp);
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

const group = (name: string) => screen.getByRole("group", { name });

describe("threads that belong to a workflow", () => {
  it("a tab shows its threads first, starts afresh where it has none, and continues its own", async () => {
    const { server, tabs, store } = setup();
    render(<Panel store={store} />);
    await send("hello from A");
    const threadA = store.currentThreadId!;
    await waitFor(() => expect(server.threads.get(threadA)?.workflow).toBe("Unsaved Workflow.json"));
    expect(server.chatRequests[0]?.workflow).toBe("Unsaved Workflow.json");
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
    expect(server.threads.get(threadB)?.workflow).toBe("Unsaved Workflow (2).json");

    await act(() => tabs.openWorkflow(tabs.openWorkflows[0]!)); // back to A
    await screen.findByText("Answer to hello from A");
    expect(store.currentThreadId).toBe(threadA);
    expect(within(group("This workflow")).getByText("hello from A")).toBeTruthy();
    expect(within(group("Other threads")).getByText("hello from B")).toBeTruthy();
    await send("more on A");
    expect(server.chatRequests.at(-1)?.id).toBe(threadA);
    expect(server.chatRequests.at(-1)?.messages).toHaveLength(3);
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
    expect(server.threads.get("th_b")?.workflow).toBe("Unsaved Workflow.json");
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
