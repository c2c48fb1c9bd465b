// A long thread opens with its last page of messages (GET /api/assistant/threads/{id}?last=N)
// and reads the earlier ones a page at a time when asked (`?before=` the first one it holds):
// opening a thread of 3,000 turns costs what opening one of 10 does. The chat holds the pages
// read so far; the server keeps the thread, and a turn sends what is new (sentMessages.ts) with
// the parent's index in the whole thread: where the loaded messages start is kept here.
import type { UIMessage } from "ai";
import type { ServerThread } from "../server/api";
import { threadPath } from "./threadAdapter";

/** Messages in the page a thread opens with: a tall panel's worth of turns, several times over.
 * Not more: while an answer streams, assistant-ui does work for every loaded message on every
 * update (its store rebuilds each message's state), so each one loaded costs on every chunk. */
export const LAST_PAGE = 30;
/** The path of thread `threadId`'s last page (the page it opens with). */
export function lastPagePath(threadId: string): string {
  return threadPath(threadId, `?last=${LAST_PAGE}`);
}
/** Messages in each earlier page read on demand. */
export const PAGE = 100;

type Request = <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
export type ThreadPage = ServerThread & { messages: UIMessage[]; firstIndex?: number };

export class ThreadPages {
  /** How many of the thread's messages come before the first one loaded. */
  private before = 0;
  /** The first message loaded: while the chat starts with it, `before` holds. */
  private firstId: string | null = null;
  loading = false;

  constructor(
    private readonly threadId: string,
    private readonly request: Request,
  ) {}

  /** The thread with its last page of messages. */
  async last(): Promise<ThreadPage> {
    const page = await this.request<ThreadPage>(this.lastPath);
    this.took(page);
    return page;
  }

  /** The path of the thread's last page, for one read before the chat takes it (`took`). */
  get lastPath(): string {
    return lastPagePath(this.threadId);
  }

  /** How many messages the thread has before `messages` (the chat's, from its start). */
  offset(messages: readonly UIMessage[]): number {
    return this.before > 0 && messages[0]?.id === this.firstId ? this.before : 0;
  }

  /** Whether the thread has messages before those of the chat. */
  hasEarlier(messages: readonly UIMessage[]): boolean {
    return this.offset(messages) > 0;
  }

  /** The page before the chat's first message. */
  async earlier(messages: readonly UIMessage[]): Promise<UIMessage[]> {
    const first = messages[0];
    if (!first || !this.hasEarlier(messages)) return [];
    const page = await this.request<ThreadPage>(threadPath(this.threadId, `?last=${PAGE}&before=${encodeURIComponent(first.id)}`));
    this.took(page);
    return page.messages;
  }

  /** Every message before the chat's first one (the whole thread must be sent: a resync). */
  async allBefore(messages: readonly UIMessage[]): Promise<UIMessage[]> {
    const offset = this.offset(messages);
    if (offset === 0) return [];
    const whole = (await this.request<ThreadPage>(threadPath(this.threadId))).messages;
    const at = whole.findIndex((m) => m.id === messages[0]!.id);
    return whole.slice(0, at < 0 ? offset : at);
  }

  /** The chat now starts with `page` (read from `lastPath`). */
  took(page: ThreadPage): void {
    this.before = page.firstIndex ?? 0;
    this.firstId = page.messages[0]?.id ?? null;
  }
}
