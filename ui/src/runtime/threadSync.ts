// The same thread open in two tabs (or windows): one turn at a time in a thread (the server's turn
// lock, core/chat/turn_lock.py), and each tab catches up with the turns the other made.
//
// A turn the server refuses because another answer is being written in the thread (the
// `chat.thread_busy` error chunk) or because the thread moved on since this tab loaded it (409
// `chat.thread_moved_on`) was not stored: its messages leave the chat and the user's words go
// back to the composer (`putBack`), so nothing is lost and nothing unsent is shown as sent. The
// tab then loads the thread as the server has it. An answer continued with the panel's tool
// results after the other tab's turn (`chat.thread_moved_on_kept`) is not continued, but its
// results are kept in it where it stands (core/chat/thread_delta.py).
//
// How a tab learns of new messages: when the page becomes visible or gets the focus, after such a
// refusal, and every few seconds while it is visible, the shown thread's last message is asked
// for (GET …/threads/{id}?last=1: its count and last message, a few hundred bytes); when the chat
// does not hold that message where the server has it, the thread's last page is loaded in its
// place (threadPages.ts), as when the thread is opened. A chat that is answering is left alone.
import type { UIMessage } from "ai";
import { parseServerError } from "../server/api";
import type { ChatEntry } from "./chatTypes";
import { recorded } from "./sentMessages";
import { threadPath } from "./threadAdapter";
import type { ThreadPage } from "./threadPages";

/** The codes of a refused turn that left the thread as it was. */
const REFUSED = new Set(["chat.thread_busy", "chat.thread_moved_on", "chat.thread_moved_on_kept"]);

/** Whether an error of the chat (its message: a stream's errorText or a response's body) is a
 * refused turn of another tab's making. */
export function refusedTurn(error: unknown): boolean {
  const text = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  const code = parseServerError(text).coded?.code;
  return code !== undefined && REFUSED.has(code);
}

/** The user's own words in a message (its first text part: notes the panel adds come after). */
function wordsOf(message: UIMessage): string {
  const part = message.parts.find((p) => p.type === "text");
  return part && part.type === "text" ? part.text : "";
}

/**
 * A refused turn: the server stored none of it. What the panel took as accepted is forgotten, the
 * user messages the server does not have leave the chat with what followed them (the refused
 * answer), and their words are returned (for the composer).
 */
export function withdrawUnsent(entry: ChatEntry): string {
  entry.sent.forgetLast();
  const messages = entry.chat.messages;
  const unsent = entry.sent.newPart(messages)?.messages ?? messages;
  const first = unsent.find((m) => m.role === "user");
  if (!first) return "";
  const cut = messages.indexOf(first);
  const words = messages.slice(cut).filter((m) => m.role === "user").map(wordsOf).filter(Boolean);
  entry.chat.messages = messages.slice(0, cut);
  return words.join("\n\n");
}

type Request = <T>(path: string) => Promise<T>;

/** A stored message's status where it is not complete (an answer being written: "streaming"). */
function statusOf(message: UIMessage | undefined): unknown {
  return (message?.metadata as { status?: unknown } | undefined)?.status;
}

/** Whether the chat holds the thread's last stored message where the server has it, and as far
 * along (one loaded while the other tab's answer was being written is loaded again once done). */
function holdsLast(entry: ChatEntry, page: ThreadPage): boolean {
  const last = page.messages.at(-1);
  if (!last) return true; // (nothing stored yet: nothing to catch up with)
  const messages = entry.chat.messages;
  const held = messages[page.messageCount - 1 - entry.pages.offset(messages)];
  return held?.id === last.id && statusOf(held) === statusOf(last);
}

/**
 * Loads the thread's last page into the chat when the server's thread has moved on from what the
 * chat shows (another tab's turn, a rewind there). False when nothing changed (or the chat is busy).
 */
export async function catchUp(entry: ChatEntry, request: Request, restore: (messages: UIMessage[]) => UIMessage[]): Promise<boolean> {
  const idle = () => entry.known && (entry.chat.status === "ready" || entry.chat.status === "error");
  if (!idle()) return false;
  const probe = await request<ThreadPage>(threadPath(entry.serverId, "?last=1"));
  if (!idle() || holdsLast(entry, probe)) return false;
  const page = await request<ThreadPage>(entry.pages.lastPath);
  if (!idle()) return false; // (a turn began meanwhile: the chat stays as it is, its pages too)
  entry.pages.took(page);
  entry.sent.have(recorded(page.messages ?? []));
  entry.chat.messages = restore(page.messages ?? []);
  return true;
}
