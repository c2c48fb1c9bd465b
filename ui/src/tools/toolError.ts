// A tool's expected failure (tools/context.ts hands it on with the rest of the tools' plumbing).

/** An expected failure: the tool wrapper turns it into `{ok: false, error, ...extra}`. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "ToolError";
  }
}
