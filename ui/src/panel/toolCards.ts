// The tools whose calls have a card of their own, or something under the generic card: each one
// declared in its card's module (a ToolCardSpec); this list only gathers them.
import type { FC } from "react";
import type { ToolCallMessagePartProps } from "@assistant-ui/react";
import { delegateCard } from "./DelegateCard";
import { downloadModelsCard, findMissingCard } from "./InstallCards";
import { queueWorkflowCard } from "./RunOutputs";
import type { ToolCardSpec } from "./toolCard";

export const TOOL_CARDS: readonly ToolCardSpec[] = [delegateCard, findMissingCard, downloadModelsCard, queueWorkflowCard];

const BY_TOOL = new Map(TOOL_CARDS.map((spec) => [spec.tool, spec] as const));

/** What tool `name` declared about its card, if anything. */
export function toolCardOf(name: string): ToolCardSpec | undefined {
  return BY_TOOL.get(name);
}

/** The cards shown instead of the generic one, by tool (assistant-ui's `tools.by_name`). */
export const OWN_CARDS: Record<string, FC<ToolCallMessagePartProps>> = Object.fromEntries(
  TOOL_CARDS.flatMap((spec) => (spec.Card ? [[spec.tool, spec.Card] as const] : [])),
);
