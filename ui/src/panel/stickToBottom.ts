// Following the end of the thread while it grows (an answer streaming, a tool card opening), in
// place of assistant-ui's Viewport auto-scroll. That one read the viewport's scrollHeight after
// every change in the DOM, each read a layout of the page: on a long thread, several seconds of
// each long answer's stream. Here ResizeObservers on the viewport and on what is in it say when a
// size changed, after the browser's own layout (at most once a frame), and the view goes to the
// end if it follows it.
//  - It follows from the start, and again once the view is at the end (scrolled back down, "jump
//    to the latest message", a message sent, another thread shown).
//  - It stops following when the user scrolls up: a wheel turned up, or the scroll position going
//    up while the content did not shrink (keys, the scrollbar, a drag; also while an answer grows
//    below). A row above the view that the list measures moves the position down, never up
//    (MessageList.tsx), so it never reads as the user scrolling away.
import { useAuiEvent, useAuiState } from "@assistant-ui/react";
import { useLayoutEffect, useState, useSyncExternalStore } from "react";

/** Within this many pixels of the end, the view is at the end (a fraction of a pixel of
 * rounding, as assistant-ui's own test). */
const AT_END_PX = 1;

export class StickToBottom {
  private view: HTMLElement | null = null;
  private following = true;
  private atEnd = true;
  private lastTop = 0;
  private lastHeight = 0;
  private readonly listeners = new Set<() => void>();
  private readonly sizes: ResizeObserver | null = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => this.resized());
  private readonly children: MutationObserver | null =
    typeof MutationObserver === "undefined" ? null : new MutationObserver(() => this.observeChildren());

  /** Watch `view` (null: stop watching). */
  attach(view: HTMLElement | null): () => void {
    this.view = view;
    if (!view) return () => {};
    view.addEventListener("scroll", this.scrolled, { passive: true });
    view.addEventListener("wheel", this.wheeled, { passive: true });
    this.observeChildren();
    return () => {
      view.removeEventListener("scroll", this.scrolled);
      view.removeEventListener("wheel", this.wheeled);
      this.children?.disconnect();
      this.sizes?.disconnect();
      this.view = null;
    };
  }

  /** Follow the end again, and go there now. */
  follow = (): void => {
    this.following = true;
    this.toEnd();
  };

  /** Whether the view is at the end (the "jump to the latest message" button hides then). */
  isAtEnd = (): boolean => this.atEnd;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Observe the viewport, its children and theirs (the list's rows: the last one grows while an
   * answer streams, a frame before the list takes its new height), and where children come and go. */
  private observeChildren(): void {
    const view = this.view;
    if (!view || !this.sizes || !this.children) return;
    this.sizes.disconnect();
    this.children.disconnect();
    this.sizes.observe(view);
    this.children.observe(view, { childList: true });
    for (const child of view.children) {
      this.sizes.observe(child);
      this.children.observe(child, { childList: true });
      for (const row of child.children) this.sizes.observe(row);
    }
  }

  /** A size changed: the layout is fresh here, so reading it costs nothing. */
  private resized(): void {
    if (this.following) this.toEnd();
    else this.note();
  }

  private toEnd(): void {
    const view = this.view;
    if (!view) return;
    view.scrollTop = view.scrollHeight;
    this.note();
  }

  /** A wheel turned up over a view that can go up (not a short thread that does not scroll). */
  private readonly wheeled = (e: WheelEvent): void => {
    if (e.deltaY < 0 && this.view && this.view.scrollTop > 0) this.following = false;
  };

  private readonly scrolled = (): void => {
    const view = this.view;
    if (!view) return;
    // Up, with content that did not shrink (which pulls the position up by itself): the user.
    const up = view.scrollTop < this.lastTop && view.scrollHeight >= this.lastHeight;
    this.note();
    if (this.atEnd) this.following = true;
    else if (up) this.following = false;
  };

  /** Record where the view is, and tell the listeners whether it is at the end when that changes. */
  private note(): void {
    const view = this.view;
    if (!view) return;
    const { scrollTop, scrollHeight, clientHeight } = view;
    this.lastTop = scrollTop;
    this.lastHeight = scrollHeight;
    const atEnd = scrollHeight - scrollTop - clientHeight <= AT_END_PX || scrollHeight <= clientHeight;
    if (atEnd === this.atEnd) return;
    this.atEnd = atEnd;
    for (const listener of this.listeners) listener();
  }
}

/** The viewport's follower: attached to `view`, following again when a run starts (the user's
 * message, or the answer going on after its tools) and when another thread is shown. */
export function useStickToBottom(view: HTMLElement | null): StickToBottom {
  const [stick] = useState(() => new StickToBottom());
  useLayoutEffect(() => stick.attach(view), [stick, view]);
  const threadId = useAuiState((s) => s.threadListItem.id);
  useLayoutEffect(() => stick.follow(), [stick, threadId]);
  useAuiEvent("thread.runStart", () => requestAnimationFrame(stick.follow));
  return stick;
}

/** Whether the view is at the end, re-rendering only its reader when that changes. */
export function useAtEnd(stick: StickToBottom): boolean {
  return useSyncExternalStore(stick.subscribe, stick.isAtEnd, stick.isAtEnd);
}
