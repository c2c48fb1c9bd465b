// For tests only: the MCP relay's panel routes (mcp_server/panel_routes.py) answered in memory,
// with /api/assistant/tools: the stream the test writes events to, and the results posted.
import { vi } from "vitest";
import { RELAY_PATH } from "../src/runtime/mcpRelay";

/** The relay's routes in memory: the stream the test writes events to, the posted results. */
export function relayServer() {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  const posted: { path: string; body: unknown }[] = [];
  const opened: { url: string; user: string | null }[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const headers = new Headers(init?.headers);
    if (url === "/api/assistant/tools") {
      const tools = ["getWorkflow", "addNode", "removeNodes"].map((name) => ({ name, runs: "panel" }));
      return new Response(JSON.stringify({ tools }), { headers: { "content-type": "application/json" } });
    }
    if (url.startsWith(`${RELAY_PATH}?`)) {
      opened.push({ url, user: headers.get("Comfy-User") });
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
      init?.signal?.addEventListener("abort", () => controller?.error(new DOMException("aborted", "AbortError")));
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    posted.push({ path: url, body: JSON.parse(String(init?.body)) });
    return new Response('{"accepted": true}', { headers: { "content-type": "application/json" } });
  });
  const send = (event: string, data: unknown) => controller!.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
  return { fetch, posted, opened, send };
}

