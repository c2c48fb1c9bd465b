// When the chat sends itself again after panel tools ran: the AI SDK's
// `lastAssistantMessageIsCompleteWithToolCalls`, bounded by a step limit per user message and
// by the user's Stop (a stopped turn never resubmits on its own).
import { isToolUIPart, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from "ai";

type Message = Pick<UIMessage, "id" | "role" | "parts">;

/** The id of the newest user message, or null. */
export function lastUserId(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "user") return message.id;
  }
  return null;
}

/** Model calls made for the newest user message: the `step-start` parts after it. */
export function stepsSinceLastUser(messages: readonly Message[]): number {
  let steps = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message || message.role === "user") break;
    for (const part of message.parts) if (part.type === "step-start") steps++;
  }
  return steps;
}

export interface ResubmitState {
  /** Steps allowed per user message. */
  maxSteps: number;
  /** The user message whose turn the user stopped (null: not stopped). */
  haltedAfter: string | null;
}

/** Whether the assistant waits on tool outputs that are all in (the SDK's own rule), a call
 * the user denied counting as answered (the SDK's denied approval: the server tells the model). */
export function toolRoundComplete(messages: readonly Message[]): boolean {
  const answered = messages.map((m) => (m === messages.at(-1) ? { ...m, parts: m.parts.map(asAnswered) } : m));
  return lastAssistantMessageIsCompleteWithToolCalls({ messages: answered as UIMessage[] });
}

/** A call the user answered as the SDK's rule reads an answered one: denied, or a server tool
 * (the server runs it once allowed). */
function asAnswered(part: Message["parts"][number]): Message["parts"][number] {
  if (!isToolUIPart(part) || part.state !== "approval-responded") return part;
  if (part.approval.approved !== false && !part.providerExecuted) return part; // (the panel runs it)
  return { ...part, state: "output-error", errorText: "answered", providerExecuted: false } as unknown as typeof part;
}

export function stepLimitReached(messages: readonly Message[], maxSteps: number): boolean {
  return toolRoundComplete(messages) && stepsSinceLastUser(messages) >= maxSteps;
}

/** The `sendAutomaticallyWhen` rule of every chat. */
export function shouldResubmit(messages: readonly Message[], state: ResubmitState): boolean {
  if (!toolRoundComplete(messages)) return false;
  const user = lastUserId(messages);
  if (state.haltedAfter !== null && state.haltedAfter === user) return false;
  return stepsSinceLastUser(messages) < state.maxSteps;
}
