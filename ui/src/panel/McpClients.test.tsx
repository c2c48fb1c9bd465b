import "../../test/reactTestEnv";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ChatStore } from "../runtime/chatStore";
import { StoreContext } from "./context";
import { connectSnippets, McpClients, type McpToken } from "./McpClients";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setLocale("en");
});

const SECRET = "cuamcp_s3cr3t-shown-once";
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The token routes (mcp_server/routes.py) in memory, answering as they do, errors included. */
function tokenRoutes(tokens: McpToken[] = []) {
  const calls: string[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = String(input);
    const method = init?.method ?? "GET";
    calls.push(`${method} ${path}`);
    if (path === "/api/assistant/mcp/tokens" && method === "GET") return json({ tokens });
    if (path === "/api/assistant/mcp/tokens" && method === "POST") {
      const name = String(JSON.parse(String(init?.body)).name).trim();
      if (name.length > 80) return json({ error: "give the token a name of 1 to 80 characters" }, 400);
      const made = { id: `t${tokens.length + 1}`, name, created: "2026-11-29T03:10:00+00:00", lastUsed: null };
      tokens.push(made);
      return json({ ...made, token: SECRET }, 201);
    }
    const id = /^\/api\/assistant\/mcp\/tokens\/(.+)$/.exec(path)?.[1];
    if (id && method === "DELETE") {
      const at = tokens.findIndex((t) => t.id === id);
      if (at < 0) return json({ error: `there is no MCP token '${id}' (revoked already?)` }, 404);
      tokens.splice(at, 1);
      return json({ revoked: id });
    }
    return json({ error: `no route ${method} ${path}` }, 404);
  });
  return { fetch, calls, tokens };
}

function renderWith(store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false })) {
  render(
    <StoreContext.Provider value={store}>
      <McpClients />
    </StoreContext.Provider>,
  );
  return store;
}

const LAPTOP: McpToken = { id: "a1", name: "laptop", created: "2026-11-20T09:30:00+00:00", lastUsed: "2026-11-28T18:05:00+00:00" };

describe("MCP clients in Settings", () => {
  it("writes the endpoint's URL and the config snippets from the page's origin", () => {
    expect(connectSnippets("http://192.168.1.20:8188/?tab=2")).toEqual({
      url: "http://192.168.1.20:8188/api/assistant/mcp",
      claudeCode: "claude mcp add --transport http comfyui-assistant http://192.168.1.20:8188/api/assistant/mcp",
      http: JSON.stringify({ mcpServers: { "comfyui-assistant": { url: "http://192.168.1.20:8188/api/assistant/mcp" } } }, null, 2),
      stdio: JSON.stringify({ mcpServers: { "comfyui-assistant": { command: "python", args: ["-m", "comfyui_assistant", "mcp", "--comfyui", "http://192.168.1.20:8188"] } } }, null, 2),
    });
    vi.stubGlobal("fetch", tokenRoutes().fetch);
    renderWith();
    const url = screen.getByLabelText<HTMLTextAreaElement>("MCP endpoint (Streamable HTTP)");
    expect(url.value).toBe(`${window.location.origin}/api/assistant/mcp`);
    expect(screen.getByLabelText<HTMLTextAreaElement>("Claude Desktop (stdio, claude_desktop_config.json)").value).toContain(`"--comfyui",\n`);
  });

  it("lists the tokens with when each was made and last used", async () => {
    const routes = tokenRoutes([LAPTOP, { id: "b2", name: "studio", created: "2026-11-21T10:00:00+00:00", lastUsed: null }]);
    vi.stubGlobal("fetch", routes.fetch);
    renderWith();
    const list = await screen.findByRole("list");
    await within(list).findByText("studio");
    const items = within(list).getAllByRole("listitem").map((li) => li.textContent);
    expect(items).toEqual([
      `laptopmade ${fmt(LAPTOP.created)} · last used ${fmt(LAPTOP.lastUsed!)}Revoke`,
      `studiomade ${fmt("2026-11-21T10:00:00+00:00")} · last used neverRevoke`,
    ]);
  });

  it("shows a new token once, with a warning and a copy button; Done takes it out of the page", async () => {
    const routes = tokenRoutes();
    vi.stubGlobal("fetch", routes.fetch);
    const writeText = vi.fn(async () => undefined);
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    renderWith();
    await screen.findByText("No tokens yet.");
    fireEvent.change(screen.getByLabelText("New token name"), { target: { value: "  laptop " } });
    fireEvent.click(screen.getByRole("button", { name: "Create token" }));
    const shown = await screen.findByRole("group", { name: "New token “laptop”" });
    expect(within(shown).getByText("Copy it now: you will not see it again. Only its hash is kept.")).toBeTruthy();
    expect(within(shown).getByLabelText<HTMLTextAreaElement>("The token").value).toBe(SECRET);
    fireEvent.click(within(shown).getByRole("button", { name: "Copy: The token" }));
    await within(shown).findByText("copied");
    expect(writeText).toHaveBeenCalledWith(SECRET);
    await screen.findByRole("button", { name: "Revoke “laptop”" });
    expect(screen.getByLabelText<HTMLInputElement>("New token name").value).toBe("");

    fireEvent.click(within(shown).getByRole("button", { name: "Done" }));
    expect(screen.queryByRole("group", { name: "New token “laptop”" })).toBeNull();
    expect(document.body.innerHTML).not.toContain(SECRET);
    expect(JSON.stringify({ ...localStorage, ...sessionStorage })).not.toContain(SECRET);
    expect(routes.calls).toEqual(["GET /api/assistant/mcp/tokens", "POST /api/assistant/mcp/tokens", "GET /api/assistant/mcp/tokens"]);
  });

  it("where the browser refuses to copy, says to copy the selected text by hand", async () => {
    vi.stubGlobal("fetch", tokenRoutes().fetch);
    vi.stubGlobal("navigator", { ...navigator, clipboard: undefined }); // (plain HTTP from another machine)
    renderWith();
    fireEvent.click(screen.getByRole("button", { name: "Copy: MCP endpoint (Streamable HTTP)" }));
    await screen.findByText("The browser did not copy it: the text is selected, copy it with Ctrl+C.");
  });

  it("revokes a token after the user confirms, and not before", async () => {
    const routes = tokenRoutes([LAPTOP]);
    vi.stubGlobal("fetch", routes.fetch);
    const store = renderWith();
    const asked: string[] = [];
    let answer = false;
    store.confirm = async (title, message) => {
      asked.push(`${title} | ${message}`);
      return answer;
    };
    fireEvent.click(await screen.findByRole("button", { name: "Revoke “laptop”" }));
    await waitFor(() => expect(asked).toHaveLength(1));
    expect(asked[0]).toBe("Revoke the token “laptop”? | A client that uses it is refused from its next request. This cannot be undone.");
    expect(routes.calls.filter((c) => c.startsWith("DELETE"))).toEqual([]);
    answer = true;
    fireEvent.click(screen.getByRole("button", { name: "Revoke “laptop”" }));
    await screen.findByText("No tokens yet.");
    expect(routes.calls.filter((c) => c.startsWith("DELETE"))).toEqual(["DELETE /api/assistant/mcp/tokens/a1"]);
  });

  it("shows the routes' errors as they say them", async () => {
    const routes = tokenRoutes([LAPTOP]);
    vi.stubGlobal("fetch", routes.fetch);
    const store = renderWith();
    store.confirm = async () => true;
    fireEvent.change(screen.getByLabelText("New token name"), { target: { value: "x".repeat(81) } });
    fireEvent.click(screen.getByRole("button", { name: "Create token" }));
    expect((await screen.findByRole("alert")).textContent).toBe("give the token a name of 1 to 80 characters");
    routes.tokens.length = 0; // (revoked elsewhere meanwhile)
    fireEvent.click(screen.getByRole("button", { name: "Revoke “laptop”" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("there is no MCP token 'a1' (revoked already?)"));
    await screen.findByText("No tokens yet."); // (the list is read again)
  });

  it("speaks the panel's language", async () => {
    vi.stubGlobal("fetch", tokenRoutes([LAPTOP]).fetch);
    setLocale("de");
    renderWith();
    expect(screen.getByRole("button", { name: "Token erstellen" })).toBeTruthy();
    await screen.findByRole("button", { name: "„laptop“ widerrufen" });
  });
});

function fmt(iso: string): string {
  return new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
}
