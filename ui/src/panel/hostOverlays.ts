// ComfyUI's own non-modal dialogs may sit over the bottom panel, where the message box is: on
// frontend 1.27.10 Manager's progress dialog ("Apply Changes", at the bottom of the page, 80%
// wide) opens by itself after an install the assistant ran (the frontend's Manager store hears
// the task events of its own client id). While one covers the message box, the box is lifted
// above it (a bottom margin), so both stay usable; ComfyUI's dialog is left as it is.
import { useEffect, type RefObject } from "react";

/** Dialogs that do not block the page (PrimeVue sets aria-modal from `modal`). */
export const NON_MODAL_DIALOGS = '[role="dialog"]:not([aria-modal="true"])';
/** Room kept between the box and the dialog above which it is lifted (px). */
const GAP = 8;
/** How often the page is looked at (a query, no layout change unless the lift changes). */
const CHECK_MS = 400;

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * How far the box must be lifted (px) to be clear of `dialogs`, given its rectangle now and the
 * lift it has now (the rectangle moved up by it). Dialogs beside it or above where it belongs do
 * not count; the lift is at most `max`.
 */
export function liftFor(box: Box, lift: number, dialogs: Box[], max: number): number {
  const top = box.top + lift;
  const bottom = box.bottom + lift; // where the box belongs without a lift
  let need = 0;
  for (const d of dialogs) {
    const beside = d.right <= box.left || d.left >= box.right;
    if (beside || d.top >= bottom || d.bottom <= top || d.bottom - d.top <= 0) continue;
    need = Math.max(need, bottom - d.top + GAP);
  }
  return Math.min(Math.ceil(need), Math.max(0, Math.floor(max)));
}

/** Keeps the element at `ref` clear of the host page's non-modal dialogs (see above). */
export function useClearOfHostDialogs(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    let lift = 0;
    const check = () => {
      const dialogs = [...document.querySelectorAll<HTMLElement>(NON_MODAL_DIALOGS)]
        .filter((d) => !element.contains(d) && !d.contains(element))
        .map((d) => d.getBoundingClientRect());
      const next = dialogs.length ? liftFor(element.getBoundingClientRect(), lift, dialogs, window.innerHeight / 2) : 0;
      if (next === lift) return;
      lift = next;
      element.style.marginBottom = lift ? `${lift}px` : "";
      if (lift) element.dataset.clearOfDialog = String(lift);
      else delete element.dataset.clearOfDialog;
    };
    const timer = setInterval(check, CHECK_MS);
    return () => {
      clearInterval(timer);
      element.style.marginBottom = "";
    };
  }, [ref]);
}
