// The thread's messages, windowed: only the messages in and near the view are in the page
// (@tanstack/react-virtual over assistant-ui's message ids), so a thread of thousands of turns
// costs what its visible messages cost. Each row is one message and the notes after it, keyed by
// the message's id (ThreadPrimitive.Unstable_MessageById): a message that did not change does not
// re-render when another streams in. Heights are measured as rows render and re-measured when
// they change (a tool card opening, an answer streaming); a row above the view that changes height
// moves the scroll position with it, so what the user reads stays put. The view follows the end
// while an answer streams through stickToBottom.ts.
import { ThreadPrimitive, unstable_useThreadMessageIds, useAuiState, type ThreadMessage } from "@assistant-ui/react";
import { defaultRangeExtractor, useVirtualizer, type Range, type Virtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type FC, type RefObject } from "react";
import { messageComponents } from "./Messages";

/** A guess for a row not measured yet: no taller than any row (a one-line question), so a row
 * measured above the view moves the scroll position down, never up (which stickToBottom.ts would
 * take for the user scrolling away from the answer it follows). */
const ESTIMATE = 48;
/** Rows rendered beyond each edge of the view (a short thread is in the page whole). */
const OVERSCAN = 10;
/** The messages shown while the viewport has no size yet. */
const UNMEASURED = 30;
/** What a row costs to mount, counted in characters of text: its message's (markdown is parsed
 * for each answer), and at least ROW_FLOOR (the row's own components). */
const ROW_FLOOR = 1500;
/** What the rows mounted in one browser task may cost: the first render of a thread mounts its
 * last rows (at least one) up to this, which fill the view at its end; the rows above come as
 * many more once each frame is painted, until those the view and its overscan need are in.
 * Mounting them all at once (markdown for each) was one task of 200-500 ms when a long thread
 * opened or the page reloaded. Four ordinary rows a task (2 made more tasks, and reloads no
 * faster); one when it is a long answer (four rows holding two 5,000-word answers were one task
 * of 80-110 ms when the page reloaded). */
const TASK_CHARS = 4 * ROW_FLOOR;
/** Where `el` starts in the content `viewport` scrolls. Not `offsetTop`: that counts from the
 * nearest positioned ancestor, which the viewport is not. In ComfyUI 1.58.1 that is an overlay
 * over the whole canvas, so the list seemed to start some 600 px lower than it does. The
 * virtualizer then took the view for higher up in the list: scrolled to the end, the newest rows
 * (an answer below a few tool cards, more than the overscan) were never rendered. */
function contentTop(el: HTMLElement, viewport: HTMLElement): number {
  const top = el.getBoundingClientRect().top - viewport.getBoundingClientRect().top;
  return Math.round(top - viewport.clientTop + viewport.scrollTop);
}

/** The list's distance from the top of the scrolled content (notes can stand above it), measured
 * when the viewport or the thread's first message changes (an earlier page shown above), not on
 * every render: each measure forces a layout, and the list renders on every streamed chunk. */
function useScrollMargin(
  list: RefObject<HTMLDivElement | null>,
  viewport: HTMLElement | null,
  first: string | undefined,
  rendered: boolean,
  setMargin: (update: (was: number) => number) => void,
): void {
  useLayoutEffect(() => {
    const el = list.current;
    if (!el || !viewport) return;
    const top = contentTop(el, viewport);
    setMargin((was) => (was === top ? was : top));
  }, [list, viewport, first, rendered, setMargin]);
}

/** Open on the last message; come back to it when another thread is shown (once the viewport
 * has a size: before, there is nowhere to scroll). */
function useStartAtBottom(virtualizer: Virtualizer<HTMLElement, Element>, count: number, measured: boolean): void {
  const threadId = useAuiState((s) => s.threadListItem.id);
  const shown = useRef<string | null>(null);
  useLayoutEffect(() => {
    if (count === 0 || !measured || shown.current === threadId) return;
    shown.current = threadId;
    virtualizer.scrollToIndex(count - 1, { align: "end" });
  }, [virtualizer, count, measured, threadId]);
}

/** Runs `run` in the task after the next frame is painted (a frame's animation callbacks run
 * just before it paints), so what was just rendered is on the screen before more work starts:
 * back-to-back tasks let the browser skip frames, and the rows of a reloaded thread's end, mounted
 * first, showed only once every row above them was in. Returns a cancel. */
function afterPaint(run: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const frame = requestAnimationFrame(() => {
    timer = setTimeout(run, 0);
  });
  return () => {
    cancelAnimationFrame(frame);
    clearTimeout(timer);
  };
}

/** What mounting `message`'s row costs (see ROW_FLOOR). A tool card counts little: it is drawn
 * folded. */
function rowCost(message: ThreadMessage | undefined): number {
  let cost = 0;
  for (const part of message?.content ?? []) cost += part.type === "text" || part.type === "reasoning" ? part.text.length : 200;
  return Math.max(ROW_FLOOR, cost);
}

/** How many rows ending before index `end` fit in one task (TASK_CHARS; at least one). */
export function rowsForATask(messages: readonly ThreadMessage[], end: number): number {
  let spent = 0;
  let rows = 0;
  for (let i = end - 1; i >= 0; i--) {
    spent += rowCost(messages[i]);
    if (rows > 0 && spent > TASK_CHARS) break;
    rows++;
  }
  return rows;
}

/** How many rows, counted from the end, a thread's rows may be yet (Infinity: all the virtualizer
 * asks for; null: the first task's), and the range extractor that keeps to it. A thread shown
 * starts with the rows of one task (rowsForATask); each later task, once the frame before it is
 * painted, adds another task's rows until the rows above the view (the overscan) are in. */
function useRowsFromEnd(list: RefObject<Virtualizer<HTMLElement, Element> | null>, messages: readonly ThreadMessage[]): (range: Range) => number[] {
  const threadId = useAuiState((s) => s.threadListItem.id);
  const count = messages.length;
  const [grown, setGrown] = useState<{ threadId: string; rows: number | null }>({ threadId, rows: null });
  // (another thread shown starts again, also one shown before: reopened, it renders anew)
  if (grown.threadId !== threadId) setGrown({ threadId, rows: null });
  const rows = grown.threadId === threadId ? grown.rows : null;
  const latest = useRef(messages);
  latest.current = messages;
  useEffect(() => {
    if (rows === Infinity || count === 0) return;
    const grow = () => {
      const now = latest.current;
      const mounted = rows ?? rowsForATask(now, now.length);
      const range = list.current?.range; // (what the view shows now, its rows measured)
      const needed = range ? now.length - Math.max(0, range.startIndex - OVERSCAN) : now.length;
      // (all rows only once those the view needs are in: the switch then mounts none at once)
      setGrown({ threadId, rows: mounted >= needed ? Infinity : mounted + rowsForATask(now, now.length - mounted) });
    };
    return afterPaint(grow);
  }, [list, threadId, rows, count]);
  return useCallback(
    (range: Range) => {
      const all = defaultRangeExtractor(range);
      const last = rows ?? rowsForATask(latest.current, range.count);
      if (last >= range.count) return all;
      const from = range.count - last; // (the first render is at the top: the end comes first)
      return Array.from({ length: last }, (_, i) => from + i);
    },
    [rows],
  );
}

/** Before the viewport has a size (not laid out yet, or hidden): the last messages, in flow. */
const Unmeasured: FC<{ ids: readonly string[] }> = ({ ids }) => (
  <div className="cua-messages" data-flow="">
    {ids.slice(-UNMEASURED).map((id, i, shown) => (
      <div key={id} className="cua-row" data-last={i === shown.length - 1 || undefined}>
        <ThreadPrimitive.Unstable_MessageById messageId={id} components={messageComponents} />
      </div>
    ))}
  </div>
);

export const MessageList: FC<{ viewport: HTMLElement | null }> = ({ viewport }) => {
  const ids = unstable_useThreadMessageIds() as readonly string[];
  const messages = useAuiState((s) => s.thread.messages); // (the same subscription as the ids')
  const list = useRef<HTMLDivElement>(null);
  const [scrollMargin, setScrollMargin] = useState(0);
  const windowed = useRef<Virtualizer<HTMLElement, Element> | null>(null);
  const rangeExtractor = useRowsFromEnd(windowed, messages);
  const virtualizer = useVirtualizer<HTMLElement, Element>({
    count: ids.length,
    getScrollElement: () => viewport,
    estimateSize: () => ESTIMATE,
    overscan: OVERSCAN,
    getItemKey: (index) => ids[index] ?? index,
    scrollMargin,
    rangeExtractor,
  });
  windowed.current = virtualizer;
  const rows = virtualizer.getVirtualItems();
  useScrollMargin(list, viewport, ids[0], rows.length > 0, setScrollMargin);
  useStartAtBottom(virtualizer, ids.length, rows.length > 0);
  if (rows.length === 0 && ids.length > 0) return <Unmeasured ids={ids} />;
  return (
    <div ref={list} className="cua-messages" style={{ height: virtualizer.getTotalSize() }}>
      {rows.map((row) => (
        <div
          key={row.key}
          ref={virtualizer.measureElement}
          data-index={row.index}
          data-last={row.index === ids.length - 1 || undefined}
          className="cua-row"
          style={{ transform: `translateY(${row.start - scrollMargin}px)` }}
        >
          <ThreadPrimitive.Unstable_MessageById messageId={ids[row.index] ?? ""} components={messageComponents} />
        </div>
      ))}
    </div>
  );
};
