// What the user changed in the workflow by hand, told with their next message (ChatStore
// sendMessage, beside the runs' notes of runNotes.ts): each thread keeps a shot of the graph as
// the assistant's turn left it; the next message carries the changes since (tools/handEdits.ts),
// and the graph as told becomes the shot, so a change is told once.
import type { GraphShot } from "../tools/graphSnapshot";
import { handEditsNote } from "../tools/handEdits";

/** What keeps a thread's shot (a ChatEntry). */
export interface ShotHolder {
  shot: GraphShot | null;
}

/** The note of what changed since the holder's shot, which `now` replaces; null without a shot
 * of this workflow (a new thread, a page reloaded since) or without a change. */
export function editsSince(holder: ShotHolder, now: GraphShot | null): string | null {
  const before = holder.shot;
  if (!now || (before && before.workflow !== now.workflow)) return null;
  holder.shot = now;
  return before ? handEditsNote(before, now) : null;
}

/** Keeps `now` as the graph the assistant's turn left (each answer's end, each panel tool's),
 * unless it is another workflow's than the thread's (`bound`): a turn can end while the user is
 * on another tab. */
export function keepShot(holder: ShotHolder, now: GraphShot | null, bound: string | null | undefined): void {
  if (!now) return;
  if (typeof bound === "string" && now.workflow !== undefined && now.workflow !== bound) return;
  holder.shot = now;
}
