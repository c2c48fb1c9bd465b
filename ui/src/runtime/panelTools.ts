// The panel's tools as the store runs them: the graph tools, made once when the first call
// arrives (a failure to make them is logged; each call then answers that they are unavailable),
// and where each tool runs (GET /api/assistant/tools), asked until it answers.
import { requestJson, type ServerToolSpec } from "../server/api";
import type { ToolsFactory } from "./chatTypes";
import type { ToolFunctions, ToolKinds } from "./toolRunner";

export class PanelTools {
  /** Where each tool runs, once GET /api/assistant/tools answered. */
  kinds: ToolKinds | null = null;
  private tools: ToolFunctions | null | undefined;
  private kindsLoad: Promise<ToolKinds | null> | null = null;

  constructor(
    private factory: ToolsFactory | undefined,
    private readonly changed: () => void,
  ) {}

  setFactory(factory: ToolsFactory): void {
    this.factory = factory;
    this.tools = undefined;
  }

  /** The graph tools, made the first time they are asked for. */
  functions(): ToolFunctions | null {
    if (this.tools === undefined) {
      try {
        this.tools = this.factory?.() ?? null;
      } catch (error) {
        console.error("[comfyui-assistant] the graph tools failed to load", error);
        this.tools = null;
      }
    }
    return this.tools;
  }

  /** Which tools run in the panel and which on the server. */
  loadKinds(): Promise<ToolKinds | null> {
    if (!this.kindsLoad) {
      this.kindsLoad = requestJson<{ tools: ServerToolSpec[] }>("/api/assistant/tools").then(
        ({ tools }) => {
          this.kinds = new Map(tools.map((t) => [t.name, t.runs] as const));
          this.changed();
          return this.kinds;
        },
        (error: unknown) => {
          console.warn("[comfyui-assistant] the tool registry is unavailable", error);
          this.kindsLoad = null; // ask again next time
          return null;
        },
      );
    }
    return this.kindsLoad;
  }
}
