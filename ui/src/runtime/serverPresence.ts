// Whether ComfyUI's server is there, as its own socket says: `reconnecting` when it went away (a
// restart), `reconnected` when it is back. A request sent meanwhile fails with a console error, so
// what asks the server by itself (the tabs' catch-up, the MCP relay's stream) waits for it instead.

/** ComfyUI's api as far as its socket's events go. */
export interface ServerSocket {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
}

export interface ServerPresence {
  /** Whether the socket said the server went away and not yet that it is back. */
  away(): boolean;
  /** Calls `listener` each time the server is back; returns the stop. */
  onBack(listener: () => void): () => void;
  /** Resolves at once while the server is there; while it is away, once it is back (or
   * `signal` aborts). */
  whenHere(signal: AbortSignal): Promise<void>;
}

/** The presence of the server behind `socket` (one per page: it listens for the page's life).
 * An api without events (the playground's, tests') is always there. */
export function serverPresence(socket?: ServerSocket): ServerPresence {
  let away = false;
  const backs = new Set<() => void>();
  if (typeof socket?.addEventListener === "function") {
    socket.addEventListener("reconnecting", () => {
      away = true;
    });
    socket.addEventListener("reconnected", () => {
      away = false;
      for (const back of [...backs]) back();
    });
  }
  const onBack = (listener: () => void) => {
    backs.add(listener);
    return () => void backs.delete(listener);
  };
  return {
    away: () => away,
    onBack,
    whenHere: (signal) =>
      away && !signal.aborted
        ? new Promise<void>((resolve) => {
            const stop = onBack(() => {
              stop();
              resolve();
            });
            signal.addEventListener("abort", () => (stop(), resolve()), { once: true });
          })
        : Promise.resolve(),
  };
}
