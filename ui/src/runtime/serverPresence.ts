// Whether ComfyUI's server is there, as its own socket says: `reconnecting` when it went away (a
// restart), `reconnected` when it is back. A request sent meanwhile fails with a console error, so
// what asks again by itself (the MCP relay's stream) waits for the server instead.

/** ComfyUI's api as far as its socket's events go. */
export interface ServerSocket {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
}

/** Resolves at once while the server is there; while it is away, once it is back (or `signal`
 * aborts). An api without events (the playground's, tests') is always there. */
export function serverPresence(socket?: ServerSocket): (signal: AbortSignal) => Promise<void> {
  if (typeof socket?.addEventListener !== "function") return async () => {};
  let away = false;
  let waiting: (() => void)[] = [];
  socket.addEventListener("reconnecting", () => {
    away = true;
  });
  socket.addEventListener("reconnected", () => {
    away = false;
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  });
  return (signal) =>
    away && !signal.aborted
      ? new Promise<void>((resolve) => {
          waiting.push(resolve);
          signal.addEventListener("abort", () => resolve(), { once: true });
        })
      : Promise.resolve();
}
