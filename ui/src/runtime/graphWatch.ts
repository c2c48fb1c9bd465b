// A change of the graph, told once it has been quiet: the MCP relay reports it to the server
// (mcpRelay.ts), which tells the MCP sessions that subscribed to the workflow.

/** How often the page looks whether its graph changed, and how long a change must be quiet
 * before it is told. */
export const GRAPH_WATCH_MS = 1000;
export const GRAPH_QUIET_MS = 1500;

/** Calls `changed` once `version()` (a value that changes with the graph: the change tracker's
 * state) has changed and then stayed the same for GRAPH_QUIET_MS. Returns the function that
 * stops it. */
export function watchGraph(version: () => unknown, changed: () => void): () => void {
  let last = version();
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const look = setInterval(() => {
    const now = version();
    if (now === last) return;
    last = now;
    clearTimeout(quiet);
    quiet = setTimeout(changed, GRAPH_QUIET_MS);
  }, GRAPH_WATCH_MS);
  return () => {
    clearInterval(look);
    clearTimeout(quiet);
  };
}
