// The notes the panel shows in a thread and never sends (a command's answer, a rewind's outcome),
// by thread key: each placed after the message that was last when it was noted; notes of one
// group replace each other.
import { generateId } from "ai";
import type { NewNotice, Notice } from "./chatTypes";

const EMPTY: readonly Notice[] = Object.freeze([]);

export class ThreadNotices {
  private readonly notices = new Map<string, Notice[]>();

  constructor(
    private readonly changed: () => void,
    /** The id of the last message of a thread, if it has one. */
    private readonly lastMessage: (key: string) => string | null,
  ) {}

  of(key: string): readonly Notice[] {
    return this.notices.get(key) ?? EMPTY;
  }

  add(key: string, notice: NewNotice): string {
    const id = generateId();
    const after = this.lastMessage(key);
    const kept = notice.group ? this.of(key).filter((n) => n.group !== notice.group) : this.of(key);
    this.notices.set(key, [...kept, { ...notice, id, after }]);
    this.changed();
    return id;
  }

  /** Drops a thread's notes of `group` (a newer rewind makes the earlier ones stale). */
  drop(key: string, group: string): void {
    const kept = this.of(key).filter((n) => n.group !== group);
    if (kept.length === this.of(key).length) return;
    this.keep(key, kept);
  }

  dismiss(key: string, id?: string): void {
    this.keep(key, id === undefined ? [] : this.of(key).filter((n) => n.id !== id));
  }

  /** What was noted under `from` (an unsent thread) goes on under `to` (its server id). */
  carry(from: string, to: string): void {
    const waiting = this.notices.get(from);
    if (!waiting?.length) return;
    this.notices.set(to, [...this.of(to), ...waiting]);
    this.notices.delete(from);
    this.changed();
  }

  forget(key: string): void {
    this.notices.delete(key);
  }

  private keep(key: string, kept: Notice[]): void {
    if (kept.length) this.notices.set(key, kept);
    else this.notices.delete(key);
    this.changed();
  }
}
