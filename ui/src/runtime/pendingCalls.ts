// What a new message of the user's does to the calls of the answer before it that have no
// result yet. assistant-ui's AI SDK runtime would rewrite every one of them as cancelled
// ("User cancelled tool call by sending a new message."), a call the user denied among them
// when the denial did not resubmit (the step limit, a Stop), which told the model something
// untrue and changed a request already sent. The store does it instead
// (`cancelPendingToolCallsOnSend: false`): a denied call ends "output-denied" with its
// approval (the same result the model was sent), any other call still open is cancelled.
import { isToolUIPart, type UIMessage } from "ai";

export const CANCELLED = "User cancelled tool call by sending a new message.";

type Part = UIMessage["parts"][number];
type ToolPart = Part & { state: string; approval?: { approved?: boolean } };

const FINAL = new Set(["output-available", "output-error", "output-denied"]);

function settled(part: Part): Part {
  if (!isToolUIPart(part)) return part;
  const tool = part as ToolPart;
  if (FINAL.has(tool.state)) return part;
  if (tool.state === "approval-responded" && tool.approval?.approved === false) {
    return { ...part, state: "output-denied" } as Part;
  }
  const { approval: _approval, ...rest } = tool;
  return { ...rest, state: "output-error", errorText: CANCELLED } as Part;
}

/** `messages` with the last answer's open calls settled; the same array when none is open. */
export function settledForNewMessage(messages: UIMessage[]): UIMessage[] {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return messages;
  const parts = last.parts.map(settled);
  if (parts.every((part, i) => part === last.parts[i])) return messages;
  return [...messages.slice(0, -1), { ...last, parts }];
}
