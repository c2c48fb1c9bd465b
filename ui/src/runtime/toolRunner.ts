// Running one panel tool call. The graph tools (ui/src/tools) return `{ok: true, ...}` or
// `{ok: false, error}` and never throw; a throw anyway, an unknown tool or a server tool that
// reached the panel become an error output, so the model always gets an answer and the chat
// never waits forever on a call.

import type { CallOptions } from "../tools";

export type { CallOptions };
export type ToolFunctions = Record<string, (input: unknown, call?: CallOptions) => Promise<unknown>>;
export type ToolKinds = ReadonlyMap<string, "panel" | "server">;
export type ToolOutcome = { output: unknown } | { errorText: string };

export async function runPanelTool(
  name: string,
  input: unknown,
  tools: ToolFunctions | null,
  kinds: ToolKinds | null,
  call?: CallOptions,
): Promise<ToolOutcome> {
  const kind = kinds?.get(name);
  if (kind === "server") {
    return { errorText: `${name} runs on the server, but the server did not run it; try again.` };
  }
  if (kinds && kind === undefined) {
    return { errorText: `There is no tool called ${name}. Use one of the tools offered.` };
  }
  const fn = tools && Object.prototype.hasOwnProperty.call(tools, name) ? tools[name] : undefined;
  if (!fn) {
    return { errorText: `The panel cannot run ${name}: the graph tools are not available here.` };
  }
  try {
    const output = await fn(input ?? {}, call);
    return { output: output === undefined ? { ok: true } : output };
  } catch (error) {
    return { errorText: `${name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Whether a tool's output reports a failure (`{ok: false}`), for the card's colour. */
export function isFailedOutput(output: unknown): boolean {
  return !!output && typeof output === "object" && (output as { ok?: unknown }).ok === false;
}
