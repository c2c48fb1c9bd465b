// The runs a chat stopped waiting for, told with the user's next message (ChatStore.sendMessage):
// which tool output leaves a run behind, which message can carry the note, and the note itself,
// one line per run that has ended since (tools/runHistory.ts writes each line).
import type { Chat } from "@ai-sdk/react";
import type { UIMessage } from "ai";
import type { ToolOutcome } from "./toolRunner";

/** What chat.sendMessage takes: a message (or nothing: a resubmit) and the request's options. */
export type Outgoing = Parameters<Chat<UIMessage>["sendMessage"]>[0];
export type SendOptions = Parameters<Chat<UIMessage>["sendMessage"]>[1];

/** The prompt id of a run a call stopped waiting for (its output `{running: true, promptId}`). */
export function unfinishedRun(outcome: ToolOutcome): string | null {
  const output = ("output" in outcome ? outcome.output : null) as { running?: unknown; promptId?: unknown } | null;
  return output?.running === true && typeof output.promptId === "string" ? output.promptId : null;
}

/** Whether a message can take a note: a user's, in parts or as text with listed files. */
export function canCarryNote(message: Outgoing): boolean {
  if (!message) return false;
  if (message.parts) return (message.role ?? "user") === "user";
  return "text" in message && (message.files === undefined || Array.isArray(message.files));
}

/** The message with the note as its last text part (after the user's words: a "/skill" still
 * starts the message). */
export function withNote(message: NonNullable<Outgoing>, note: string): NonNullable<Outgoing> {
  const part = { type: "text" as const, text: note };
  if (message.parts) return { ...message, parts: [...message.parts, part] };
  const files = Array.isArray(message.files) ? message.files : [];
  const text = "text" in message && message.text ? [{ type: "text" as const, text: message.text }] : [];
  return { parts: [...files, ...text, part], metadata: message.metadata, messageId: message.messageId };
}

/** One line per remembered run that has ended (each then forgotten); null when none has. They
 * are taken out while ComfyUI is asked, so a message sent meanwhile does not repeat them; a run
 * still going, or one ComfyUI could not tell about, stays remembered. */
export async function endedRunsNote(
  unfinished: Set<string>,
  runs: { endedNote(promptId: string): Promise<string | null> },
): Promise<string | null> {
  const ids = [...unfinished];
  if (!ids.length) return null;
  unfinished.clear();
  const notes = await Promise.all(ids.map((id) => runs.endedNote(id).catch(() => null)));
  ids.forEach((id, i) => {
    if (notes[i] === null) unfinished.add(id);
  });
  const ended = notes.filter((note): note is string => note !== null);
  return ended.length ? ended.join("\n") : null;
}
