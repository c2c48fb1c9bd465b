// A tool call's card, as every card shows it: the call's state, the ONE table of each state's
// mark and words, and what a tool declares about its own card (toolCards.ts lists them; the
// generic card, ToolCard.tsx, shows the rest). A tool's card lives in its own module and says
// there which tool it is for: no generic component names a tool.
import type { ToolCallMessagePartProps } from "@assistant-ui/react";
import type { FC } from "react";
import type { MessageKey } from "../i18n";
import { isFailedOutput } from "../runtime/toolRunner";

export type ToolCardState = "running" | "done" | "failed" | "cancelled" | "denied";

/** Each state's mark (beside the tool's name) and its words (read out, and on a helper's card). */
export const TOOL_CARD_STATES: Readonly<Record<ToolCardState, { mark: string; label: MessageKey }>> = {
  running: { mark: "…", label: "tool.state.running" },
  done: { mark: "✓", label: "tool.state.done" },
  failed: { mark: "✗", label: "tool.state.failed" },
  cancelled: { mark: "–", label: "tool.state.cancelled" },
  denied: { mark: "⊘", label: "tool.state.denied" },
};

/** A tool call's state for its card, from assistant-ui's tool-call part. */
export function toolCardState(part: Pick<ToolCallMessagePartProps, "result" | "isError" | "status" | "approval">): ToolCardState {
  if (part.approval?.approved === false) return "denied";
  if (part.isError) {
    const error = (part.result as { error?: unknown } | undefined)?.error;
    return typeof error === "string" && /cancelled/i.test(error) ? "cancelled" : "failed";
  }
  if (part.result === undefined) return part.status.type === "incomplete" ? "cancelled" : "running";
  return isFailedOutput(part.result) ? "failed" : "done";
}

/** What a tool says about its card, in the tool card's own module. */
export interface ToolCardSpec {
  /** The tool (its registry name) whose calls this is for. */
  tool: string;
  /** A card of its own, shown instead of the generic one. */
  Card?: FC<ToolCallMessagePartProps>;
  /** What the generic card shows under itself for this tool (a run's files, a scan's packs). */
  Below?: FC<{ part: ToolCallMessagePartProps; state: ToolCardState }>;
}
