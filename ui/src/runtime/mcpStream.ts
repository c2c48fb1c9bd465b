// The relay's stream of calls (mcp_server/panel_routes.py): `GET /api/assistant/mcp/panel`, read
// as server-sent events through fetch (an EventSource cannot send the `Comfy-User` header), and
// opened again with a growing pause when it ends. `call` and `cancel` events go to `onEvent`.

/** How long to wait before the next try, by tries that failed in a row (capped). */
export const RECONNECT_MS = [1000, 2000, 5000, 10000, 30000];

export interface StreamEvent {
  event: string;
  data: unknown;
}

/** Splits server-sent events out of `buffer`: the events complete so far and what is left. */
export function parseEvents(buffer: string): { events: StreamEvent[]; rest: string } {
  const events: StreamEvent[] = [];
  const blocks = buffer.replace(/\r\n/g, "\n").split("\n\n");
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue; // (a comment: the keep-alive)
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) continue;
    try {
      events.push({ event, data: JSON.parse(data.join("\n")) });
    } catch {
      console.warn("[comfyui-assistant] the MCP relay sent an event that is not JSON", event);
    }
  }
  return { events, rest };
}

export interface StreamOptions {
  url: () => string;
  fetch: typeof globalThis.fetch;
  onEvent: (event: StreamEvent) => void;
  /** The stream opened (true) or ended (false). */
  onOpen: (open: boolean) => void;
  /** Waits `ms` (setTimeout; the tests pass their own). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Waits while ComfyUI's server is away (a restart: serverPresence.ts), so that no request
   * goes to a server that is down. */
  whenHere?: (signal: AbortSignal) => Promise<void>;
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Keeps the stream open until `signal` aborts. A server without the relay (404, or 503: the
 * `mcp` package is not installed) is not asked again. */
export async function keepStreaming(options: StreamOptions, signal: AbortSignal): Promise<void> {
  const sleep = options.sleep ?? sleepFor;
  let failures = 0;
  while (!signal.aborted) {
    let opened = false;
    await options.whenHere?.(signal);
    if (signal.aborted) break;
    try {
      const response = await options.fetch(options.url(), { signal, headers: { accept: "text/event-stream" } });
      if (response.status === 404 || response.status === 503) {
        console.info(`[comfyui-assistant] no MCP relay on this server (${response.status}): the panel takes no MCP calls`);
        return;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      opened = true;
      failures = 0;
      options.onOpen(true);
      await readEvents(response.body, options.onEvent);
    } catch (error) {
      if (signal.aborted) break;
      console.warn("[comfyui-assistant] the MCP relay stream failed; trying again", error);
    } finally {
      if (opened) options.onOpen(false);
    }
    if (signal.aborted) break;
    await sleep(RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)]!, signal);
    failures++;
  }
}

async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (event: StreamEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const { events, rest } = parseEvents(buffer + decoder.decode(value, { stream: true }));
    buffer = rest;
    for (const event of events) onEvent(event);
  }
}
