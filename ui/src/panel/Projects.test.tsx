import "../../test/reactTestEnv";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer } from "../../test/fakeServer";
import { StoreContext } from "./context";
import { Projects } from "./Projects";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setLocale("en");
});

describe("Projects", () => {
  it("creates a project, adds and removes a document, and puts the chat in it", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("ok")));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
    store.currentThreadId = "t1";
    await server.fetch("/api/assistant/threads", { method: "POST", body: JSON.stringify({ id: "t1" }) });
    render(
      <StoreContext.Provider value={store}>
        <Projects />
      </StoreContext.Provider>,
    );
    fireEvent.change(screen.getByLabelText("New project name"), { target: { value: "Harbour" } });
    fireEvent.click(screen.getByRole("button", { name: "Create" }));
    fireEvent.click(await screen.findByRole("button", { name: /Harbour/ }));
    fireEvent.change(await screen.findByLabelText("Document title"), { target: { value: "Style guide" } });
    fireEvent.change(screen.getByLabelText("Document text"), { target: { value: "Muted teal and amber." } });
    fireEvent.click(screen.getByRole("button", { name: "Add document" }));
    await screen.findByText("Style guide");
    await screen.findByText("1 document · 4 tokens");
    fireEvent.click(screen.getByRole("button", { name: "Use in this chat" }));
    await waitFor(() => expect(server.calls).toContain("PATCH /api/assistant/threads/t1"));
    await screen.findByText("This chat is in Harbour.");
    fireEvent.click(screen.getByRole("button", { name: "Take this chat out" }));
    await screen.findByText("This chat is in no project.");
    fireEvent.click(screen.getByRole("button", { name: "Remove Style guide" }));
    await waitFor(() => expect(screen.queryByText("Style guide")).toBeNull());
    expect(server.calls).toContain("DELETE /api/assistant/projects/1/documents/2");
  });

  it("counts a project's documents and tokens in the panel's language", async () => {
    const server = fakeServer(() => sseResponse(textAnswer("ok")));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
    await server.fetch("/api/assistant/projects", { method: "POST", body: JSON.stringify({ name: "Harbour" }) });
    setLocale("ar");
    render(
      <StoreContext.Provider value={store}>
        <Projects />
      </StoreContext.Provider>,
    );
    expect(screen.getByRole("button", { name: "إنشاء" })).toBeTruthy();
    fireEvent.click(await screen.findByRole("button", { name: /Harbour/ }));
    fireEvent.change(await screen.findByLabelText("عنوان المستند"), { target: { value: "Style guide" } });
    fireEvent.change(screen.getByLabelText("نص المستند"), { target: { value: "Muted teal and amber." } });
    fireEvent.click(screen.getByRole("button", { name: "إضافة مستند" }));
    await screen.findByText("مستند واحد · 4 رموز"); // Arabic's "one" and "few" forms
    act(() => setLocale("zh"));
    await screen.findByText("1 个文档 · 4 个 token");
  });
});
