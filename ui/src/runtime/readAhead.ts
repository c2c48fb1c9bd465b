// The thread a panel reopens (the one shown before a reload), read ahead: when the panel mounts
// on a remembered thread, the request for its last page (GET /api/assistant/threads/{id}?last=N)
// leaves at once, beside the thread list's, and its answer serves both readers that follow:
// the thread list's metadata of that thread (assistant-ui asks for it before the list is in)
// and the thread's first page (threadHistory.ts). Before, they came one after the other, and the
// metadata was the whole thread (thousands of messages read and parsed for a title).
import type { ServerThread } from "../server/api";
import { lastPagePath } from "./threadPages";
import { threadPath } from "./threadAdapter";

type Request = <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;

/** How long an answer read ahead stays good to take: the panel's start, not longer (another tab
 * may add to the thread meanwhile). */
export const READ_AHEAD_MS = 10_000;

export class ReadAhead {
  private held: { path: string; answer: Promise<unknown>; at: number } | null = null;

  constructor(
    private readonly request: Request,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  /** Read thread `id`'s last page now, for its first reader (once: a read begun stays). */
  start(id: string): void {
    const path = lastPagePath(id);
    if (this.fresh(path)) return;
    const answer = this.request(path);
    answer.catch(() => {}); // (a reader sees the failure; unread, it is nothing)
    this.held = { path, answer, at: this.clock() };
  }

  /** Thread `id`'s metadata: from the page read ahead when there is one, else its last message
   * only (the stored thread's fields come with any page). */
  thread = (id: string): Promise<ServerThread> =>
    (this.fresh(lastPagePath(id)) as Promise<ServerThread> | undefined) ?? this.request(threadPath(id, "?last=1"));

  /** A request that answers the first read of a thread page with the page read ahead (when it is
   * the same path and still fresh); any first read ends the read-ahead. */
  readonly take: Request = <T,>(path: string, init?: { method?: string; body?: unknown }) => {
    const answer = init === undefined ? this.fresh(path) : undefined;
    if (init === undefined) this.held = null;
    return (answer as Promise<T> | undefined) ?? this.request<T>(path, init);
  };

  private fresh(path: string): Promise<unknown> | undefined {
    const held = this.held;
    return held && held.path === path && this.clock() - held.at <= READ_AHEAD_MS ? held.answer : undefined;
  }
}
